// ProtocolGolden prints what Kafka Connect 4.4's own encoders make of a set of
// worker states and assignments (ConnectProtocol for "default",
// IncrementalCooperativeConnectProtocol for "compatible" and "sessioned"),
// and what its decoders make of a few truncated or hand-made buffers, as
// JSON on stdout. Run by ../gen.sh; the Go tests in the package compare
// Fjord's encoder and decoder with every case.
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.*;

import org.apache.kafka.connect.runtime.distributed.ConnectProtocol;
import org.apache.kafka.connect.runtime.distributed.ExtendedAssignment;
import org.apache.kafka.connect.runtime.distributed.ExtendedWorkerState;
import org.apache.kafka.connect.runtime.distributed.IncrementalCooperativeConnectProtocol;
import org.apache.kafka.connect.util.ConnectorTaskId;

public class ProtocolGolden {
    static final List<String> out = new ArrayList<>();

    public static void main(String[] args) {
        String url = "http://127.0.0.1:8083/";

        // Subscriptions (JoinGroup protocol metadata).
        metadataV0("metadata-default", url, 42);
        metadataV0("metadata-default-no-config", "http://worker-2:8083/", -1);
        metadataV1("metadata-compatible-first-join", url, -1, null, false);
        metadataV1("metadata-sessioned-first-join", url, 7, null, true);
        metadataV1("metadata-sessioned-empty", url, 7, ExtendedAssignment.empty(), true);
        metadataV1("metadata-compatible-assigned", "http://10.0.0.7:8083/", 128,
                assignment((short) 1, (short) 0, "connect-1-abc", "http://10.0.0.7:8083/", 128,
                        List.of("orders-sink"), tasks("orders-sink", 0, 1, 2), List.of(), List.of(), 0), false);
        metadataV1("metadata-sessioned-assigned", url, 9000,
                assignment((short) 2, (short) 0, "connect-1-0c6f", url, 8999,
                        List.of("pg-cdc", "s3-sink"), concat(tasks("pg-cdc", 0), tasks("s3-sink", 3, 1)),
                        List.of("datagen"), tasks("datagen", 0, 1), 1500), true);

        // Assignments (SyncGroup).
        assignmentV0("assignment-default", (short) 0, "connect-1-aaaa", url, 17,
                List.of("c1", "c2", "c3"), concat(tasks("c1", 0, 1), tasks("c3", 0), tasks("c4", 2)));
        assignmentV0("assignment-default-config-mismatch", ConnectProtocol.Assignment.CONFIG_MISMATCH,
                "connect-1-aaaa", url, 17, List.of(), List.of());
        List<String> many = new ArrayList<>();
        for (int i = 1; i <= 40; i++) many.add("connector" + i);
        many.add("pg-cdc"); many.add("s3-sink"); many.add("datagen-users");
        many.add("čonnéctor"); many.add("sink-\uD83D\uDE80"); many.add("");
        List<ConnectorTaskId> manyTasks = new ArrayList<>();
        for (String c : many) manyTasks.addAll(tasks(c, 0, 1));
        assignmentV1("assignment-compatible-many", (short) 1, (short) 0, "connect-1-bbbb", url, 4242,
                many, manyTasks, List.of(), List.of(), 0);
        assignmentV1("assignment-sessioned-revocation", (short) 2, (short) 0, "connect-1-cccc", url, 99,
                List.of(), List.of(), List.of("b", "a", "b"), concat(tasks("b", 1, 0), tasks("z", 4)), 0);
        assignmentV1("assignment-sessioned-delay", (short) 2, (short) 0, "connect-2-dddd", "http://w2:8083/", 100,
                List.of("x", "y"), concat(tasks("y", 0), tasks("x", 1, 0)), List.of("q"), List.of(), 300000);
        assignmentV1("assignment-compatible-config-mismatch", (short) 1, ConnectProtocol.Assignment.CONFIG_MISMATCH,
                "connect-1-eeee", url, 5, List.of(), List.of(), List.of(), List.of(), 0);
        List<String> seven = List.of("Aa", "BB", "AaAa", "BBBB", "AaBB", "BBAa", "C#");
        assignmentV1("assignment-colliding-hashes", (short) 1, (short) 0, "l", "u", 1,
                seven, List.of(), List.of(), List.of(), 0);

        // Decoding only: Kafka's V1 schema tolerates missing trailing fields.
        ExtendedAssignment full = assignment((short) 1, (short) 0, "connect-1-ffff", url, 77,
                List.of("a"), tasks("a", 0), List.of("r"), tasks("r", 0), 1000);
        ByteBuffer buf = IncrementalCooperativeConnectProtocol.serializeAssignment(full, false);
        byte[] bytes = new byte[buf.remaining()];
        buf.get(bytes);
        int afterOffset = 2 + 2 + 2 + "connect-1-ffff".length() + 2 + url.length() + 8;
        decodeV1("decode-compatible-no-assignment-fields", Arrays.copyOf(bytes, afterOffset));
        int afterAssigned = afterOffset + 4 + (2 + 1 + 4 + 4 * 2);
        decodeV1("decode-compatible-no-revoked-fields", Arrays.copyOf(bytes, afterAssigned));
        int beforeDelay = bytes.length - 4;
        decodeV1("decode-compatible-no-delay", Arrays.copyOf(bytes, beforeDelay));
        // A future version 3 with an extra trailing field still decodes.
        byte[] v3 = Arrays.copyOf(bytes, bytes.length + 3);
        v3[1] = 3;
        decodeV1("decode-future-version-trailing-bytes", v3);
        // V0 metadata read by the V1 decoder is not possible (no allocation);
        // V1 metadata read by the V0 decoder ignores the allocation.
        ByteBuffer m1 = IncrementalCooperativeConnectProtocol.serializeMetadata(
                new ExtendedWorkerState(url, 3, full), false);
        byte[] mb = new byte[m1.remaining()];
        m1.get(mb);
        ConnectProtocol.WorkerState ws = ConnectProtocol.deserializeMetadata(ByteBuffer.wrap(mb));
        out.add("{\"name\":\"decode-default-reads-compatible-metadata\",\"kind\":\"metadata\",\"protocol\":\"default\",\"decode_only\":true,\"hex\":\""
                + hex(mb) + "\",\"value\":{\"url\":" + str(ws.url()) + ",\"config_offset\":" + ws.offset() + ",\"assignment\":null}}");

        System.out.println("[\n" + String.join(",\n", out) + "\n]");
    }

