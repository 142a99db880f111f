// ValueOf prints what Kafka Connect 4.4's FileStreamSinkTask writes for
// values decoded by JsonConverter (String.valueOf of the Connect value),
// and how Java's UTF-8 decoder (InputStreamReader, as FileStreamSourceTask
// reads) turns bytes into a string. Input: cases.txt, one case per line,
// "<mode><TAB><input>" with mode schemaless|schema (JSON given to
// JsonConverter with schemas.enable false|true) or utf8 (hex bytes).
// Output on stdout: one JSON object per case {"mode","input","output"}
// (utf8 output is the decoded string's UTF-8 bytes in hex).
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.json.JsonConverter;

import java.io.ByteArrayInputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.HexFormat;
import java.util.Map;

public class ValueOf {
    public static void main(String[] args) throws Exception {
        JsonConverter schemaless = new JsonConverter();
        schemaless.configure(Map.of("schemas.enable", "false"), false);
        JsonConverter withSchema = new JsonConverter();
        withSchema.configure(Map.of("schemas.enable", "true"), false);
        ObjectMapper mapper = new ObjectMapper();
        for (String line : Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8)) {
            if (line.isEmpty() || line.startsWith("#")) continue;
            String[] parts = line.split("\t", 2);
            String mode = parts[0], input = parts[1];
            String output;
            switch (mode) {
                case "schemaless":
                case "schema": {
                    JsonConverter c = mode.equals("schema") ? withSchema : schemaless;
                    SchemaAndValue sv = c.toConnectData("t", input.getBytes(StandardCharsets.UTF_8));
                    output = String.valueOf(sv.value());
                    break;
                }
                case "utf8": {
                    byte[] b = HexFormat.of().parseHex(input);
                    Reader r = new InputStreamReader(new ByteArrayInputStream(b), StandardCharsets.UTF_8);
                    StringBuilder sb = new StringBuilder();
                    int ch;
                    while ((ch = r.read()) != -1) sb.append((char) ch);
                    output = HexFormat.of().formatHex(sb.toString().getBytes(StandardCharsets.UTF_8));
                    break;
                }
                default:
                    throw new IllegalArgumentException("unknown mode " + mode);
            }
            ObjectNode o = mapper.createObjectNode();
            o.put("mode", mode);
            o.put("input", input);
            o.put("output", output);
            System.out.println(mapper.writeValueAsString(o));
        }
    }
}
