// Package s3_test runs the S3 sink behind the Postgres CDC source: table
// changes → Debezium envelopes in Kafka → hourly Parquet objects in S3.
package s3_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect"
	_ "github.com/fjordhq/fjord/connectors/postgres/cdc"
	"github.com/fjordhq/fjord/connectors/s3/format"
	_ "github.com/fjordhq/fjord/connectors/s3/sink"
	_ "github.com/fjordhq/fjord/converters/header"
	_ "github.com/fjordhq/fjord/converters/json"
	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/internal/testkit/connectkit"
	_ "github.com/fjordhq/fjord/transforms"
)

const (
	itemsTopic    = "shop.public.items"
	parquetClass  = "io.confluent.connect.s3.format.parquet.ParquetFormat"
	snapshotRows  = 40
	streamChanges = 300
)

// REPLICA IDENTITY FULL puts the whole old row in the before of updates
// and deletes, so the test can check every column of both sides.
var itemsDDL = []string{
	`CREATE TABLE items (id int PRIMARY KEY, name text, price numeric(12,2), updated timestamptz, active boolean)`,
	`ALTER TABLE items REPLICA IDENTITY FULL`,
}

// Postgres → CDC source → Kafka → S3 sink (Parquet, hourly partitions by
// record time) → S3: every change applied to the table, snapshot rows
// first, is in the objects exactly once and in order, in objects named by
// the Kafka offset of their first record under the hour of their records.
func TestPostgresChangesToS3(t *testing.T) {
	testkit.SkipShort(t, "end to end on Postgres, a broker and an S3 server")
	start := time.Now().UTC()
	pg := testkit.StartPostgres(t)
	pg.CreateDatabase(t, "shop")
	pg.Exec(t, "shop", itemsDDL...)
	srv := testkit.StartS3(t)
	const bucket = "changes"
	srv.CreateBucket(t, bucket)
	b := testkit.StartBroker(t, nil)
	// One partition: the whole table's change order is the topic's order.
	adm := testkit.Admin(t, b.Addr)
	if _, err := adm.CreateTopic(testkit.Context(t, 10*time.Second), 1, 1, nil, itemsTopic); err != nil {
		t.Fatal(err)
	}
	w := connectkit.Start(t, b.Addr, connectkit.Options{})

	ctx := testkit.Context(t, 5*time.Minute)
	db := pg.Connect(t, "shop")
	rnd := rand.New(rand.NewPCG(7, 11))
	h := &history{rows: map[int32]item{}, next: 1}
	h.snapshot(t, ctx, db, rnd, snapshotRows)

	w.Create(t, map[string]string{
		"name": "cdc", "connector.class": "io.debezium.connector.postgresql.PostgresConnector", "tasks.max": "1",
		"database.hostname": pg.Host, "database.port": fmt.Sprint(pg.Port), "database.user": pg.User,
		"database.password": testkit.PostgresPassword, "database.dbname": "shop", "topic.prefix": "shop",
		"table.include.list": "public.items", "slot.name": "s3pipe", "publication.name": "s3pipe",
	})
	sink := map[string]string{
		"name": "s3", "connector.class": "io.confluent.connect.s3.S3SinkConnector", "tasks.max": "1",
		"topics": itemsTopic, "flush.size": "50", "rotate.schedule.interval.ms": "2000", "timezone": "UTC",
		"storage.class": "io.confluent.connect.s3.storage.S3Storage",
		"format.class":  parquetClass, "parquet.codec": "snappy",
		"partitioner.class":   "io.confluent.connect.storage.partitioner.HourlyPartitioner",
		"timestamp.extractor": "Record", "locale": "en-US",
		"behavior.on.null.values": "ignore", // the tombstone after each delete
	}
	maps.Copy(sink, srv.Props(bucket))
	w.Create(t, sink)

	// Changes made before the snapshot's point would be read as snapshot
	// rows: stream only once the whole snapshot is in the topic.
	testkit.CheckFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		if err := w.Failed(); err != nil {
			t.Fatal(err)
		}
		ends, err := adm.ListEndOffsets(ctx, itemsTopic)
		if err != nil {
			return err
		}
		if o, _ := ends.Lookup(itemsTopic, 0); o.Offset < snapshotRows {
			return fmt.Errorf("%d of %d snapshot records in %s", o.Offset, snapshotRows, itemsTopic)
		}
		return nil
	})
	h.stream(t, ctx, db, rnd, streamChanges)

	client := srv.Client(t)
	var objs []object
	testkit.CheckFor(t, 120*time.Second, 500*time.Millisecond, func() error {
		if err := w.Failed(); err != nil {
			t.Fatal(err)
		}
		var err error
		if objs, err = readObjects(ctx, client, bucket); err != nil {
			return err
		}
		n := 0
		for _, o := range objs {
			n += len(o.events)
		}
		if n > len(h.changes) {
			t.Fatalf("%d events in S3, more than the %d changes applied:\n%s", n, len(h.changes), diff(h.changes, concat(objs)))
		}
		if n < len(h.changes) {
			return fmt.Errorf("%d of %d changes in S3 (%d objects)", n, len(h.changes), len(objs))
		}
		return nil
	})

	got, want := concat(objs), slices.Clone(h.changes)
	// The snapshot reads the table in its physical order, which SQL does
	// not define: compare the snapshot rows as a set (by id).
	byID := func(a, b change) int { return int(a.key() - b.key()) }
	slices.SortFunc(got[:snapshotRows], byID)
	slices.SortFunc(want[:snapshotRows], byID)
	if !slices.EqualFunc(got, want, func(a, b change) bool { return a.String() == b.String() }) {
		t.Fatalf("the objects' events are not the changes applied:\n%s", diff(want, got))
	}

	// The objects' names and hours, against what Kafka holds.
	recs := consumeAll(t, b.Addr, itemsTopic)
	var values []*kgo.Record
	tombstones := 0
	for _, r := range recs {
		if r.Value == nil {
			tombstones++
		} else {
			values = append(values, r)
		}
	}
	if len(values) != len(h.changes) || tombstones != h.deletes {
		t.Fatalf("topic: %d change events and %d tombstones, want %d and %d", len(values), tombstones, len(h.changes), h.deletes)
	}
	t.Logf("%d changes (%d deletes) in %d objects", len(h.changes), h.deletes, len(objs))
	end := time.Now().UTC()
	i := 0
	for _, o := range objs {
		if o.startOffset != values[i].Offset {
			t.Errorf("%s: named for offset %d, its first record is at offset %d", o.key, o.startOffset, values[i].Offset)
		}
		if o.hour.Before(start.Truncate(time.Hour)) || o.hour.After(end) {
			t.Errorf("%s: hour %v is not a UTC hour of the test (%v to %v)", o.key, o.hour, start, end)
		}
		for range o.events {
			if ts := values[i].Timestamp.UTC().Truncate(time.Hour); !ts.Equal(o.hour) {
				t.Errorf("%s: record at offset %d has time %v, not in the object's hour", o.key, values[i].Offset, values[i].Timestamp.UTC())
			}
			i++
		}
	}
}