    static ExtendedAssignment assignment(short version, short error, String leader, String leaderUrl, long offset,
                                         List<String> connectors, List<ConnectorTaskId> tasks,
                                         List<String> revokedConnectors, List<ConnectorTaskId> revokedTasks, int delay) {
        return new ExtendedAssignment(version, error, leader, leaderUrl, offset,
                new ArrayList<>(connectors), new ArrayList<>(tasks),
                new ArrayList<>(revokedConnectors), new ArrayList<>(revokedTasks), delay);
    }

    static void metadataV0(String name, String url, long offset) {
        ByteBuffer b = ConnectProtocol.serializeMetadata(new ConnectProtocol.WorkerState(url, offset));
        out.add("{\"name\":" + str(name) + ",\"kind\":\"metadata\",\"protocol\":\"default\",\"hex\":\"" + hex(b)
                + "\",\"value\":{\"url\":" + str(url) + ",\"config_offset\":" + offset + ",\"assignment\":null}}");
    }

    static void metadataV1(String name, String url, long offset, ExtendedAssignment a, boolean sessioned) {
        ByteBuffer b = IncrementalCooperativeConnectProtocol.serializeMetadata(new ExtendedWorkerState(url, offset, a), sessioned);
        ExtendedAssignment shown = a == ExtendedAssignment.empty() ? null : a;
        out.add("{\"name\":" + str(name) + ",\"kind\":\"metadata\",\"protocol\":\"" + (sessioned ? "sessioned" : "compatible")
                + "\",\"hex\":\"" + hex(b) + "\",\"value\":{\"url\":" + str(url) + ",\"config_offset\":" + offset
                + ",\"assignment\":" + json(shown) + "}" + (a == ExtendedAssignment.empty() ? ",\"empty_assignment\":true" : "") + "}");
    }

