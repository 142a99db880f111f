package avro

import (
	"context"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fjordhq/fjord/api/schemaregistry"
	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/plugins"
)

// registry starts Fjord's schema registry (in memory) for a test.
func registry(t testing.TB) (*schemaregistry.Server, string) {
	t.Helper()
	srv, err := schemaregistry.New(schemaregistry.Config{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { hs.Close(); srv.Close() })
	return srv, hs.URL
}

func converter(t *testing.T, isKey bool, props map[string]string) *Converter {
	t.Helper()
	c := NewConverter()
	if err := c.Configure(props, isKey); err != nil {
		t.Fatal(err)
	}
	return c
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var (
	userSchema = connect.NewStruct().Name("com.acme.User").
			Field("id", connect.Int64Schema).
			Field("name", connect.StringSchema).
			Field("email", connect.OptionalStringSchema).
			Field("active", connect.BooleanSchema).Build()
	primSchema = connect.NewStruct().Name("P").
			Field("i8", connect.Int8Schema).Field("i16", connect.Int16Schema).
			Field("i32", connect.Int32Schema).Field("i64", connect.Int64Schema).
			Field("f32", connect.Float32Schema).Field("f64", connect.Float64Schema).
			Field("b", connect.BooleanSchema).Field("raw", connect.BytesSchema).Build()
	logicalSchema = connect.NewStruct().Name("L").
			Field("d", connect.DateSchema().Build()).Field("t", connect.TimeSchema().Build()).
			Field("ts", connect.TimestampSchema().Build()).Field("dec", connect.DecimalSchema(2).Build()).
			Field("neg", connect.DecimalSchema(2).Build()).Build()
	collSchema = connect.NewStruct().Name("C").
			Field("arr", connect.NewArray(connect.Int32Schema).Build()).
			Field("m", connect.NewMap(connect.StringSchema, connect.Int32Schema).Build()).
			Field("mi", connect.NewMap(connect.Int32Schema, connect.StringSchema).Build()).Build()
)

// Expected bytes are written out from the Avro specification
// (https://avro.apache.org/docs/1.12.0/specification/#binary-encoding)
// and Confluent's wire format, not produced by any encoder: magic 0,
// schema id as 4 big-endian bytes, then ints/longs as zig-zag varints,
// strings and bytes as a varint length and the bytes, floats and
// doubles little-endian IEEE 754, booleans one byte, a union as the
// branch index then the value, arrays and maps as blocks (count, items,
// 0), record fields in order.
func TestWireFormatGolden(t *testing.T) {
	mustValue := func(s *connect.Schema, kv ...any) *connect.Struct {
		st := connect.NewStructValue(s)
		for i := 0; i < len(kv); i += 2 {
			st.MustPut(kv[i].(string), kv[i+1])
		}
		return st
	}
	cases := []struct {
		name  string
		isKey bool
		s     *connect.Schema
		v     any
		want  string
	}{
		{"record, null union branch", false, userSchema, mustValue(userSchema, "id", int64(1), "name", "ab", "active", true),
			"00 00000001" + // magic, schema id 1
				"02" + // id: long 1 → zig-zag 2
				"04 6162" + // name: length 2, "ab"
				"00" + // email: union branch 0 (null)
				"01"}, // active: true
		{"record, string union branch", false, userSchema, mustValue(userSchema, "id", int64(-3), "name", "", "email", "x@y", "active", false),
			"00 00000001" + "05" + // id: -3 → zig-zag 5
				"00" + // name: empty string
				"02 06 784079" + // email: branch 1, length 3, "x@y"
				"00"},
		{"primitives", false, primSchema, mustValue(primSchema, "i8", int8(-1), "i16", int16(300), "i32", int32(-64), "i64", int64(1)<<40,
			"f32", float32(1.5), "f64", float64(-2), "b", false, "raw", []byte{0x01, 0xff}),
			"00 00000001" +
				"01" + // int8 -1 → zig-zag 1
				"d804" + // int16 300 → zig-zag 600 = 0b100_1011000 → d8 04
				"7f" + // int32 -64 → zig-zag 127
				"808080808040" + // int64 2^40 → zig-zag 2^41: five 0x80 groups, then 0x40
				"0000c03f" + // float 1.5 = 0x3fc00000, little-endian
				"00000000000000c0" + // double -2.0 = 0xc000000000000000, little-endian
				"00" + // false
				"04 01ff"}, // bytes: length 2
		{"logical types", false, logicalSchema, mustValue(logicalSchema,
			"d", time.Date(1970, 1, 11, 0, 0, 0, 0, time.UTC), // 10 days
			"t", time.UnixMilli(1000).UTC(),
			"ts", time.UnixMilli(1_000_000).UTC(),
			"dec", connect.NewDecimal(1234, 2), // 12.34 → unscaled 1234 = 0x04d2
			"neg", connect.NewDecimal(-100, 2)), // -1.00 → unscaled -100 = 0x9c
			"00 00000001" +
				"14" + // date: 10 → zig-zag 20
				"d00f" + // time-millis 1000 → zig-zag 2000 = 0x7d0
				"80897a" + // timestamp-millis 1e6 → zig-zag 2e6 = 0x1e8480
				"04 04d2" + // decimal bytes: length 2, big-endian two's complement
				"02 9c"},
		{"array and maps", false, collSchema, mustValue(collSchema, "arr", []any{int32(1), int32(2)},
			"m", map[string]any{"a": int32(1)}, "mi", map[any]any{int32(5): "x"}),
			"00 00000001" +
				"04 02 04 00" + // array block of 2: 1, 2; end
				"02 02 61 02 00" + // map block of 1: "a" → 1; end
				"02 0a 02 78 00"}, // MapEntry array block of 1: key 5, value "x"; end
		{"primitive key", true, connect.StringSchema, "hi", "00 00000001 04 6869"},
		{"schemaless string (Anything record)", false, nil, "x",
			"00 00000001" +
				"00 00 00 00 00 00" + // boolean, bytes, double, float, int, long: null branch
				"02 02 78" + // string: branch 1, "x"
				"00 00"}, // array, map: null branch
		{"optional null is a tombstone", false, connect.OptionalInt32Schema, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, url := registry(t)
			conv := converter(t, c.isKey, map[string]string{KeyRegistryURL: url})
			got, err := conv.FromConnectData("t", nil, c.s, c.v)
			if err != nil {
				t.Fatal(err)
			}
			if want := unhex(t, c.want); hex.EncodeToString(got) != hex.EncodeToString(want) {
				t.Fatalf("bytes\n got %x\nwant %x", got, want)
			}
			if c.v == nil {
				if got != nil {
					t.Fatalf("null value → %x, want nil", got)
				}
				return
			}
			s, v, err := conv.ToConnectData("t", nil, got)
			if err != nil {
				t.Fatal(err)
			}
			var wantSchema *connect.Schema
			if c.s != nil {
				wantSchema = connect.FromSchema(c.s).Version(1).Build()
			}
			if !s.Equal(wantSchema) {
				t.Errorf("schema back %+v, want %+v", s, wantSchema)
			}
			if st, ok := c.v.(*connect.Struct); ok {
				// Compare field by field: the struct back has the versioned schema.
				got := v.(*connect.Struct)
				for i := range c.s.Fields {
					f := &c.s.Fields[i]
					if !connect.ValuesEqual(st.GetField(f), got.GetField(&s.Fields[i])) {
						t.Errorf("field %s back %v, want %v", f.Name, got.GetField(&s.Fields[i]), st.GetField(f))
					}
				}
			} else if !connect.ValuesEqual(v, c.v) {
				t.Errorf("value back %v, want %v", v, c.v)
			}
		})
	}
}

// The schema id is written big-endian: a schema imported with id
// 0x01020304 is referenced as 01 02 03 04.
func TestWireFormatBigEndianID(t *testing.T) {
	srv, url := registry(t)
	ctx := context.Background()
	r := srv.Registry()
	if _, err := r.SetMode(ctx, "", "IMPORT", false); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Register(ctx, "t-value", schemaregistry.RegisterRequest{Schema: `"long"`, ID: 0x01020304, Version: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.SetMode(ctx, "", "READWRITE", false); err != nil {
		t.Fatal(err)
	}
	conv := converter(t, false, map[string]string{KeyRegistryURL: url})
	got, err := conv.FromConnectData("t", nil, connect.Int64Schema, int64(-1))
	if err != nil {
		t.Fatal(err)
	}
	if want := "000102030401"; hex.EncodeToString(got) != want {
		t.Fatalf("got %x, want %s", got, want)
	}
}

// Bytes a Confluent serializer wrote for a schema no Connect converter
// made (hand-encoded from the spec): enums, fixed, multi-type unions,
// nested records, field defaults and docs come back as AvroData makes
// them.
func TestDecodeConfluentSerializerRecord(t *testing.T) {
	srv, url := registry(t)
	schema := `{"type":"record","name":"Order","namespace":"com.acme","doc":"an order","fields":[
		{"name":"id","type":"long","doc":"order id"},
		{"name":"status","type":{"type":"enum","name":"Status","symbols":["NEW","PAID"]}},
		{"name":"hash","type":{"type":"fixed","name":"Hash","size":2}},
		{"name":"ref","type":["null","string","long"]},
		{"name":"lines","type":{"type":"array","items":{"type":"record","name":"Line","fields":[{"name":"qty","type":"int","default":1}]}}},
		{"name":"prices","type":{"type":"map","values":"double"}},
		{"name":"note","type":["null","string"],"default":null}]}`
	id, err := srv.Registry().Register(context.Background(), "orders-value", schemaregistry.RegisterRequest{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if id != 1 {
		t.Fatalf("id %d", id)
	}
	msg := unhex(t, "00 00000001"+
		"54"+ // id 42 → zig-zag 84
		"02"+ // status: enum index 1 = PAID
		"abcd"+ // hash: 2 fixed bytes
		"04 0e"+ // ref: branch 2 (long), 7 → zig-zag 14
		"04 06 08 00"+ // lines: block of 2 records: qty 3, qty 4; end
		"02 02 78 000000000000f83f 00"+ // prices: {"x": 1.5}; end
		"00") // note: null
	conv := converter(t, false, map[string]string{KeyRegistryURL: url})
	s, v, err := conv.ToConnectData("orders", nil, msg)
	if err != nil {
		t.Fatal(err)
	}
	line := connect.NewStruct().Name("com.acme.Line").
		Field("qty", connect.NewSchema(connect.Int32).Default(int32(1)).Parameter(fieldDefaultFlag, "true").Build()).Build()
	ref := connect.NewStruct().Name(unionName).Optional().
		Field("string", connect.OptionalStringSchema).Field("long", connect.OptionalInt64Schema).Build()
	want := connect.NewStruct().Name("com.acme.Order").Version(1).
		Parameter(recordDocParam, "an order").
		Parameter(fieldDocPrefix+"id", "order id").
		Field("id", connect.Int64Schema).
		Field("status", connect.NewSchema(connect.String).Name("com.acme.Status").
			Parameter(enumParam, "com.acme.Status").Parameter(enumParam+".NEW", "NEW").Parameter(enumParam+".PAID", "PAID").Build()).
		Field("hash", connect.NewSchema(connect.Bytes).Name("com.acme.Hash").Parameter(paramFixedSize, "2").Build()).
		Field("ref", ref).
		Field("lines", connect.NewArray(line).Build()).
		Field("prices", connect.NewMap(connect.StringSchema, connect.Float64Schema).Build()).
		Field("note", connect.OptionalStringSchema).
		Build()
	if !s.Equal(want) {
		t.Fatalf("schema\n got %+v\nwant %+v", s, want)
	}
	st := v.(*connect.Struct)
	check := func(field string, want any) {
		t.Helper()
		got, err := st.Get(field)
		if err != nil {
			t.Fatal(err)
		}
		if !connect.ValuesEqual(got, want) {
			t.Errorf("%s = %v (%T), want %v", field, got, got, want)
		}
	}
	check("id", int64(42))
	check("status", "PAID")
	check("hash", []byte{0xab, 0xcd})
	check("ref", connect.NewStructValue(ref).MustPut("long", int64(7)))
	check("lines", []any{connect.NewStructValue(line).MustPut("qty", int32(3)), connect.NewStructValue(line).MustPut("qty", int32(4))})
	check("prices", map[string]any{"x": 1.5})
	check("note", nil)
	if err := st.Validate(); err != nil {
		t.Errorf("decoded struct invalid: %v", err)
	}
}

func TestSubjectNameStrategies(t *testing.T) {
	srv, url := registry(t)
	for _, c := range []struct {
		strategy string
		isKey    bool
		subject  string
	}{
		{"", false, "orders-value"},
		{"", true, "orders-key"},
		{RecordNameStrategy, false, "com.acme.User"},
		{TopicRecordNameStrategy, false, "orders-com.acme.User"},
		{"TopicRecordNameStrategy", true, "orders-com.acme.User"},
	} {
		props := map[string]string{KeyRegistryURL: url}
		if c.strategy != "" {
			props[KeyValueStrategy] = c.strategy
			props[KeyKeyStrategy] = c.strategy
		}
		conv := converter(t, c.isKey, props)
		v := connect.NewStructValue(userSchema).MustPut("id", int64(1)).MustPut("name", "n").MustPut("active", true)
		if _, err := conv.FromConnectData("orders", nil, userSchema, v); err != nil {
			t.Fatal(err)
		}
		if _, err := srv.Registry().Version(c.subject, "latest", false); err != nil {
			t.Errorf("strategy %q key=%v: subject %s not registered: %v", c.strategy, c.isKey, c.subject, err)
		}
	}
	if err := NewConverter().Configure(map[string]string{KeyRegistryURL: url, KeyValueStrategy: "com.example.Nope"}, false); err == nil {
		t.Error("unknown strategy accepted")
	}
}

func TestAutoRegisterOffAndUseLatest(t *testing.T) {
	srv, url := registry(t)
	v := connect.NewStructValue(userSchema).MustPut("id", int64(1)).MustPut("name", "n").MustPut("active", true)
	lookup := converter(t, false, map[string]string{KeyRegistryURL: url, KeyAutoRegister: "false"})
	if _, err := lookup.FromConnectData("t", nil, userSchema, v); err == nil || !strings.Contains(err.Error(), "40401") {
		t.Fatalf("lookup of an unregistered schema: %v, want a 40401 error", err)
	}
	reg := converter(t, false, map[string]string{KeyRegistryURL: url})
	want, err := reg.FromConnectData("t", nil, userSchema, v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := lookup.FromConnectData("t", nil, userSchema, v)
	if err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(got) != hex.EncodeToString(want) {
		t.Errorf("lookup bytes %x, want %x", got, want)
	}

	// use.latest.version writes with the subject's latest schema (here a
	// compatible v2 with an extra defaulted field) and its id.
	v2 := `{"type":"record","name":"User","namespace":"com.acme","fields":[{"name":"id","type":"long"},{"name":"name","type":"string"},` +
		`{"name":"email","type":["null","string"],"default":null},{"name":"active","type":"boolean"},{"name":"score","type":"int","default":7}],"connect.name":"com.acme.User"}`
	id, err := srv.Registry().Register(context.Background(), "t-value", schemaregistry.RegisterRequest{Schema: v2})
	if err != nil {
		t.Fatal(err)
	}
	latest := converter(t, false, map[string]string{KeyRegistryURL: url, KeyUseLatest: "true", KeyAutoRegister: "false"})
	b, err := latest.FromConnectData("t", nil, userSchema, v)
	if err != nil {
		t.Fatal(err)
	}
	if want := unhex(t, "00 0000000"+string(rune('0'+id))+" 02 02 6e 00 01 0e"); hex.EncodeToString(b) != hex.EncodeToString(want) {
		t.Errorf("use.latest.version bytes %x, want %x", b, want)
	}
}

// Several URLs: a dead one is skipped; basic auth credentials are sent.
func TestClientFailoverAndBasicAuth(t *testing.T) {
	_, url := registry(t)
	var sawAuth atomic.Value
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, _ := r.BasicAuth()
		sawAuth.Store(u + ":" + p)
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, url+r.URL.Path, r.Body)
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			w.WriteHeader(502)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		buf := make([]byte, 1<<16)
		n, _ := resp.Body.Read(buf)
		w.Write(buf[:n])
	}))
	defer proxy.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	conv := converter(t, false, map[string]string{
		KeyRegistryURL: deadURL + "," + proxy.URL,
		KeyAuthSource:  "USER_INFO", KeyAuthUserInfo: "fred:secret",
	})
	if _, err := conv.FromConnectData("t", nil, connect.StringSchema, "x"); err != nil {
		t.Fatal(err)
	}
	if got, _ := sawAuth.Load().(string); got != "fred:secret" {
		t.Errorf("basic auth %q, want fred:secret", got)
	}
}

func TestDecodeErrors(t *testing.T) {
	_, url := registry(t)
	conv := converter(t, false, map[string]string{KeyRegistryURL: url})
	for _, b := range [][]byte{{}, {1, 0, 0, 0, 1, 2}, {0, 0, 0}, {0, 0, 0, 0, 9, 2}} {
		if _, _, err := conv.ToConnectData("t", nil, b); err == nil {
			t.Errorf("ToConnectData(%x) succeeded", b)
		} else if _, ok := err.(*connect.DataError); !ok {
			t.Errorf("ToConnectData(%x) error %T, want *connect.DataError", b, err)
		}
	}
	if s, v, err := conv.ToConnectData("t", nil, nil); s != nil || v != nil || err != nil {
		t.Errorf("null message → %v %v %v", s, v, err)
	}
	if _, err := conv.FromConnectData("t", nil, nil, struct{}{}); err == nil {
		t.Error("schemaless value of an unknown Go type accepted")
	}
	if _, err := conv.FromConnectData("t", nil, connect.Int32Schema, "not an int"); err == nil {
		t.Error("mismatched value accepted")
	}
}

func TestRegisteredAsPlugin(t *testing.T) {
	for _, name := range []string{Class, "AvroConverter", "Avro"} {
		p, err := plugins.LookupKind(name, plugins.Converter)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p.New().(connect.Converter); !ok {
			t.Errorf("%s is not a connect.Converter", name)
		}
	}
	if k := ConfigDef().Key(KeyRegistryURL); k == nil || !k.Required() {
		t.Error("schema.registry.url should be required")
	}
	if err := NewConverter().Configure(map[string]string{}, false); err == nil || !strings.Contains(err.Error(), "schema.registry.url") {
		t.Errorf("missing schema.registry.url: %v", err)
	}
}
