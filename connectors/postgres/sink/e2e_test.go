package sink

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/internal/testkit"
)

func sinkConfig(name, topics string, pg *testkit.Postgres, kv ...string) map[string]string {
	m := map[string]string{"name": name, "connector.class": ConfluentConnectorClass, "tasks.max": "1", "topics": topics,
		"connection.url": pg.JDBCURL("postgres"), "connection.user": pg.User, "connection.password": testkit.PostgresPassword}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// TestEndToEndJSON: JSON records with schemas on a three-partition topic
// (inserts, updates, tombstones, and a new field mid-stream) through a
// Connect worker into an auto-created, auto-evolved table, two tasks
// sharing the partitions; the table ends as the records say.
func TestEndToEndJSON(t *testing.T) {
	testkit.SkipShort(t, "end to end with a broker")
	pg := testkit.StartPostgres(t)
	b := testkit.StartBroker(t, nil)
	createTopic(t, b.Addr, 3, "customers")
	enc := newEncoder(t)
	cl := testkit.Client(t, b.Addr)
	v2 := connect.NewStruct().Name("test.Value").Field("id", connect.Int64Schema).Field("name", connect.OptionalStringSchema).
		Field("n", connect.Int32Schema).Field("email", connect.OptionalStringSchema).Build()

	rng := rand.New(rand.NewPCG(3, 4))
	model := map[int64]string{}
	var recs []*kgo.Record
	for i := range 1500 {
		id := rng.Int64N(100)
		k := enc.bytes(t, "customers", keySchema, key(id))
		switch {
		case rng.IntN(5) == 0:
			recs = append(recs, &kgo.Record{Topic: "customers", Key: k})
			delete(model, id)
		case i < 700:
			name := fmt.Sprintf("c%d-%d", id, i)
			recs = append(recs, &kgo.Record{Topic: "customers", Key: k, Value: enc.bytes(t, "customers", valueSchema, value(id, name, int32(i)))})
			model[id] = fmt.Sprintf("%d|%s|%d|NULL", id, name, i)
		default:
			name := fmt.Sprintf("c%d-%d", id, i)
			v := structOf(v2, "id", id, "name", name, "n", int32(i), "email", fmt.Sprintf("%d@example.com", i))
			recs = append(recs, &kgo.Record{Topic: "customers", Key: k, Value: enc.bytes(t, "customers", v2, v)})
			model[id] = fmt.Sprintf("%d|%s|%d|%d@example.com", id, name, i, i)
		}
	}
	produce(t, cl, recs...)

	w := startConnect(t, b.Addr)
	w.create(t, sinkConfig("json-sink", "customers", pg, "tasks.max", "2", "insert.mode", "upsert", "pk.mode", "record_key",
		"delete.enabled", "true", "auto.create", "true", "auto.evolve", "true", "consumer.override.max.poll.records", "97"))
	var want []string
	for id := range int64(100) {
		if r, ok := model[id]; ok {
			want = append(want, r)
		}
	}
	w.awaitRows(t, pg, "postgres", `SELECT concat_ws('|', id, name, n, coalesce(email, 'NULL')) FROM customers ORDER BY id`, want)
	awaitCommitted(t, b.Addr, "connect-json-sink", "customers", int64(len(recs)))
}

// awaitCommitted waits until the group's committed offsets on topic add up
// to total (every record's offset committed).
func awaitCommitted(t *testing.T, addr, group, topic string, total int64) {
	t.Helper()
	adm := testkit.Admin(t, addr)
	testkit.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		sum, err := committed(addr, adm, group, topic)
		if err != nil {
			return err
		}
		if sum != total {
			return fmt.Errorf("committed %d of %d", sum, total)
		}
		return nil
	})
}

func committed(_ string, adm *kadm.Client, group, topic string) (int64, error) {
	resp, err := adm.FetchOffsets(context.Background(), group)
	if err != nil {
		return 0, err
	}
	var sum int64
	resp.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic && o.Err == nil && o.At > 0 {
			sum += o.At
		}
	})
	return sum, nil
}

