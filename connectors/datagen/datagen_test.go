package datagen

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/plugins"
)

// memOffsets is an in-memory OffsetReader keyed by the partition's JSON.
type memOffsets map[string]map[string]any

func (m memOffsets) key(p map[string]any) string {
	b, _ := json.Marshal(p)
	return string(b)
}

func (m memOffsets) Offset(p map[string]any) (map[string]any, error) { return m[m.key(p)], nil }

func (m memOffsets) Offsets(ps []map[string]any) (map[string]map[string]any, error) {
	out := map[string]map[string]any{}
	for _, p := range ps {
		if o := m[m.key(p)]; o != nil {
			out[m.key(p)] = o
		}
	}
	return out, nil
}

// commit stores the records' offsets as a runtime would after the broker
// acknowledged them (last offset per partition wins).
func (m memOffsets) commit(recs []*connect.SourceRecord) {
	for _, r := range recs {
		m[m.key(r.SourcePartition)] = r.SourceOffsetMap()
	}
}

type taskContext struct{ offsets memOffsets }

func (c *taskContext) Offsets() connect.OffsetReader { return c.offsets }
func (c *taskContext) Config() map[string]string     { return nil }

// startTasks starts the connector and its tasks as a runtime would.
func startTasks(t *testing.T, props map[string]string, maxTasks int, offsets memOffsets) []*Task {
	t.Helper()
	c := &Connector{}
	if err := c.Start(context.Background(), props); err != nil {
		t.Fatal(err)
	}
	cfgs, err := c.TaskConfigs(maxTasks)
	if err != nil {
		t.Fatal(err)
	}
	var tasks []*Task
	for _, tc := range cfgs {
		task := c.NewTask().(*Task)
		task.Initialize(&taskContext{offsets})
		if err := task.Start(context.Background(), tc); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { task.Stop() })
		tasks = append(tasks, task)
	}
	return tasks
}

func poll(t *testing.T, task *Task, n int) []*connect.SourceRecord {
	t.Helper()
	var out []*connect.SourceRecord
	for range 10000 {
		if len(out) >= n {
			break
		}
		recs, err := task.Poll(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, recs...)
	}
	if len(out) < n {
		t.Fatalf("got %d records, want %d", len(out), n)
	}
	return out[:n]
}

// drain polls until the task has nothing more; a done context makes the
// last Poll return at once instead of idling.
func drain(t *testing.T, task *Task, each func([]*connect.SourceRecord)) {
	t.Helper()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for range 100000 {
		recs, err := task.Poll(done)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 {
			return
		}
		each(recs)
	}
	t.Fatal("task never ran out of records")
}

func render(r *connect.SourceRecord) string {
	return fmt.Sprintf("%v|%v", r.Key, r.Value)
}