// item is one row of the items table; nil is SQL NULL.
type item struct {
	id      int32
	name    *string
	price   *string // numeric(12,2) in its canonical text, e.g. "-12.30"
	updated *time.Time
	active  *bool
}

func (r *item) String() string {
	if r == nil {
		return "null"
	}
	s := func(p *string) string {
		if p == nil {
			return "null"
		}
		return strconv.Quote(*p)
	}
	up, act := "null", "null"
	if r.updated != nil {
		up = r.updated.UTC().Format("2006-01-02T15:04:05.000000Z")
	}
	if r.active != nil {
		act = strconv.FormatBool(*r.active)
	}
	return fmt.Sprintf("{id=%d name=%s price=%s updated=%s active=%s}", r.id, s(r.name), s(r.price), up, act)
}

// change is one change event as Debezium describes it.
type change struct {
	op            string // r, c, u, d
	before, after *item
}

func (c change) String() string {
	return c.op + " before=" + c.before.String() + " after=" + c.after.String()
}

// key is the row's id (after, or before for a delete).
func (c change) key() int32 {
	if c.after != nil {
		return c.after.id
	}
	if c.before != nil {
		return c.before.id
	}
	return 0
}

// history is the changes applied to the table, in commit order, and the
// rows it holds now.
type history struct {
	changes []change
	deletes int // delete events, each followed by a tombstone
	rows    map[int32]item
	ids     []int32 // the keys of rows, for picking one at random
	next    int32
}