// debeziumSchemas are the schemas Debezium's PostgreSQL connector gives a
// table items(id int primary key, name text, price numeric(10,2),
// created timestamp, updated timestamptz, birthday date, doc jsonb,
// uid uuid, tags text[]) with the default time.precision.mode.
func debeziumSchemas(prefix string) (key, row, envelope *connect.Schema) {
	key = connect.NewStruct().Name(prefix+".Key").Field("id", connect.Int32Schema).Build()
	row = connect.NewStruct().Name(prefix+".Value").
		Field("id", connect.Int32Schema).
		Field("name", connect.OptionalStringSchema).
		Field("price", connect.DecimalSchema(2).Parameter("connect.decimal.precision", "10").Optional().Build()).
		Field("created", named(connect.Int64, dbzMicroTimestamp).Version(1).Optional().Build()).
		Field("updated", named(connect.String, dbzZonedTimestamp).Version(1).Optional().Build()).
		Field("birthday", named(connect.Int32, dbzDate).Version(1).Optional().Build()).
		Field("doc", named(connect.String, dbzJSON).Version(1).Optional().Build()).
		Field("uid", named(connect.String, dbzUUID).Version(1).Optional().Build()).
		Field("tags", connect.NewArray(connect.OptionalStringSchema).Optional().Build()).
		Optional().Build()
	source := connect.NewStruct().Name("io.debezium.connector.postgresql.Source").
		Field("version", connect.StringSchema).Field("connector", connect.StringSchema).Field("name", connect.StringSchema).
		Field("ts_ms", connect.Int64Schema).Field("db", connect.StringSchema).Field("schema", connect.StringSchema).
		Field("table", connect.StringSchema).Field("lsn", connect.OptionalInt64Schema).Build()
	envelope = connect.NewStruct().Name(prefix+".Envelope").Version(2).
		Field("before", row).Field("after", row).Field("source", source).
		Field("op", connect.StringSchema).Field("ts_ms", connect.OptionalInt64Schema).Build()
	return key, row, envelope
}

// rowText is how the sink's table prints a Debezium row (see the query
// in TestDebeziumEnvelopes).
func rowText(id int32, name string, version int) string {
	return fmt.Sprintf("%d|%s|%d.%02d|2024-03-0%d 10:11:12.123456|2024-03-01 09:00:00+00|2000-01-%02d|{\"v\": %d}|00000000-0000-0000-0000-%012d|{a,\"b c\",NULL}",
		id, name, version, id, 1+version%9, 1+int(id)%28, version, id)
}