func TestQuickstarts(t *testing.T) {
	cases := map[string]struct {
		keyType connect.Type
		schema  string
		check   map[string]string // field -> regexp of its printed value
	}{
		"users": {connect.String, "ksql.users", map[string]string{
			"registertime": `^1[45]\d{11}$`, "userid": `^User_[1-9]$`, "regionid": `^Region_[1-9]$`, "gender": `^(MALE|FEMALE|OTHER)$`}},
		"pageviews": {connect.Int64, "ksql.pageviews", map[string]string{
			"viewtime": `^\d*1$`, "userid": `^User_[1-9]$`, "pageid": `^Page_[1-9][0-9]$`}},
		"orders": {connect.Int32, "ksql.orders", map[string]string{
			"orderid": `^\d+$`, "itemid": `^Item_[1-9][0-9]{0,2}$`, "orderunits": `^\d+(\.\d+)?(e[-+]\d+)?$`,
			"address": `^Struct\{city=City_[1-9]{0,2},state=State_[1-9]{0,2},zipcode=\d{5}\}$`}},
		"stock_trades": {connect.String, "ksql.StockTrade", map[string]string{
			"side": `^(BUY|SELL)$`, "quantity": `^\d{1,4}$`, "symbol": `^Z[A-Z]+$`, "price": `^\d{1,3}$`, "account": `^[A-Z]{3}\d{3}$`}},
		"ratings": {connect.Int64, "ksql.ratings", map[string]string{
			"rating_id": `^\d+$`, "user_id": `^(-1|\d{1,2})$`, "stars": `^[1-4]$`, "channel": `^(web|iOS|ios|iOS-test|android)$`}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			tasks := startTasks(t, map[string]string{"kafka.topic": "t", "quickstart": name, "max.interval": "0", "seed": "1"}, 1, memOffsets{})
			recs := poll(t, tasks[0], 500)
			for i, r := range recs {
				st, ok := r.Value.(*connect.Struct)
				if !ok || r.ValueSchema.Name != c.schema || st.Schema() != r.ValueSchema {
					t.Fatalf("record %d: value %T schema %v", i, r.Value, r.ValueSchema)
				}
				if err := st.Validate(); err != nil {
					t.Fatalf("record %d invalid: %v", i, err)
				}
				if r.KeySchema.Type != c.keyType || r.Key == nil {
					t.Fatalf("record %d: key %v of schema %v", i, r.Key, r.KeySchema)
				}
				if err := connect.Validate(r.KeySchema, r.Key); err != nil {
					t.Fatalf("record %d key: %v", i, err)
				}
				for f, re := range c.check {
					v, err := st.Get(f)
					if err != nil {
						t.Fatal(err)
					}
					if s := fmt.Sprint(v); !regexp.MustCompile(re).MatchString(s) {
						t.Fatalf("record %d field %s = %q, want %s", i, f, s, re)
					}
				}
			}
		})
	}
	// Sequence fields count the record number, as Avro's iteration.
	tasks := startTasks(t, map[string]string{"kafka.topic": "t", "quickstart": "pageviews", "max.interval": "0", "seed": "1"}, 1, memOffsets{})
	recs := poll(t, tasks[0], 3)
	for i, r := range recs {
		if r.Key != int64(1+10*i) {
			t.Fatalf("pageviews viewtime key %d = %v", i, r.Key)
		}
	}
}

func TestQuickstartOrdersShape(t *testing.T) {
	// The orders schema matches Confluent's (via AvroData): names, field
	// order, types, nested address.
	s := ordersSpec().schema
	var b strings.Builder
	var walk func(s *connect.Schema)
	walk = func(s *connect.Schema) {
		fmt.Fprintf(&b, "%s<%s>{", s.Type, s.Name)
		for _, f := range s.Fields {
			fmt.Fprintf(&b, "%s:", f.Name)
			if f.Schema.Type == connect.StructType {
				walk(f.Schema)
			} else {
				fmt.Fprintf(&b, "%s", f.Schema.Type)
			}
			b.WriteByte(' ')
		}
		b.WriteByte('}')
	}
	walk(s)
	want := "STRUCT<ksql.orders>{ordertime:INT64 orderid:INT32 itemid:STRING orderunits:FLOAT64 address:STRUCT<ksql.address>{city:STRING state:STRING zipcode:INT64 } }"
	if b.String() != want {
		t.Fatalf("orders schema\n got %s\nwant %s", b.String(), want)
	}
}