const returning = ` RETURNING id, name, price::text, updated, active`

func scanItem(row pgx.Row) (item, error) {
	var r item
	err := row.Scan(&r.id, &r.name, &r.price, &r.updated, &r.active)
	return r, err
}

// values returns random column values (each may be NULL) for a new or
// updated row.
func values(rnd *rand.Rand, i int) (name, price *string, updated *time.Time, active *bool) {
	if rnd.IntN(6) > 0 {
		s := fmt.Sprintf("item %d 'é' \\ \t", i)
		name = &s
	}
	if rnd.IntN(8) > 0 {
		s := fmt.Sprintf("%d.%02d", rnd.IntN(10_000_000)-1_000_000, rnd.IntN(100))
		price = &s
	}
	if rnd.IntN(7) > 0 {
		// Microseconds: timestamptz's precision.
		u := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(rnd.Int64N(1e12)) * time.Microsecond)
		updated = &u
	}
	if rnd.IntN(5) > 0 {
		b := rnd.IntN(2) == 0
		active = &b
	}
	return
}

func (h *history) insert(ctx context.Context, q pgx.Tx, rnd *rand.Rand, i int, op string) error {
	id := h.next
	h.next++
	name, price, updated, active := values(rnd, i)
	r, err := scanItem(q.QueryRow(ctx, `INSERT INTO items VALUES ($1, $2, $3::text::numeric, $4, $5)`+returning, id, name, price, updated, active))
	if err != nil {
		return fmt.Errorf("insert: %w", err)
	}
	h.rows[id] = r
	h.ids = append(h.ids, id)
	h.changes = append(h.changes, change{op: op, after: &r})
	return nil
}

