// Gen writes the golden files of Fjord's converters from Apache Kafka
// 4.4's own converters (connect-json, connect-api, connect-runtime).
// Run it with gen.sh; it takes the converters/ directory as argument.
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;

public final class Gen {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private Gen() {}

    static String b64(byte[] b) {
        return b == null ? null : Base64.getEncoder().encodeToString(b);
    }

    static String oneLine(String s) {
        return s == null ? "null" : s.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t");
    }

    static void writeJsonl(Path p, List<Map<String, Object>> recs) throws IOException {
        Files.createDirectories(p.getParent());
        StringBuilder b = new StringBuilder();
        for (Map<String, Object> r : recs) b.append(MAPPER.writeValueAsString(r)).append('\n');
        Files.write(p, b.toString().getBytes(StandardCharsets.UTF_8));
    }

    public static void main(String[] args) throws Exception {
        Path root = Path.of(args[0]);
        new JsonGolden(root.resolve("json/testdata/golden")).run();
        new HeaderGolden(root.resolve("header/testdata/golden")).run();
        SimpleGolden.run(root);
    }
}