func TestSeedIsDeterministicWhateverTheTasks(t *testing.T) {
	props := map[string]string{"kafka.topic": "t", "seed": "42", "rate": "0", "count": "1000",
		"value.schema": "id:int64:seq,name:string:4..12,amount:float64:0..100,ok:boolean,user:string:User_{1..9},when:timestamp:0..1000000,tag:string:a|b|c",
		"key.schema":   "string:8"}
	collect := func(maxTasks int) map[int64]string {
		out := map[int64]string{}
		for _, task := range startTasks(t, props, maxTasks, memOffsets{}) {
			drain(t, task, func(recs []*connect.SourceRecord) {
				for _, r := range recs {
					id, _ := r.Value.(*connect.Struct).Get("id")
					if _, dup := out[id.(int64)]; dup {
						t.Fatalf("sequence %d generated twice", id)
					}
					out[id.(int64)] = render(r)
				}
			})
		}
		return out
	}
	one, again, three := collect(1), collect(1), collect(3)
	if len(one) != 1000 || len(three) != 1000 {
		t.Fatalf("count=1000 gave %d records with one task, %d with three", len(one), len(three))
	}
	for id, r := range one {
		if again[id] != r || three[id] != r {
			t.Fatalf("record %d differs between runs:\n%s\n%s\n%s", id, r, again[id], three[id])
		}
	}
	// Another seed, other data.
	props["seed"] = "43"
	other := collect(1)
	same := 0
	for id, r := range one {
		if other[id] == r {
			same++
		}
	}
	if same > 10 {
		t.Fatalf("%d of 1000 records equal under another seed", same)
	}
}

func TestResumeFromOffsets(t *testing.T) {
	offsets := memOffsets{}
	props := map[string]string{"kafka.topic": "t", "random.seed": "7", "max.interval": "0", "quickstart": "ratings", "tasks.max": "2"}
	var first []string
	tasks := startTasks(t, props, 2, offsets)
	for _, task := range tasks {
		recs := poll(t, task, 50)
		offsets.commit(recs[:30]) // only 30 were acknowledged before the "crash"
		for _, r := range recs[:30] {
			first = append(first, render(r))
		}
		task.Stop()
	}
	var second []string
	for _, task := range startTasks(t, props, 2, offsets) {
		recs := poll(t, task, 20)
		if it := recs[0].SourceOffsetMap()[CurrentIterationField]; it != int64(31) {
			t.Fatalf("resumed at iteration %v, want 31", it)
		}
		for _, r := range recs {
			second = append(second, render(r))
		}
	}
	for _, r := range second {
		if slices.Contains(first, r) {
			t.Fatalf("record repeated after restart: %s", r)
		}
	}
	// The resumed records are those an uninterrupted run generates.
	var straight []string
	for _, task := range startTasks(t, props, 2, memOffsets{}) {
		for _, r := range poll(t, task, 50)[30:50] {
			straight = append(straight, render(r))
		}
	}
	if !slices.Equal(second, straight) {
		t.Fatalf("resumed records differ from an uninterrupted run")
	}
	// Confluent's offsets (with its other keys) are read too.
	offsets = memOffsets{}
	offsets[offsets.key(map[string]any{TaskIDConfig: int64(0)})] = map[string]any{"task.generation": int64(3), CurrentIterationField: int64(5), "random.seed": int64(99)}
	tasks = startTasks(t, props, 1, offsets)
	if tasks[0].next != 5 {
		t.Fatalf("resumed at %d from Confluent's offset", tasks[0].next)
	}
}

