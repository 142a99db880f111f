package cdc

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/fjordhq/fjord/api/schemaregistry"
	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/converters/avro"
	jsonconv "github.com/fjordhq/fjord/converters/json"
)

// avroCheck sends events through the AvroConverter (with Fjord's schema
// registry) and back: every schema this package builds must be one the
// converter can register, and every value must come back the same (as
// the JsonConverter renders it).
type avroCheck struct {
	t    *testing.T
	conv *avro.Converter
}

func newAvroCheck(t *testing.T) *avroCheck {
	srv, err := schemaregistry.New(schemaregistry.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { hs.Close(); srv.Close() })
	c := avro.NewConverter()
	if err := c.Configure(map[string]string{avro.KeyRegistryURL: hs.URL}, false); err != nil {
		t.Fatal(err)
	}
	return &avroCheck{t: t, conv: c}
}

// roundTrip converts the event; fails says the schema has names Avro
// refuses.
func (a *avroCheck) roundTrip(topic string, s *connect.Schema, v *connect.Struct, fails bool) {
	a.t.Helper()
	b, err := a.conv.FromConnectData(topic, nil, s, v)
	if fails {
		if err == nil {
			a.t.Errorf("%s: AvroConverter accepted names Avro does not allow", topic)
		}
		return
	}
	if err != nil {
		a.t.Errorf("%s: AvroConverter: %v", topic, err)
		return
	}
	s2, v2, err := a.conv.ToConnectData(topic, nil, b)
	if err != nil {
		a.t.Errorf("%s: AvroConverter read back: %v", topic, err)
		return
	}
	j := jsonconv.New()
	if err := j.Configure(map[string]string{jsonconv.SchemasEnableConfig: "false"}, false); err != nil {
		a.t.Fatal(err)
	}
	want, err1 := j.FromConnectData(topic, nil, s, v)
	got, err2 := j.FromConnectData(topic, nil, s2, v2)
	if err1 != nil || err2 != nil {
		a.t.Errorf("%s: JsonConverter: %v, %v", topic, err1, err2)
		return
	}
	if string(got) != string(want) {
		a.t.Errorf("%s: Avro round trip changed the event:\n got %s\nwant %s", topic, got, want)
	}
}