// snapshot inserts n rows before the connectors start: they arrive as
// read ('r') events.
func (h *history) snapshot(t *testing.T, ctx context.Context, db *pgx.Conn, rnd *rand.Rand, n int) {
	t.Helper()
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := h.insert(ctx, tx, rnd, i, "r"); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// stream applies n random statements in transactions of 1-4: inserts,
// updates, primary key changes (a delete and a create downstream) and
// deletes.
func (h *history) stream(t *testing.T, ctx context.Context, db *pgx.Conn, rnd *rand.Rand, n int) {
	t.Helper()
	for i := 0; i < n; {
		tx, err := db.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for k := 1 + rnd.IntN(4); k > 0 && i < n; k-- {
			if err := h.apply(ctx, tx, rnd, i); err != nil {
				t.Fatal(err)
			}
			i++
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func (h *history) apply(ctx context.Context, tx pgx.Tx, rnd *rand.Rand, i int) error {
	op := rnd.IntN(20)
	if len(h.ids) == 0 || op < 7 {
		return h.insert(ctx, tx, rnd, i, "c")
	}
	at := rnd.IntN(len(h.ids))
	id := h.ids[at]
	old := h.rows[id]
	switch {
	case op < 14:
		name, price, updated, active := values(rnd, i)
		r, err := scanItem(tx.QueryRow(ctx, `UPDATE items SET name = $2, price = $3::text::numeric, updated = $4, active = $5 WHERE id = $1`+returning,
			id, name, price, updated, active))
		if err != nil {
			return fmt.Errorf("update: %w", err)
		}
		h.rows[id] = r
		h.changes = append(h.changes, change{op: "u", before: &old, after: &r})
	case op < 16:
		// A new primary key: Debezium emits a delete (and its tombstone)
		// of the old key and a create of the new one.
		r, err := scanItem(tx.QueryRow(ctx, `UPDATE items SET id = $2 WHERE id = $1`+returning, id, h.next))
		if err != nil {
			return fmt.Errorf("update key: %w", err)
		}
		h.next++
		delete(h.rows, id)
		h.rows[r.id] = r
		h.ids[at] = r.id
		h.changes = append(h.changes, change{op: "d", before: &old}, change{op: "c", after: &r})
		h.deletes++
	default:
		if _, err := scanItem(tx.QueryRow(ctx, `DELETE FROM items WHERE id = $1`+returning, id)); err != nil {
			return fmt.Errorf("delete: %w", err)
		}
		delete(h.rows, id)
		h.ids = slices.Delete(h.ids, at, at+1)
		h.changes = append(h.changes, change{op: "d", before: &old})
		h.deletes++
	}
	return nil
}

// object is one Parquet object the sink wrote, decoded.
type object struct {
	key         string
	partition   int
	startOffset int64
	hour        time.Time
	events      []change
}

// keyPattern is the HourlyPartitioner's layout with Confluent's file
// name: <topic>+<kafka partition>+<start offset, 10 digits>.
var keyPattern = regexp.MustCompile(`^topics/` + regexp.QuoteMeta(itemsTopic) +
	`/year=(\d{4})/month=(\d{2})/day=(\d{2})/hour=(\d{2})/` + regexp.QuoteMeta(itemsTopic) + `\+(\d+)\+(\d{10})\.snappy\.parquet$`)

// readObjects lists and decodes every object of the bucket, sorted by
// Kafka partition then start offset.
func readObjects(ctx context.Context, client *s3.Client, bucket string) ([]object, error) {
	f, err := format.New(parquetClass, nil)
	if err != nil {
		return nil, err
	}
	var objs []object
	p := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, o := range page.Contents {
			obj, err := parseKey(*o.Key)
			if err != nil {
				return nil, err
			}
			if obj.events, err = readEvents(ctx, client, bucket, obj.key, f); err != nil {
				return nil, err
			}
			objs = append(objs, obj)
		}
	}
	slices.SortFunc(objs, func(a, b object) int {
		if a.partition != b.partition {
			return a.partition - b.partition
		}
		return int(a.startOffset - b.startOffset)
	})
	return objs, nil
}

func parseKey(key string) (object, error) {
	m := keyPattern.FindStringSubmatch(key)
	if m == nil {
		return object{}, fmt.Errorf("object %s does not follow topics/%s/year=YYYY/month=MM/day=dd/hour=HH/%s+<partition>+<offset>.snappy.parquet", key, itemsTopic, itemsTopic)
	}
	hour, err := time.Parse("2006-01-02T15", m[1]+"-"+m[2]+"-"+m[3]+"T"+m[4])
	if err != nil {
		return object{}, fmt.Errorf("object %s: %v", key, err)
	}
	part, _ := strconv.Atoi(m[5])
	off, _ := strconv.ParseInt(m[6], 10, 64)
	return object{key: key, partition: part, startOffset: off, hour: hour}, nil
}

func readEvents(ctx context.Context, client *s3.Client, bucket, key string, f format.Format) ([]change, error) {
	out, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(out.Body)
	out.Body.Close()
	if err != nil {
		return nil, err
	}
	r, err := f.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	var events []change
	for {
		s, v, err := r.Next()
		if err == io.EOF {
			return events, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: record %d: %w", key, len(events), err)
		}
		c, err := toChange(s, v)
		if err != nil {
			return nil, fmt.Errorf("%s: record %d: %w", key, len(events), err)
		}
		events = append(events, c)
	}
}

// toChange reads a Debezium envelope back from a decoded Parquet record.
func toChange(s *connect.Schema, v any) (change, error) {
	var c change
	op, _, err := field(s, v, "op")
	if err != nil {
		return c, err
	}
	var ok bool
	if c.op, ok = op.(string); !ok {
		return c, fmt.Errorf("op is %T %v", op, op)
	}
	for _, side := range []struct {
		name string
		dst  **item
	}{{"before", &c.before}, {"after", &c.after}} {
		rv, rs, err := field(s, v, side.name)
		if err != nil {
			return c, err
		}
		if rv == nil {
			continue
		}
		if *side.dst, err = toItem(rs, rv); err != nil {
			return c, fmt.Errorf("%s: %w", side.name, err)
		}
	}
	return c, nil
}

func toItem(s *connect.Schema, v any) (*item, error) {
	var r item
	id, _, err := field(s, v, "id")
	if err != nil {
		return nil, err
	}
	switch x := id.(type) {
	case int32:
		r.id = x
	case int64:
		r.id = int32(x)
	default:
		return nil, fmt.Errorf("id is %T %v", id, id)
	}
	if r.name, err = stringField(s, v, "name"); err != nil {
		return nil, err
	}
	pv, ps, err := field(s, v, "price")
	if err != nil {
		return nil, err
	}
	if r.price, err = decimalText(ps, pv); err != nil {
		return nil, fmt.Errorf("price: %w", err)
	}
	up, err := stringField(s, v, "updated")
	if err != nil {
		return nil, err
	}
	if up != nil { // io.debezium.time.ZonedTimestamp: ISO-8601 at UTC
		ts, err := time.Parse(time.RFC3339Nano, *up)
		if err != nil {
			return nil, fmt.Errorf("updated: %w", err)
		}
		r.updated = &ts
	}
	av, _, err := field(s, v, "active")
	if err != nil {
		return nil, err
	}
	if av != nil {
		b, ok := av.(bool)
		if !ok {
			return nil, fmt.Errorf("active is %T %v", av, av)
		}
		r.active = &b
	}
	return &r, nil
}

// field returns a struct field's value and schema; a schemaless map
// (no schema) works too.
func field(s *connect.Schema, v any, name string) (any, *connect.Schema, error) {
	switch x := v.(type) {
	case *connect.Struct:
		f := x.Schema().Field(name)
		if f == nil {
			return nil, nil, fmt.Errorf("no field %s in %s", name, x.Schema().Name)
		}
		return x.GetField(f), f.Schema, nil
	case map[string]any:
		var fs *connect.Schema
		if f := s.Field(name); f != nil {
			fs = f.Schema
		}
		return x[name], fs, nil
	}
	return nil, nil, fmt.Errorf("field %s of a %T, not a struct", name, v)
}

func stringField(s *connect.Schema, v any, name string) (*string, error) {
	fv, _, err := field(s, v, name)
	if err != nil || fv == nil {
		return nil, err
	}
	str, ok := fv.(string)
	if !ok {
		return nil, fmt.Errorf("%s is %T %v", name, fv, fv)
	}
	return &str, nil
}

// decimalText renders a Decimal (numeric(12,2) in Debezium's precise
// mode) as Postgres prints it.
func decimalText(s *connect.Schema, v any) (*string, error) {
	var d connect.Decimal
	switch x := v.(type) {
	case nil:
		return nil, nil
	case connect.Decimal:
		d = x
	case []byte:
		var err error
		if d, err = connect.DecimalFromBytes(s, x); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%T %v is not a Decimal", v, v)
	}
	str := d.String()
	return &str, nil
}

func concat(objs []object) []change {
	var out []change
	for _, o := range objs {
		out = append(out, o.events...)
	}
	return out
}

// diff shows the first differing event and its neighbours.
func diff(want, got []change) string {
	i := 0
	for i < len(want) && i < len(got) && want[i].String() == got[i].String() {
		i++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d events, want %d; first difference at %d\n", len(got), len(want), i)
	for j := max(0, i-2); j < i+3; j++ {
		if j < len(want) {
			fmt.Fprintf(&b, "  want[%d] %s\n", j, want[j])
		}
		if j < len(got) {
			fmt.Fprintf(&b, "  got [%d] %s\n", j, got[j])
		}
	}
	return b.String()
}

// consumeAll reads the topic from its start to its current end.
func consumeAll(t *testing.T, addr, topic string) []*kgo.Record {
	t.Helper()
	ctx := testkit.Context(t, 30*time.Second)
	ends, err := testkit.Admin(t, addr).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup(topic, 0)
	cl := testkit.Client(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var out []*kgo.Record
	for int64(len(out)) < end.Offset {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("consume %s: %v (%d of %d records)", topic, err, len(out), end.Offset)
		}
		out = append(out, fs.Records()...)
	}
	return out
}