func TestCountAndIterations(t *testing.T) {
	c := &Connector{}
	if err := c.Start(context.Background(), map[string]string{"kafka.topic": "t", "quickstart": "users", "count": "2"}); err != nil {
		t.Fatal(err)
	}
	cfgs, _ := c.TaskConfigs(5)
	if len(cfgs) != 2 || cfgs[1][TaskIDConfig] != "1" || cfgs[1][TaskCountConfig] != "2" || cfgs[0][SeedConfig] == "" || cfgs[0][SeedConfig] != cfgs[1][SeedConfig] {
		t.Fatalf("TaskConfigs(5) with count 2: %v", cfgs)
	}
	tasks := startTasks(t, map[string]string{"kafka.topic": "t", "quickstart": "users", "max.interval": "0", "count": "10", "batch.size": "3"}, 3, memOffsets{})
	total := 0
	for i, task := range tasks {
		var got int
		drain(t, task, func(recs []*connect.SourceRecord) {
			if len(recs) > 3 {
				t.Fatalf("batch of %d, batch.size 3", len(recs))
			}
			got += len(recs)
		})
		if want := []int{4, 3, 3}[i]; got != want {
			t.Fatalf("task %d generated %d, want %d", i, got, want)
		}
		total += got
	}
	tasks = startTasks(t, map[string]string{"kafka.topic": "t", "quickstart": "users", "max.interval": "0", "iterations": "7"}, 2, memOffsets{})
	for _, task := range tasks {
		if n := len(poll(t, task, 7)); n != 7 {
			t.Fatalf("iterations=7 gave %d", n)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		recs, err := task.Poll(ctx)
		cancel()
		if len(recs) != 0 || err != nil {
			t.Fatalf("after its iterations a task returned %d records, %v", len(recs), err)
		}
	}
}

func TestPacing(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time pacing")
	}
	// Confluent's pacing: one record per poll after a random wait.
	task := startTasks(t, map[string]string{"kafka.topic": "t", "quickstart": "users", "max.interval": "20"}, 1, memOffsets{})[0]
	start := time.Now()
	for range 10 {
		recs, err := task.Poll(context.Background())
		if err != nil || len(recs) != 1 {
			t.Fatalf("max.interval poll: %d records, %v", len(recs), err)
		}
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("10 records with max.interval=20ms took %v", d)
	}

	// rate: 400 records/s over two tasks.
	tasks := startTasks(t, map[string]string{"kafka.topic": "t", "quickstart": "users", "rate": "400"}, 2, memOffsets{})
	start = time.Now()
	n := 0
	for time.Since(start) < 500*time.Millisecond {
		for _, task := range tasks {
			recs, err := task.Poll(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			n += len(recs)
		}
	}
	// 200 expected in 0.5 s, plus at most one second's burst per task
	// allowance (here capped at the batch size) that never built up.
	if n < 120 || n > 320 {
		t.Fatalf("rate=400 gave %d records in 0.5 s", n)
	}

	// Stop ends a wait at once.
	task = startTasks(t, map[string]string{"kafka.topic": "t", "quickstart": "users", "max.interval": "60000"}, 1, memOffsets{})[0]
	go func() { time.Sleep(20 * time.Millisecond); task.Stop() }()
	start = time.Now()
	if recs, _ := task.Poll(context.Background()); len(recs) != 0 || time.Since(start) > 5*time.Second {
		t.Fatalf("Stop did not end the wait (%d records after %v)", len(recs), time.Since(start))
	}
}

func TestKeys(t *testing.T) {
	// No key: Confluent's optional string schema and null.
	r := poll(t, startTasks(t, map[string]string{"kafka.topic": "t", "value.schema": "a:int32", "max.interval": "0"}, 1, memOffsets{})[0], 1)[0]
	if r.Key != nil || r.KeySchema != connect.OptionalStringSchema {
		t.Fatalf("no key: %v %v", r.Key, r.KeySchema)
	}
	// A value field.
	r = poll(t, startTasks(t, map[string]string{"kafka.topic": "t", "value.schema": "a:int32:seq,b:string", "schema.keyfield": "b", "max.interval": "0"}, 1, memOffsets{})[0], 1)[0]
	if b, _ := r.Value.(*connect.Struct).Get("b"); r.Key != b || r.KeySchema != connect.StringSchema {
		t.Fatalf("keyfield: key %v, field %v", r.Key, b)
	}
	// A generated key; a quickstart's key field gives way to it.
	r = poll(t, startTasks(t, map[string]string{"kafka.topic": "t", "quickstart": "users", "key.schema": "int64:seq", "max.interval": "0"}, 1, memOffsets{})[0], 2)[1]
	if r.Key != int64(1) || r.KeySchema != connect.Int64Schema {
		t.Fatalf("key.schema: %v %v", r.Key, r.KeySchema)
	}
	// Primitive values.
	r = poll(t, startTasks(t, map[string]string{"kafka.topic": "t", "value.schema": "string:order-{seq}", "max.interval": "0"}, 1, memOffsets{})[0], 3)[2]
	if r.Value != "order-2" || r.ValueSchema != connect.StringSchema {
		t.Fatalf("primitive value: %v %v", r.Value, r.ValueSchema)
	}
}

func TestSpecs(t *testing.T) {
	for _, good := range []string{
		"int64", "int64:seq", "string:8..16", "bytes:0..4", "timestamp:now", "timestamp", "float:1.5|2.5", "double:-1..1",
		"id:long:seq, name:string, ok:bool", "n:int8:-128..127", "k:string:constant", "k:int16:7", "s:string:x{seq}y{1..3}z",
		"int64:string", // a field called int64 of type string
		"when:timestamp:1000..2000", "flag:boolean:true|false",
	} {
		sp, err := parseSpec(good, "")
		if err != nil {
			t.Errorf("%q: %v", good, err)
			continue
		}
		a := &arena{}
		for seq := range int64(50) {
			r := newRNG(1, seq)
			v := sp.build(&r, seq, a)
			if err := connect.Validate(sp.schema, v); err != nil {
				t.Errorf("%q: generated %v: %v", good, v, err)
			}
		}
	}
	for bad, msg := range map[string]string{
		"":                 "empty spec",
		"a":                "want NAME:TYPE",
		"a:varchar":        `unknown type "varchar"`,
		"a:int8:0..300":    "range out of INT8 bounds",
		"a:int32:5..1":     "MIN <= MAX",
		"a:boolean:seq":    "no sequence",
		"a:string:x{y}":    "unknown placeholder",
		"a:string:x{1..2":  "unclosed",
		"a:int32:now":      "now is for int64",
		"a:int32:1|x":      `"x" is not an INT32`,
		"a:int32,a:string": "duplication",
		":int32":           "empty name",
		"a:float64:2..1":   "MIN <= MAX",
		"a:string:-1..3":   "lengths",
		"a:int64:{1..2}":   "templates are for strings",
	} {
		if _, err := parseSpec(bad, ""); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: error %v, want %q", bad, err, msg)
		}
	}
}

