package kafkaref

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestGoldenFilesDecode loads every capture into the kmsg types of its API
// key, so a file that no longer matches kmsg fails here, not in a handler test.
func TestGoldenFilesDecode(t *testing.T) {
	names := Names()
	if len(names) < 30 {
		t.Fatalf("only %d golden files", len(names))
	}
	for _, n := range names {
		c, err := Load(n)
		if err != nil {
			t.Fatal(err)
		}
		req := kmsg.RequestForKey(c.Key)
		if req == nil {
			t.Errorf("%s: unknown api key %d", n, c.Key)
			continue
		}
		if err := c.DecodeRequest(req); err != nil {
			t.Error(err)
			continue
		}
		resp := req.ResponseKind()
		if err := c.DecodeResponse(resp); err != nil {
			t.Error(err)
			continue
		}
		if resp.GetVersion() != c.Version || c.KafkaVersion != KafkaVersion || c.Note == "" {
			t.Errorf("%s: version %d (file says %d), kafka %s, note %q", n, resp.GetVersion(), c.Version, c.KafkaVersion, c.Note)
		}
	}
	if _, err := Load("no_such_capture"); err == nil {
		t.Error("missing file loaded")
	}
}

func TestApiVersionsCapture(t *testing.T) {
	c, err := Load("api_versions")
	if err != nil {
		t.Fatal(err)
	}
	var resp kmsg.ApiVersionsResponse
	if err := c.DecodeResponse(&resp); err != nil {
		t.Fatal(err)
	}
	keys := map[int16]kmsg.ApiVersionsResponseApiKey{}
	for _, k := range resp.ApiKeys {
		keys[k.ApiKey] = k
	}
	// Spot checks of what Kafka 4.4 advertised when captured: Produce
	// from v0, DescribeConfigs from v1 (v0 is gone in Kafka 4).
	for key, want := range map[int16][2]int16{0: {0, 13}, 1: {4, 18}, 3: {0, 13}, 18: {0, 5}, 32: {1, 4}} {
		if got := keys[key]; got.MinVersion != want[0] || got.MaxVersion != want[1] {
			t.Errorf("key %d: v%d-v%d, want v%d-v%d", key, got.MinVersion, got.MaxVersion, want[0], want[1])
		}
	}
}

func TestConfigDefsAndValidationLoad(t *testing.T) {
	d, err := LoadConfigDefs()
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Topic) < 30 || len(d.Broker) < 300 || len(d.AllDynamic) < 50 {
		t.Fatalf("config defs look truncated: %d topic, %d broker, %d dynamic", len(d.Topic), len(d.Broker), len(d.AllDynamic))
	}
	cs, err := LoadValidationCases()
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) < 4000 {
		t.Fatalf("%d validation cases", len(cs))
	}
}
