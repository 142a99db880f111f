package format

import (
	"bytes"
	"fmt"
	"io"
	"math/big"
	"testing"
	"time"

	"github.com/linkedin/goavro/v2"

	"github.com/fjordhq/fjord/connect"
	avroconv "github.com/fjordhq/fjord/converters/avro"
	"github.com/fjordhq/fjord/converters/avro/avsc"
)

// goavro's own container reader (an independent Avro implementation)
// reads what AvroFormat writes, for every codec, with the header schema
// AvroData makes.
func TestAvroReadByGoavro(t *testing.T) {
	wantSchema, err := avroconv.SchemaFromConnect(richSchema, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, codec := range []string{"null", "deflate", "snappy"} {
		t.Run(codec, func(t *testing.T) {
			f := mustNew(t, "AvroFormat", map[string]string{AvroCodecConfig: codec})
			b := writeAll(t, f, richSchema, structsAsAny(richRecords())...)
			r, err := goavro.NewOCFReader(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if got := string(r.MetaData()["avro.schema"]); got != wantSchema.String() {
				t.Errorf("header schema\n%s\nwant\n%s", got, wantSchema)
			}
			if r.CompressionName() != codec {
				t.Errorf("codec %s", r.CompressionName())
			}
			var got []map[string]any
			for r.Scan() {
				v, err := r.Read()
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, v.(map[string]any))
			}
			if r.Err() != nil || len(got) != 3 {
				t.Fatalf("%d records, %v", len(got), r.Err())
			}
			r1 := got[0]
			checks := map[string]any{
				"i8": int32(-8), "i16": int32(1600), "i32": int32(-320000), "i64": int64(1) << 40,
				"f32": float32(1.5), "f64": 2.25, "flag": true, "str": "héllo \"wörld\"\n",
				"day": time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC),
				"tod": 49501234 * time.Millisecond,
				"ts":  time.UnixMilli(1718000000123).UTC(),
			}
			for k, want := range checks {
				if g := r1[k]; fmt.Sprint(g) != fmt.Sprint(want) {
					t.Errorf("%s = %v (%T), want %v", k, g, g, want)
				}
			}
			if d, ok := r1["dec"].(*big.Rat); !ok || d.Cmp(big.NewRat(-12345, 100)) != 0 {
				t.Errorf("dec = %v", r1["dec"])
			}
			if !bytes.Equal(r1["raw"].([]byte), []byte{0, 1, 2, 0xff}) {
				t.Errorf("raw = %v", r1["raw"])
			}
			if fmt.Sprint(r1["opt_str"]) != "map[string:present]" || got[1]["opt_str"] != nil {
				t.Errorf("opt_str = %v / %v", r1["opt_str"], got[1]["opt_str"])
			}
			if fmt.Sprint(r1["counts"]) != "map[x:1 y:2]" {
				t.Errorf("counts = %v", r1["counts"])
			}
			if fmt.Sprint(r1["names"]) != "[map[key:-2 value:minus two] map[key:1 value:one]]" {
				t.Errorf("names = %v", r1["names"])
			}
			if fmt.Sprint(r1["inner"]) != "map[a:1 b:map[string:one]]" {
				t.Errorf("inner = %v", r1["inner"])
			}
		})
	}
}

// Blocks are cut at Java's sync interval; many records span several.
func TestAvroManyBlocks(t *testing.T) {
	f := mustNew(t, "AvroFormat", map[string]string{AvroCodecConfig: "deflate"})
	const n = 3000
	values := make([]any, n)
	for i := range values {
		values[i] = inner(int32(i), fmt.Sprintf("value %d with some padding to fill blocks", i))
	}
	b := writeAll(t, f, innerSchema, values...)
	r, err := goavro.NewOCFReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	count, blocks := 0, 0
	for r.Scan() {
		if _, err := r.Read(); err != nil {
			t.Fatal(err)
		}
		if r.RemainingBlockItems() == 0 {
			blocks++
		}
		count++
	}
	if count != n || blocks < 2 {
		t.Errorf("goavro read %d records in %d blocks", count, blocks)
	}
	recs := readAll(t, f, b)
	if len(recs) != n {
		t.Fatalf("read %d", len(recs))
	}
	if err := sameValue(values[n-1], recs[n-1].v); err != nil {
		t.Error(err)
	}
}