func TestValidate(t *testing.T) {
	c := &Connector{}
	errorsOf := func(props map[string]string) map[string][]string {
		out := map[string][]string{}
		vals := c.Validate(props)
		if len(vals) != len(c.Config().Keys()) {
			t.Fatalf("Validate returned %d values for %d keys", len(vals), len(c.Config().Keys()))
		}
		for _, cv := range vals {
			if len(cv.Errors) > 0 {
				out[cv.Name] = append(out[cv.Name], cv.Errors...)
			}
		}
		return out
	}
	exactlyOne := "Must set exactly one of quickstart, value.schema, schema.string, schema.filename"
	for _, tc := range []struct {
		props map[string]string
		want  map[string][]string
	}{
		{map[string]string{"kafka.topic": "t", "quickstart": "users"}, map[string][]string{}},
		{map[string]string{"kafka.topic": "t"}, map[string][]string{"quickstart": {exactlyOne}, "value.schema": {exactlyOne}}},
		{map[string]string{"quickstart": "users"}, map[string][]string{"kafka.topic": {`Missing required configuration "kafka.topic" which has no default value.`}}},
		{map[string]string{"kafka.topic": "t", "quickstart": "users", "value.schema": "a:int8"},
			map[string][]string{"quickstart": {exactlyOne}, "value.schema": {exactlyOne}}},
		{map[string]string{"kafka.topic": "t", "quickstart": "nope"},
			map[string][]string{"quickstart": {"Invalid value nope for configuration quickstart: quickstart must be one out of orders,pageviews,ratings,stock_trades,users"}}},
		{map[string]string{"kafka.topic": "t", "quickstart": "USERS", "schema.keyfield": "nope"},
			map[string][]string{"schema.keyfield": {"The schema does not contain the field provided in 'schema.keyfield'"}}},
		{map[string]string{"kafka.topic": "t", "value.schema": "int64", "schema.keyfield": "x"},
			map[string][]string{"schema.keyfield": {"The schema does not contain the field provided in 'schema.keyfield'"}}},
		{map[string]string{"kafka.topic": "t", "schema.string": "{}"}, map[string][]string{
			"schema.string": {"Avro schemas with arg.properties are not supported by Fjord's datagen: use quickstart or value.schema"}}},
		{map[string]string{"kafka.topic": "t", "quickstart": "users", "seed": "1", "random.seed": "2"}, map[string][]string{
			"seed": {"seed and random.seed are the same setting: set one of them"}, "random.seed": {"seed and random.seed are the same setting: set one of them"}}},
		{map[string]string{"kafka.topic": "t", "quickstart": "users", "key.schema": "int64", "schema.keyfield": "userid"}, map[string][]string{
			"key.schema": {"Set only one of key.schema and schema.keyfield"}, "schema.keyfield": {"Set only one of key.schema and schema.keyfield"}}},
		{map[string]string{"kafka.topic": "t", "value.schema": "a:nope", "rate": "-1"}, map[string][]string{
			"value.schema": {`Invalid value a:nope for configuration value.schema: field a: unknown type "nope" (use int8, int16, int32, int64, float32, float64, boolean, string, bytes or timestamp)`},
			"rate":         {"Invalid value -1 for configuration rate: Value must be at least 0"}}},
	} {
		got := errorsOf(tc.props)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%v:\n got %v\nwant %v", tc.props, got, tc.want)
		}
		err := c.Start(context.Background(), tc.props)
		if (err == nil) != (len(tc.want) == 0) {
			t.Errorf("%v: Start error %v", tc.props, err)
		}
	}
}

