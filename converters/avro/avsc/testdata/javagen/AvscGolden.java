import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;

/**
 * Golden answers of Apache Avro's Java library for avsc's tests: for each
 * schema in cases.json "schemas", Schema.toString() (or the parse error);
 * for each {"name","reader","writer"} in "compat", the incompatibilities
 * of checkReaderWriterCompatibility(reader, writer).
 */
public class AvscGolden {
  public static void main(String[] args) throws Exception {
    ObjectMapper m = new ObjectMapper();
    m.enable(SerializationFeature.INDENT_OUTPUT);
    JsonNode cases = m.readTree(new File(args[0]));
    ObjectNode out = m.createObjectNode();
    ArrayNode schemas = out.putArray("schemas");
    for (JsonNode c : cases.get("schemas")) {
      ObjectNode o = schemas.addObject();
      o.put("in", c.asText());
      try {
        o.put("out", new Schema.Parser().parse(c.asText()).toString());
      } catch (Exception e) {
        o.put("error", e.getClass().getSimpleName());
      }
    }
    ArrayNode compat = out.putArray("compat");
    for (JsonNode c : cases.get("compat")) {
      ObjectNode o = compat.addObject();
      o.put("name", c.get("name").asText());
      o.put("reader", c.get("reader").asText());
      o.put("writer", c.get("writer").asText());
      Schema reader = new Schema.Parser().parse(c.get("reader").asText());
      Schema writer = new Schema.Parser().parse(c.get("writer").asText());
      ArrayNode inc = o.putArray("incompatibilities");
      SchemaCompatibility.SchemaPairCompatibility r =
          SchemaCompatibility.checkReaderWriterCompatibility(reader, writer);
      for (SchemaCompatibility.Incompatibility i : r.getResult().getIncompatibilities()) {
        ObjectNode io = inc.addObject();
        io.put("type", i.getType().name());
        io.put("location", i.getLocation());
        io.put("message", i.getMessage());
      }
    }
    System.out.println(m.writeValueAsString(out));
  }
}