func TestAvroPrimitiveAndOptionalSchemas(t *testing.T) {
	f := mustNew(t, "AvroFormat", nil)
	b := writeAll(t, f, connect.OptionalStringSchema, "a", nil, "c")
	recs := readAll(t, f, b)
	if len(recs) != 3 || recs[0].v != "a" || recs[1].v != nil || recs[2].v != "c" || !recs[0].s.Optional {
		t.Errorf("read %v", recs)
	}
	b = writeAll(t, f, connect.Int16Schema, int16(-3))
	recs = readAll(t, f, b)
	if len(recs) != 1 || recs[0].v != int16(-3) || recs[0].s.Type != connect.Int16 {
		t.Errorf("read %v", recs)
	}
}

func TestAvroRefuses(t *testing.T) {
	f := mustNew(t, "AvroFormat", nil)
	w, _ := f.NewWriter(io.Discard)
	if err := w.Write(nil, map[string]any{"a": int64(1)}); err == nil {
		t.Error("schemaless value written")
	}
	w, _ = f.NewWriter(io.Discard)
	if err := w.Write(connect.StringSchema, nil); err == nil {
		t.Error("null for a required schema written")
	}
	w, _ = f.NewWriter(io.Discard)
	if err := w.Write(connect.StringSchema, "x"); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(connect.Int32Schema, int32(1)); err == nil {
		t.Error("a second schema went into the same file")
	}
	if _, err := New("AvroFormat", map[string]string{AvroCodecConfig: "bzip2"}); err == nil {
		t.Error("bzip2 accepted")
	}
	// Nothing written: the object stays empty and reads as no records.
	b := writeAll(t, f, nil)
	if len(b) != 0 || len(readAll(t, f, b)) != 0 {
		t.Errorf("an unused writer wrote %d bytes", len(b))
	}
}

// With enhanced.avro.schema.support (the default), a string that came
// from an Avro enum is written back as that enum; without, as a string.
func TestAvroEnhancedEnums(t *testing.T) {
	color := connect.NewSchema(connect.String).Name("com.example.Color").
		Parameter(enumParam, "com.example.Color").
		Parameter(enumParam+".RED", "RED").Parameter(enumParam+".GREEN", "GREEN").Build()
	s := connect.NewStruct().Name("com.example.Paint").Field("c", color).
		Field("maybe", connect.FromSchema(color).Optional().Build()).Build()
	v := connect.NewStructValue(s).MustPut("c", "GREEN")
	for _, enhanced := range []string{"true", "false"} {
		f := mustNew(t, "AvroFormat", map[string]string{EnhancedAvroConfig: enhanced})
		b := writeAll(t, f, s, v)
		r, err := goavro.NewOCFReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		a, err := avsc.Parse(string(r.MetaData()["avro.schema"]))
		if err != nil {
			t.Fatal(err)
		}
		typ := a.Field("c").Type
		if wantEnum := enhanced == "true"; (typ.Type == avsc.Enum) != wantEnum {
			t.Errorf("enhanced=%s: c is %s", enhanced, typ.Type)
		}
		if enhanced == "true" && fmt.Sprint(typ.Symbols) != "[RED GREEN]" {
			t.Errorf("symbols %v", typ.Symbols)
		}
		recs := readAll(t, f, b)
		if len(recs) != 1 {
			t.Fatal(len(recs))
		}
		if err := sameValue(v, recs[0].v); err != nil {
			t.Error(err)
		}
	}
	w, _ := mustNew(t, "AvroFormat", nil).NewWriter(io.Discard)
	if err := w.Write(s, connect.NewStructValue(s).MustPut("c", "BLUE")); err == nil {
		t.Error("a string that is no enum symbol was written")
	}
}
