package admin

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkedin/goavro/v2"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/api/schemaregistry"
	"github.com/fjordhq/fjord/internal/testkit"
)

// kxRegistry runs Fjord's schema registry on the broker at addr (its
// state in _schemas, as fjord dev runs it) on an httptest server, and
// counts the schema-by-id requests it serves.
type kxRegistry struct {
	url     string
	byID    atomic.Int64
	handler http.Handler
}

func kxStartRegistry(t *testing.T, addr string) *kxRegistry {
	t.Helper()
	kr := &kxRegistry{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/schemas/ids/") && !strings.HasSuffix(r.URL.Path, "/subjects") {
			kr.byID.Add(1)
		}
		kr.handler.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	kr.url = hs.URL
	reg, err := schemaregistry.New(schemaregistry.Config{Bootstrap: []string{addr}, ReplicationFactor: 1, AdvertisedURL: hs.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testkit.Context(t, 30*time.Second)
	if err := reg.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	kr.handler = reg.Handler()
	if _, err := reg.WaitLeader(ctx); err != nil {
		t.Fatal(err)
	}
	return kr
}

// register registers schema under subject and returns its id.
func (kr *kxRegistry) register(t *testing.T, subject, schema string) int32 {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"schema": schema})
	resp, err := http.Post(kr.url+"/subjects/"+subject+"/versions", "application/vnd.schemaregistry.v1+json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		ID int32 `json:"id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK || out.ID <= 0 {
		t.Fatalf("register %s: %d %+v %v", subject, resp.StatusCode, out, err)
	}
	return out.ID
}

// confluentFrame is what Confluent's serializers write: magic byte 0,
// the schema id big-endian, the Avro binary.
func confluentFrame(id int32, avro []byte) []byte {
	b := []byte{0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], uint32(id))
	return append(b, avro...)
}

const userSchema = `{"type":"record","name":"User","namespace":"com.example","fields":[` +
	`{"name":"name","type":"string"},{"name":"age","type":"int"},{"name":"email","type":["null","string"],"default":null}]}`

func TestAvroDecoding(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	reg := kxStartRegistry(t, b.Addr)
	e := kxStartOn(t, b.Addr, Options{RegistryURL: reg.url + "/"}) // a trailing slash is fine
	e.createTopic(t, "users", 1)

	id := reg.register(t, "users-value", userSchema)
	codec, err := goavro.NewCodec(userSchema)
	if err != nil {
		t.Fatal(err)
	}
	bin, err := codec.BinaryFromNative(nil, map[string]any{"name": "Ann", "age": int32(31), "email": goavro.Union("string", "ann@example.com")})
	if err != nil {
		t.Fatal(err)
	}
	e.produce(t,
		&kgo.Record{Topic: "users", Key: []byte("ann"), Value: confluentFrame(id, bin)},
		&kgo.Record{Topic: "users", Key: []byte("bob"), Value: confluentFrame(id+100, bin)}, // an id the registry does not have
		&kgo.Record{Topic: "users", Value: confluentFrame(id, []byte{0xff})},                // truncated Avro
	)

	ms := e.readPage(t, "users", "from=earliest").Messages
	if len(ms) != 3 {
		t.Fatalf("%d messages", len(ms))
	}
	v := ms[0].Value
	if v.Format != "avro" || v.SchemaID == nil || *v.SchemaID != id || v.Subject != "users-value" || v.Size != 5+len(bin) {
		t.Fatalf("avro value: %+v", v)
	}
	if got, _ := json.Marshal(v.Value); string(got) != `{"age":31,"email":{"string":"ann@example.com"},"name":"Ann"}` &&
		string(got) != `{"name":"Ann","age":31,"email":{"string":"ann@example.com"}}` {
		t.Fatalf("avro value decoded as %s", got)
	}
	if ms[0].Key.Format != "text" || ms[0].Key.Value != "ann" {
		t.Fatalf("key beside an Avro value: %+v", ms[0].Key)
	}
	// auto falls back when the schema is missing or the bytes do not fit.
	if v := ms[1].Value; v.Format != "hex" || v.SchemaID != nil {
		t.Fatalf("unknown schema id, auto: %+v", v)
	}
	if v := ms[2].Value; v.Format != "hex" {
		t.Fatalf("truncated Avro, auto: %+v", v)
	}

	// avro asked for says why it could not decode.
	ms = e.readPage(t, "users", "from=earliest&value_format=avro").Messages
	if v := ms[0].Value; v.Format != "avro" {
		t.Fatalf("avro asked for: %+v", v)
	}
	if v := ms[1].Value; v.Format != "hex" || !strings.Contains(v.Error, "schema registry answered 404") {
		t.Fatalf("unknown schema id, avro asked for: %+v", v)
	}
	if v := ms[2].Value; v.Format != "hex" || !strings.Contains(v.Error, "not Avro of schema") {
		t.Fatalf("truncated Avro, avro asked for: %+v", v)
	}
	// The schema was fetched once for all these reads; the missing one
	// once per read.
	if n := reg.byID.Load(); n != 3 {
		t.Fatalf("%d schema-by-id requests, want 1 for the known schema and 1 per read for the missing one", n)
	}
}
