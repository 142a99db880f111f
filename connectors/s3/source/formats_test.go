package source

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connectors/s3/format"
	"github.com/fjordhq/fjord/connectors/s3/partitioner"
)

// The real formats through the task's object streaming: values, keys
// (Parquet's RecordKey envelope undone) and headers come back; a format
// that reads in order streams each object with one GET, Parquet (footer
// first) loads it whole.
func TestTaskReadsRealFormats(t *testing.T) {
	rowSchema := connect.NewStruct().Name("Row").Field("id", connect.Int64Schema).Field("name", connect.StringSchema).Build()
	for _, tc := range []struct {
		class    string
		maxOpens int // GETs per object file
	}{
		{"JsonFormat", 1},
		{"AvroFormat", 1},
		{"ParquetFormat", 2},
	} {
		t.Run(tc.class, func(t *testing.T) {
			f, err := format.New(tc.class, nil)
			if err != nil {
				t.Fatal(err)
			}
			s := testSettings(1000)
			s.value, s.keys, s.headers = f, format.KeysFormat(f), f
			s.layout = partitioner.LayoutFrom(map[string]string{})
			b := newFakeBucket()
			const objects, per = 3, 400
			for o := 0; o < objects; o++ {
				var vb, kb, hb bytes.Buffer
				vw, _ := s.value.NewWriter(&vb)
				kw, _ := s.keys.NewWriter(&kb)
				hw, _ := s.headers.NewWriter(&hb)
				for i := o * per; i < (o+1)*per; i++ {
					v := connect.NewStructValue(rowSchema).MustPut("id", int64(i)).MustPut("name", fmt.Sprintf("row-%d", i))
					must(t, vw.Write(rowSchema, v))
					must(t, kw.Write(connect.StringSchema, fmt.Sprintf("k%d", i)))
					hs, hv := format.HeadersView(connect.Headers{{Key: "i", Schema: connect.StringSchema, Value: fmt.Sprint(i)}})
					must(t, hw.Write(hs, hv))
				}
				must(t, vw.Close())
				must(t, kw.Close())
				must(t, hw.Close())
				key := objKey(s, "t", 0, int64(o*per))
				k, h := namingOf(s).sideKeys(key)
				b.put(key, vb.Bytes())
				b.put(k, kb.Bytes())
				b.put(h, hb.Bytes())
			}
			task := startTask(t, b, s, memOffsets{}, tp("t", 0))
			recs := pollN(t, task, objects*per)
			for i, r := range recs {
				id, name := fieldsOf(t, r.Value)
				if id != int64(i) || name != fmt.Sprintf("row-%d", i) {
					t.Fatalf("record %d: value %v", i, r.Value)
				}
				if r.Key != fmt.Sprintf("k%d", i) {
					t.Fatalf("record %d: key %v (%v)", i, r.Key, r.KeySchema)
				}
				if len(r.Headers) != 1 || r.Headers[0].Key != "i" || r.Headers[0].Value != fmt.Sprint(i) {
					t.Fatalf("record %d: headers %v", i, r.Headers)
				}
			}
			t.Logf("%d GETs", b.opens)
			if max := 3 * objects * tc.maxOpens; b.opens > max {
				t.Errorf("%d GETs for %d objects with side files, want at most %d", b.opens, objects, max)
			}
		})
	}
}

// fieldsOf reads id and name from a struct (Avro, Parquet) or a map
// (JSON, schemaless).
func fieldsOf(t *testing.T, v any) (int64, string) {
	t.Helper()
	switch x := v.(type) {
	case *connect.Struct:
		id, _ := x.Get("id")
		name, _ := x.Get("name")
		n, _ := connect.OffsetLong(id)
		s, _ := name.(string)
		return n, s
	case map[string]any:
		n, _ := connect.OffsetLong(x["id"])
		s, _ := x["name"].(string)
		return n, s
	}
	t.Fatalf("value %T %v", v, v)
	return 0, ""
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
