package avro

import (
	"context"
	"testing"

	"github.com/fjordhq/fjord/api/schemaregistry"
	"github.com/fjordhq/fjord/connect"
)

// FuzzToConnectData feeds arbitrary messages to the wire-format decoder
// over a registry holding a few schemas (ids 1..5, 5 the schemaless
// Anything record): it must never panic,
// and what it decodes must encode and decode back to the same value.
// (An enum inside a union is left out: without enhanced schema support
// it becomes a Connect string, and Confluent's AvroData cannot write
// such a union back either.)
func FuzzToConnectData(f *testing.F) {
	for _, seed := range []string{
		"", "00", "0000000001", "000000000102", "0000000002 02 0461 62 00 01", "0000000003 04 02 04 00 02 02 61 02 00 02 0a 02 78 00",
		"0000000004 ff ff ff ff 0f", "0100000001", "0000000009 00",
		"0000000005 000000000000 020278 0000", "0000000005 00000000000000 02 02 000000000000 02 02 0000 00 0000",
	} {
		f.Add(unhexNoT(seed))
	}
	srv, err := schemaregistry.New(schemaregistry.Config{Logger: quietLogger()})
	if err != nil {
		f.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		f.Fatal(err)
	}
	defer srv.Close()
	// Unrelated schemas under one subject: compatibility off.
	if _, err := srv.Registry().SetConfig(context.Background(), "", "NONE"); err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		`"long"`,
		`{"type":"record","name":"User","namespace":"com.acme","fields":[{"name":"id","type":"long"},{"name":"name","type":"string"},{"name":"email","type":["null","string"],"default":null},{"name":"active","type":"boolean"}]}`,
		`{"type":"record","name":"C","fields":[{"name":"arr","type":{"type":"array","items":"int"}},{"name":"m","type":{"type":"map","values":"int"}},{"name":"mi","type":{"type":"array","items":{"type":"record","name":"MapEntry","namespace":"io.confluent.connect.avro","fields":[{"name":"key","type":"int"},{"name":"value","type":"string"}]}}}]}`,
		`{"type":"record","name":"L","fields":[{"name":"d","type":{"type":"int","logicalType":"date"}},{"name":"dec","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},{"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"]}},{"name":"u","type":["null","int","string",{"type":"fixed","name":"F","size":3}]}]}`,
		anythingText,
	} {
		if _, err := srv.Registry().Register(context.Background(), "t-value", schemaregistry.RegisterRequest{Schema: s}); err != nil {
			f.Fatal(err)
		}
	}
	hs := newTestServer(srv)
	defer hs.Close()
	conv := NewConverter()
	if err := conv.Configure(map[string]string{KeyRegistryURL: hs.URL}, false); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		s, v, err := conv.ToConnectData("t", nil, msg)
		if err != nil {
			if _, ok := err.(*connect.DataError); !ok {
				t.Fatalf("error %T (%v), want *connect.DataError", err, err)
			}
			return
		}
		if v == nil {
			return
		}
		b, err := conv.FromConnectData("t", nil, s, v)
		if err != nil {
			t.Fatalf("decoded %v (%s) does not encode: %v", v, s, err)
		}
		_, back, err := conv.ToConnectData("t", nil, b)
		if err != nil {
			t.Fatalf("re-encoded %x does not decode: %v", b, err)
		}
		if !sameValue(v, back) {
			t.Fatalf("round trip changed %v into %v", v, back)
		}
	})
}

// sameValue compares values whose structs may carry different (but
// equally shaped) schemas.
func sameValue(a, b any) bool {
	sa, ok := a.(*connect.Struct)
	if !ok {
		return connect.ValuesEqual(a, b)
	}
	sb, ok := b.(*connect.Struct)
	if !ok || len(sa.Schema().Fields) != len(sb.Schema().Fields) {
		return false
	}
	for i := range sa.Schema().Fields {
		if !sameValue(sa.GetField(&sa.Schema().Fields[i]), sb.GetField(&sb.Schema().Fields[i])) {
			return false
		}
	}
	return true
}
