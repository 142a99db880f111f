package runtime

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fjordhq/fjord/connect/plugins"
	_ "github.com/fjordhq/fjord/converters/json"
	_ "github.com/fjordhq/fjord/transforms"
)

type validateGolden struct {
	Note     string            `json:"note"`
	Plugin   string            `json:"plugin"`
	Config   map[string]string `json:"config"`
	Status   int               `json:"status"`
	Response json.RawMessage   `json:"response"`
}

// goldenWorker is the worker config gen.sh ran Kafka Connect with.
func goldenWorker(t *testing.T) *WorkerConfig {
	t.Helper()
	w, err := ParseWorkerConfig(map[string]string{
		"bootstrap.servers": "127.0.0.1:19592", "group.id": "golden",
		"config.storage.topic": "connect-configs", "offset.storage.topic": "connect-offsets", "status.storage.topic": "connect-status",
		"key.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter": "org.apache.kafka.connect.json.JsonConverter",
	}, Distributed)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// Documented differences from Kafka Connect (see the package doc):
//   - plugin versions: Fjord's own plugins report plugins.DefaultVersion
//     where Kafka's report 4.4.0;
//   - which converters, transformations and predicates are installed
//     (recommended values of the class keys) depends on the build;
//   - java.util.regex and Go's regexp word their errors differently.
func normalizeValidation(t *testing.T, raw []byte, ours bool) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	var kept []any
	for _, c := range v["configs"].([]any) {
		c := c.(map[string]any)
		// A converter's own keys are its package's to check
		// (converters/...); the runtime only embeds them.
		if n := c["value"].(map[string]any)["name"].(string); strings.Contains(n, "converter.") && !strings.HasSuffix(n, ".plugin.version") {
			continue
		}
		kept = append(kept, c)
		val := c["value"].(map[string]any)
		name := val["name"].(string)
		if ours {
			if s, ok := val["value"].(string); ok && s == plugins.DefaultVersion {
				val["value"] = "4.4.0"
			}
			if d, ok := c["definition"].(map[string]any); ok && d["default_value"] == plugins.DefaultVersion {
				d["default_value"] = "4.4.0"
			}
			if rec, _ := val["recommended_values"].([]any); len(rec) == 1 && rec[0] == plugins.DefaultVersion {
				val["recommended_values"] = []any{"4.4.0"}
			}
		}
		if strings.HasSuffix(name, "converter") || strings.HasSuffix(name, ".type") {
			val["recommended_values"] = "<installed plugins>"
		}
		if name == "topics.regex" {
			var errs []any
			for _, e := range val["errors"].([]any) {
				if s := e.(string); strings.Contains(s, "Invalid regex: ") {
					e = s[:strings.Index(s, "Invalid regex: ")+len("Invalid regex: ")] + "<regexp error>"
				}
				errs = append(errs, e)
			}
			val["errors"] = errs
		}
	}
	v["configs"] = kept
	return v
}

func TestValidateMatchesKafka(t *testing.T) {
	files, _ := filepath.Glob("testdata/kafkaref/validate/*.json")
	if len(files) == 0 {
		t.Fatal("no golden files")
	}
	w := goldenWorker(t)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var g validateGolden
			if err := json.Unmarshal(data, &g); err != nil {
				t.Fatal(err)
			}
			v, err := ValidateConnectorConfig(w, g.Config)
			if g.Status != 200 {
				if err == nil {
					t.Fatalf("Kafka answered %d (%s); we validated", g.Status, g.Response)
				}
				var unknown *UnknownConnectorError
				if !errors.Is(err, ErrNoConnectorClass) && !errors.As(err, &unknown) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ours, err := json.Marshal(v.Infos())
			if err != nil {
				t.Fatal(err)
			}
			want := normalizeValidation(t, g.Response, false)
			got := normalizeValidation(t, ours, true)
			compareValidation(t, want, got)
		})
	}
}

func compareValidation(t *testing.T, want, got map[string]any) {
	t.Helper()
	for _, k := range []string{"name", "error_count", "groups"} {
		if !reflect.DeepEqual(want[k], got[k]) {
			t.Errorf("%s: Kafka %v, ours %v", k, want[k], got[k])
		}
	}
	wc, gc := want["configs"].([]any), got["configs"].([]any)
	names := func(cs []any) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.(map[string]any)["value"].(map[string]any)["name"].(string))
		}
		return out
	}
	if wn, gn := names(wc), names(gc); !slices.Equal(wn, gn) {
		t.Errorf("config order:\nKafka %v\nours  %v", wn, gn)
	}
	byName := map[string]any{}
	for _, c := range gc {
		byName[c.(map[string]any)["value"].(map[string]any)["name"].(string)] = c
	}
	for _, c := range wc {
		name := c.(map[string]any)["value"].(map[string]any)["name"].(string)
		o, ok := byName[name]
		if !ok {
			t.Errorf("%s missing", name)
			continue
		}
		if !reflect.DeepEqual(c, o) {
			a, _ := json.Marshal(c)
			b, _ := json.Marshal(o)
			t.Errorf("%s:\nKafka %s\nours  %s", name, a, b)
		}
	}
}
