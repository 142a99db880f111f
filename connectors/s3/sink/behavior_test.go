package sink

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/internal/testkit"
)

func decodeAll(t *testing.T, task *Task, key string) []any {
	t.Helper()
	b := readObject(t, task, key)
	r, err := task.s.valueFormat.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var out []any
	for {
		_, v, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
}

// behavior.on.null.values: fail stops the task with Confluent's message,
// ignore skips tombstones, write puts them in the tombstone directory with
// their keys.
func TestNullValues(t *testing.T) {
	testkit.SkipShort(t, "needs the S3 server")
	srv := testkit.StartS3(t)
	recs := func() []*connect.SinkRecord {
		rs := records("t", 0, 6)
		rs[2].Value, rs[2].ValueSchema = nil, nil
		rs[4].Value, rs[4].ValueSchema = nil, nil
		return rs
	}
	for _, mode := range []string{"fail", "ignore", "write"} {
		t.Run(mode, func(t *testing.T) {
			bucket := "nulls-" + mode
			srv.CreateBucket(t, bucket)
			props := map[string]string{"name": "n", "topics": "t", "flush.size": "2",
				"format.class": "JsonFormat", "behavior.on.null.values": mode}
			if mode == "write" {
				props["store.kafka.keys"], props["keys.format.class"] = "true", "JsonFormat"
			}
			maps.Copy(props, srv.Props(bucket))
			task, _ := startTask(t, props)
			defer task.Stop()
			err := task.Put(context.Background(), recs())
			if mode == "fail" {
				if err == nil || !strings.Contains(err.Error(), "null valued records are not writeable") {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			waitDurable(t, task, 6)
			keys := listKeys(t, task)
			var want []string
			switch mode {
			case "ignore": // 0,1 | 3,5 (2 and 4 skipped)
				want = []string{"topics/t/partition=0/t+0+0000000000.json", "topics/t/partition=0/t+0+0000000003.json"}
			case "write": // a tombstone switch commits the files: 0,1 | 2 | 3 | 4 | 5
				for _, c := range []struct {
					dir string
					off int
				}{{"partition=0", 0}, {"tombstone", 2}, {"partition=0", 3}, {"tombstone", 4}, {"partition=0", 5}} {
					base := fmt.Sprintf("topics/t/%s/t+0+%010d", c.dir, c.off)
					want = append(want, base+".json", base+".keys.json")
				}
				slices.Sort(want)
			}
			if !slices.Equal(keys, want) {
				t.Fatalf("keys %v, want %v", keys, want)
			}
			if mode == "write" {
				if got := decodeAll(t, task, "topics/t/tombstone/t+0+0000000002.json"); len(got) != 1 || got[0] != nil {
					t.Fatalf("tombstone file holds %v, want one null", got)
				}
			}
		})
	}
}

// schema.compatibility: NONE starts a new file when the schema changes;
// BACKWARD starts one for a newer version and projects an older record
// onto the file's newer schema.
func TestSchemaChanges(t *testing.T) {
	testkit.SkipShort(t, "needs the S3 server")
	srv := testkit.StartS3(t)
	v := func(n int32, withB bool) *connect.Schema {
		b := connect.NewStruct().Name("r").Field("id", connect.Int64Schema)
		if withB {
			b = b.Field("b", connect.OptionalStringSchema)
		}
		s := b.Build()
		s.Version = &n
		return s
	}
	v1, v2 := v(1, false), v(2, true)
	rec := func(off int64, s *connect.Schema) *connect.SinkRecord {
		st := connect.NewStructValue(s).MustPut("id", off)
		return &connect.SinkRecord{Topic: "t", Offset: off, Timestamp: 1, Value: st, ValueSchema: s}
	}
	// v1 v1 v2 v1 v2
	batch := []*connect.SinkRecord{rec(0, v1), rec(1, v1), rec(2, v2), rec(3, v1), rec(4, v2)}
	for _, c := range []struct {
		compat string
		want   []string
	}{
		{"NONE", []string{"0", "2", "3", "4"}}, // every change
		{"BACKWARD", []string{"0", "2"}},       // v1 after v2 is projected
	} {
		t.Run(c.compat, func(t *testing.T) {
			bucket := "schemas-" + strings.ToLower(c.compat)
			srv.CreateBucket(t, bucket)
			props := map[string]string{"name": "s", "topics": "t", "flush.size": "3",
				"format.class": "AvroFormat", "schema.compatibility": c.compat}
			maps.Copy(props, srv.Props(bucket))
			task, _ := startTask(t, props)
			defer task.Stop()
			if err := task.Put(context.Background(), batch); err != nil {
				t.Fatal(err)
			}
			last := int64(5)
			if c.compat == "NONE" {
				last = 4 // record 4 opened a file flush.size has not closed
			}
			waitDurable(t, task, last)
			var want []string
			for _, o := range c.want {
				if c.compat == "NONE" && o == "4" {
					continue
				}
				want = append(want, fmt.Sprintf("topics/t/partition=0/t+0+%010s.avro", o))
			}
			if got := listKeys(t, task); !slices.Equal(got, want) {
				t.Fatalf("keys %v, want %v", got, want)
			}
			if c.compat == "BACKWARD" {
				got := decodeAll(t, task, want[1])
				if len(got) != 3 {
					t.Fatalf("%s holds %d records, want 3 (v2, v1 projected, v2)", want[1], len(got))
				}
				st := got[1].(*connect.Struct)
				if id, _ := st.Get("id"); id != int64(3) {
					t.Fatalf("projected record id %v", id)
				}
				if st.Schema().Field("b") == nil {
					t.Fatal("the projected record lacks the newer schema's field b")
				}
			}
		})
	}
}

// rotate.interval.ms measures record time from a commit's first record:
// with the hourly partitioner and record timestamps a second apart, a
// file every 10 records, and a new hour commits the files at once.
func TestRotateIntervalRecordTime(t *testing.T) {
	testkit.SkipShort(t, "needs the S3 server")
	srv := testkit.StartS3(t)
	srv.CreateBucket(t, "rotate")
	props := map[string]string{"name": "r", "topics": "t", "flush.size": "1000", "rotate.interval.ms": "10000",
		"format.class": "JsonFormat", "partitioner.class": "HourlyPartitioner", "timestamp.extractor": "Record",
		"locale": "en-US", "timezone": "UTC"}
	maps.Copy(props, srv.Props("rotate"))
	task, _ := startTask(t, props)
	defer task.Stop()
	// 25 records a second apart from 09:59:50: offsets 0-9 in hour 09;
	// hour 10 from offset 10 (the partition change rotates); 10 s after
	// offset 10 the interval rotates again; 20-24 stay open.
	base := int64(1_764_410_390_000) // 2025-11-29T09:59:50Z
	var recs []*connect.SinkRecord
	for i := int64(0); i < 25; i++ {
		r := records("t", i, i+1)[0]
		r.Timestamp = base + i*1000
		recs = append(recs, r)
	}
	if err := task.Put(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	waitDurable(t, task, 20)
	want := []string{
		"topics/t/year=2025/month=11/day=29/hour=09/t+0+0000000000.json",
		"topics/t/year=2025/month=11/day=29/hour=10/t+0+0000000010.json",
	}
	if got := listKeys(t, task); !slices.Equal(got, want) {
		t.Fatalf("keys %v, want %v", got, want)
	}
	if n := len(decodeAll(t, task, want[1])); n != 10 {
		t.Fatalf("%s holds %d records, want 10 (rotate.interval.ms)", want[1], n)
	}
}