// TestDebeziumEnvelopes: change events as Debezium writes them (creates,
// updates, deletes with their tombstones, a key deleted and created
// again), flattened by ExtractNewRecordState under each delete handling
// mode and renamed by RegexRouter, end row for row as the source table.
func TestDebeziumEnvelopes(t *testing.T) {
	testkit.SkipShort(t, "end to end with a broker")
	pg := testkit.StartPostgres(t)
	b := testkit.StartBroker(t, nil)
	enc := newEncoder(t)
	cl := testkit.Client(t, b.Addr)

	// The source's history: per key, a sequence of changes.
	type change struct {
		op      string
		id      int32
		version int
	}
	var history []change
	live := map[int32]int{}    // id -> version, the source table at the end
	deleted := map[int32]int{} // id -> version before its last delete (while deleted)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 1; i <= 400; i++ {
		id := int32(rng.IntN(60))
		v, exists := live[id]
		switch {
		case !exists:
			history = append(history, change{"c", id, i})
			live[id] = i
			delete(deleted, id)
		case rng.IntN(4) == 0:
			history = append(history, change{"d", id, v})
			delete(live, id)
			deleted[id] = v
		default:
			history = append(history, change{"u", id, i})
			live[id] = i
		}
	}
	modes := []struct {
		name   string
		unwrap []string
		sink   []string
		want   func() []string
	}{
		{"tombstone", nil, []string{"delete.enabled", "true"}, func() []string { return liveRows(live, "") }},
		{"legacy-none", []string{"transforms.unwrap.delete.handling.mode", "none", "transforms.unwrap.drop.tombstones", "false"},
			[]string{"delete.enabled", "true"}, func() []string { return liveRows(live, "") }},
		{"delete-to-tombstone", []string{"transforms.unwrap.delete.tombstone.handling.mode", "delete-to-tombstone"},
			[]string{"delete.enabled", "true"}, func() []string { return liveRows(live, "") }},
		{"rewrite", []string{"transforms.unwrap.delete.tombstone.handling.mode", "rewrite"}, nil, func() []string {
			out := liveRows(live, "|false")
			out = append(out, liveRows(deleted, "|true")...)
			sort.Slice(out, func(i, j int) bool { return rowID(out[i]) < rowID(out[j]) })
			return out
		}},
	}
	w := startConnect(t, b.Addr)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			prefix := "srv_" + strings.ReplaceAll(m.name, "-", "_")
			topic := prefix + ".public.items"
			createTopic(t, b.Addr, 1, topic)
			ks, rs, es := debeziumSchemas(topic)
			rowOf := func(id int32, version int) *connect.Struct {
				return structOf(rs, "id", id, "name", fmt.Sprintf("item %d", id),
					"price", connect.NewDecimal(int64(version)*100+int64(id%100), 2),
					"created", time.Date(2024, 3, 1+version%9, 10, 11, 12, 123456000, time.UTC).UnixMicro(),
					"updated", "2024-03-01T09:00:00Z",
					"birthday", int32(time.Date(2000, 1, 1+int(id)%28, 0, 0, 0, 0, time.UTC).Unix()/86400),
					"doc", fmt.Sprintf(`{"v":%d}`, version), "uid", fmt.Sprintf("00000000-0000-0000-0000-%012d", id),
					"tags", []any{"a", "b c", nil})
			}
			source := structOf(es.Field("source").Schema, "version", "3.6.1.Final", "connector", "postgresql", "name", prefix,
				"ts_ms", int64(1700000000000), "db", "src", "schema", "public", "table", "items")
			var recs []*kgo.Record
			for _, c := range history {
				k := enc.bytes(t, topic, ks, structOf(ks, "id", c.id))
				env := structOf(es, "source", source, "op", c.op, "ts_ms", int64(1700000000001))
				switch c.op {
				case "c":
					env.MustPut("after", rowOf(c.id, c.version))
				case "u":
					env.MustPut("before", rowOf(c.id, c.version-1)).MustPut("after", rowOf(c.id, c.version))
				case "d":
					env.MustPut("before", rowOf(c.id, c.version))
				}
				recs = append(recs, &kgo.Record{Topic: topic, Key: k, Value: enc.bytes(t, topic, es, env)})
				if c.op == "d" {
					recs = append(recs, &kgo.Record{Topic: topic, Key: k}) // the tombstone
				}
			}
			produce(t, cl, recs...)
			cfg := sinkConfig("dbz-"+m.name, topic, pg, "insert.mode", "upsert", "pk.mode", "record_key", "auto.create", "true",
				"transforms", "unwrap,route",
				"transforms.unwrap.type", "io.debezium.transforms.ExtractNewRecordState",
				"transforms.route.type", "org.apache.kafka.connect.transforms.RegexRouter",
				"transforms.route.regex", `([^.]+)\.([^.]+)\.([^.]+)`, "transforms.route.replacement", "$1_$3")
			for i := 0; i+1 < len(m.unwrap); i += 2 {
				cfg[m.unwrap[i]] = m.unwrap[i+1]
			}
			for i := 0; i+1 < len(m.sink); i += 2 {
				cfg[m.sink[i]] = m.sink[i+1]
			}
			w.create(t, cfg)
			deletedCol := ""
			if m.name == "rewrite" {
				deletedCol = ", __deleted"
			}
			w.awaitRows(t, pg, "postgres", fmt.Sprintf(`SELECT concat_ws('|', id, name, price, created, updated AT TIME ZONE 'UTC' || '+00', birthday, doc, uid, tags%s)
				FROM %s_items ORDER BY id`, deletedCol, prefix), m.want())
			wantRows(t, rows(t, pg, "postgres", fmt.Sprintf(`SELECT string_agg(column_name || ' ' || data_type, ', ' ORDER BY ordinal_position)
				FROM information_schema.columns WHERE table_name = '%s_items'`, prefix)),
				"id integer, name text, price numeric, created timestamp without time zone, updated timestamp with time zone, birthday date, doc jsonb, uid uuid, tags ARRAY"+
					map[bool]string{true: ", __deleted text", false: ""}[m.name == "rewrite"])
		})
	}
}

func liveRows(m map[int32]int, suffix string) []string {
	var ids []int
	for id := range m {
		ids = append(ids, int(id))
	}
	sort.Ints(ids)
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = rowText(int32(id), fmt.Sprintf("item %d", id), m[int32(id)]) + suffix
	}
	return out
}

func rowID(s string) int {
	var id int
	fmt.Sscanf(s, "%d|", &id)
	return id
}