    static void assignmentV0(String name, short error, String leader, String leaderUrl, long offset,
                             List<String> connectors, List<ConnectorTaskId> tasks) {
        ConnectProtocol.Assignment a = new ConnectProtocol.Assignment(error, leader, leaderUrl, offset,
                new ArrayList<>(connectors), new ArrayList<>(tasks));
        ByteBuffer b = ConnectProtocol.serializeAssignment(a);
        out.add("{\"name\":" + str(name) + ",\"kind\":\"assignment\",\"protocol\":\"default\",\"hex\":\"" + hex(b)
                + "\",\"value\":" + json(assignment((short) 0, error, leader, leaderUrl, offset, connectors, tasks,
                List.of(), List.of(), 0)) + "}");
    }

    static void assignmentV1(String name, short version, short error, String leader, String leaderUrl, long offset,
                             List<String> connectors, List<ConnectorTaskId> tasks,
                             List<String> revokedConnectors, List<ConnectorTaskId> revokedTasks, int delay) {
        ExtendedAssignment a = assignment(version, error, leader, leaderUrl, offset, connectors, tasks,
                revokedConnectors, revokedTasks, delay);
        ByteBuffer b = IncrementalCooperativeConnectProtocol.serializeAssignment(a, version >= 2);
        out.add("{\"name\":" + str(name) + ",\"kind\":\"assignment\",\"protocol\":\"" + (version >= 2 ? "sessioned" : "compatible")
                + "\",\"hex\":\"" + hex(b) + "\",\"value\":" + json(a) + "}");
    }

    static void decodeV1(String name, byte[] bytes) {
        ExtendedAssignment a = IncrementalCooperativeConnectProtocol.deserializeAssignment(ByteBuffer.wrap(bytes));
        out.add("{\"name\":" + str(name) + ",\"kind\":\"assignment\",\"protocol\":\"compatible\",\"decode_only\":true,\"hex\":\""
                + hex(bytes) + "\",\"value\":" + json(a) + "}");
    }

    static List<ConnectorTaskId> tasks(String connector, int... ids) {
        List<ConnectorTaskId> l = new ArrayList<>();
        for (int id : ids) l.add(new ConnectorTaskId(connector, id));
        return l;
    }

    @SafeVarargs
    static List<ConnectorTaskId> concat(List<ConnectorTaskId>... ls) {
        List<ConnectorTaskId> l = new ArrayList<>();
        for (List<ConnectorTaskId> x : ls) l.addAll(x);
        return l;
    }

    static String json(ExtendedAssignment a) {
        if (a == null) return "null";
        return "{\"version\":" + a.version() + ",\"error\":" + a.error() + ",\"leader\":" + str(a.leader())
                + ",\"leader_url\":" + str(a.leaderUrl()) + ",\"config_offset\":" + a.offset()
                + ",\"connectors\":" + strs(a.connectors()) + ",\"tasks\":" + taskList(a.tasks())
                + ",\"revoked_connectors\":" + strs(a.revokedConnectors()) + ",\"revoked_tasks\":" + taskList(a.revokedTasks())
                + ",\"delay\":" + a.delay() + "}";
    }

    static String strs(Collection<String> c) {
        StringJoiner j = new StringJoiner(",", "[", "]");
        for (String s : c) j.add(str(s));
        return j.toString();
    }

    static String taskList(Collection<ConnectorTaskId> c) {
        StringJoiner j = new StringJoiner(",", "[", "]");
        for (ConnectorTaskId t : c) j.add("{\"connector\":" + str(t.connector()) + ",\"task\":" + t.task() + "}");
        return j.toString();
    }

    static String str(String s) {
        if (s == null) return "null";
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20 || c > 0x7e) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    static String hex(ByteBuffer b) {
        byte[] bytes = new byte[b.remaining()];
        b.duplicate().get(bytes);
        return hex(bytes);
    }

    static String hex(byte[] bytes) {
        StringBuilder s = new StringBuilder();
        for (byte x : bytes) s.append(String.format("%02x", x));
        return s.toString();
    }
}