func TestRegistered(t *testing.T) {
	for _, name := range []string{"datagen", "DatagenConnector", ConnectorClass, ConfluentConnectorClass} {
		p, ok := plugins.Lookup(name)
		if !ok || p.Kind != plugins.Source || p.Class != ConnectorClass {
			t.Fatalf("%s: %v %v", name, p, ok)
		}
		if _, ok := p.New().(connect.SourceConnector); !ok {
			t.Fatalf("%s is not a source connector", name)
		}
	}
}

func TestAlterOffsets(t *testing.T) {
	c := &Connector{}
	ok := func(p, o map[string]any) error {
		_, err := c.AlterOffsets(nil, []connect.SourcePartitionOffset{{Partition: p, Offset: o}})
		return err
	}
	if err := ok(map[string]any{"task.id": int64(0)}, map[string]any{"current.iteration": int64(10)}); err != nil {
		t.Fatal(err)
	}
	if err := ok(map[string]any{"task.id": int64(0)}, nil); err != nil {
		t.Fatal(err)
	}
	if err := ok(map[string]any{"task.id": int64(0)}, map[string]any{"current.iteration": int64(-1)}); err == nil {
		t.Fatal("negative iteration accepted")
	}
	if err := ok(map[string]any{"x": int64(0)}, map[string]any{"current.iteration": int64(1)}); err == nil {
		t.Fatal("partition without task.id accepted")
	}
}

// BenchmarkPoll measures generation alone for a simple schema (the
// Connect benchmark's datagen side).
func BenchmarkPoll(b *testing.B) {
	for _, bc := range []struct{ name, spec string }{
		{"simple", "id:int64:seq,name:string:8..16,amount:float64:0..1000,ok:boolean"},
		{"users", ""},
	} {
		b.Run(bc.name, func(b *testing.B) {
			props := map[string]string{"kafka.topic": "t", "rate": "0", "seed": "1", "batch.size": "1000"}
			if bc.spec != "" {
				props["value.schema"] = bc.spec
			} else {
				props["quickstart"] = bc.name
			}
			task := &Task{}
			task.Initialize(&taskContext{memOffsets{}})
			if err := task.Start(context.Background(), props); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				recs, err := task.Poll(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				n += len(recs)
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
			b.ReportMetric(float64(n)/float64(b.N), "records/op")
		})
	}
}