// TestCrashAndRestart: the worker dies mid-stream (its task abandoned in
// the middle of a put, offsets not committed since the start); a new
// worker redelivers from the last committed offsets while more records
// arrive, and the table ends as the records say: upserts make the
// redelivered records harmless.
func TestCrashAndRestart(t *testing.T) {
	testkit.SkipShort(t, "end to end with a broker")
	pg := testkit.StartPostgres(t)
	b := testkit.StartBroker(t, nil)
	createTopic(t, b.Addr, 2, "orders")
	enc := newEncoder(t)
	cl := testkit.Client(t, b.Addr)
	model := map[int64]string{}
	next := 0
	batch := func(n int) []*kgo.Record {
		out := make([]*kgo.Record, n)
		for i := range out {
			id := int64(next % 300)
			name := fmt.Sprintf("o%d", next)
			out[i] = &kgo.Record{Topic: "orders", Key: enc.bytes(t, "orders", keySchema, key(id)),
				Value: enc.bytes(t, "orders", valueSchema, value(id, name, int32(next)))}
			model[id] = fmt.Sprintf("%d|%s|%d", id, name, next)
			next++
		}
		return out
	}
	cfg := sinkConfig("crashy", "orders", pg, "insert.mode", "upsert", "pk.mode", "record_key", "auto.create", "true",
		"consumer.override.max.poll.records", "50")
	produce(t, cl, batch(6000)...)

	w1 := startConnect(t, b.Addr, "offset.flush.interval.ms", "600000")
	w1.create(t, cfg)
	testkit.CheckFor(t, 30*time.Second, 5*time.Millisecond, func() error {
		got := rows(t, pg, "postgres", `SELECT count(*) FROM pg_class WHERE relname = 'orders'`)
		if got[0] == "0" {
			return fmt.Errorf("no table yet")
		}
		if n := rows(t, pg, "postgres", `SELECT count(*) FROM orders`); n[0] == "0" {
			return fmt.Errorf("no rows yet")
		}
		return nil
	})
	w1.crash()
	sum, err := committed(b.Addr, testkit.Admin(t, b.Addr), "connect-crashy", "orders")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("committed at the crash: %d of 6000 records", sum)

	produce(t, cl, batch(3000)...)
	w2 := startConnect(t, b.Addr)
	w2.create(t, cfg)
	var want []string
	for id := range int64(300) {
		want = append(want, model[id])
	}
	w2.awaitRows(t, pg, "postgres", `SELECT concat_ws('|', id, name, n) FROM orders ORDER BY id`, want)
	awaitCommitted(t, b.Addr, "connect-crashy", "orders", 9000)
}

// TestDeadLetterQueue: with errors.tolerance=all and a dead letter queue,
// records the database refuses land in the queue, the rest in the table.
func TestDeadLetterQueue(t *testing.T) {
	testkit.SkipShort(t, "end to end with a broker")
	pg := testkit.StartPostgres(t)
	pg.Exec(t, "postgres", "CREATE TABLE payments (id BIGINT PRIMARY KEY, name TEXT NOT NULL, n INT NOT NULL CHECK (n >= 0))")
	b := testkit.StartBroker(t, nil)
	createTopic(t, b.Addr, 1, "payments", "payments-dlq")
	enc := newEncoder(t)
	cl := testkit.Client(t, b.Addr)
	var recs []*kgo.Record
	for i := range int64(50) {
		n := int32(i)
		if i%10 == 3 {
			n = -1 // refused by the CHECK constraint
		}
		recs = append(recs, &kgo.Record{Topic: "payments", Value: enc.bytes(t, "payments", valueSchema, value(i, "p", n))})
	}
	recs = append(recs, &kgo.Record{Topic: "payments", Value: []byte("not json")})
	produce(t, cl, recs...)
	w := startConnect(t, b.Addr)
	w.create(t, sinkConfig("dlq-sink", "payments", pg, "insert.mode", "upsert", "pk.mode", "record_value", "pk.fields", "id",
		"errors.tolerance", "all", "errors.deadletterqueue.topic.name", "payments-dlq",
		"errors.deadletterqueue.context.headers.enable", "true", "errors.deadletterqueue.topic.replication.factor", "1"))
	var want []string
	for i := range 50 {
		if i%10 != 3 {
			want = append(want, fmt.Sprint(i))
		}
	}
	w.awaitRows(t, pg, "postgres", `SELECT p.id::text FROM payments p ORDER BY p.id`, want)

	dlq := testkit.Client(t, b.Addr, kgo.ConsumeTopics("payments-dlq"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx := testkit.Context(t, 30*time.Second)
	var got []*kgo.Record
	for len(got) < 6 && ctx.Err() == nil {
		dlq.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, r) })
	}
	if len(got) != 6 {
		t.Fatalf("%d records in the dead letter queue, want 6 (5 refused, 1 not JSON)", len(got))
	}
	refused := 0
	for _, r := range got {
		for _, h := range r.Headers {
			if h.Key == "__connect.errors.exception.message" && strings.Contains(string(h.Value), "violates check constraint") {
				refused++
			}
		}
	}
	if refused != 5 {
		t.Fatalf("%d dead letters name the check constraint, want 5", refused)
	}
}
