package connectapi

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/fjordhq/fjord/api/connect/connecttest"
	"github.com/fjordhq/fjord/connect/herder"
)

// TestKafkaConnectGoldens replays every request captured from Kafka
// Connect 4.4 (testdata/kafka-connect-4.4, see capture.sh) against the
// handler over the fake herder, which plays the same connectors, and
// compares status codes, headers and JSON with Kafka's answers.
func TestKafkaConnectGoldens(t *testing.T) {
	ex, err := connecttest.Load(connecttest.GoldenPath("."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	connecttest.PrepareDir(t, dir)
	f := newFakeHerder()
	primeValidate(t, f, ex, dir)
	srv := New(f, Options{Plugins: goldenPlugins(t, ex, dir), Loggers: goldenLoggers(t, ex)})
	connecttest.Replay(t, srv, ex, connecttest.Options{Dir: dir})
}

func exchange(t *testing.T, ex []connecttest.Exchange, name string) connecttest.Exchange {
	t.Helper()
	for _, e := range ex {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("no exchange %q in the goldens", name)
	return connecttest.Exchange{}
}

// primeValidate gives the fake Kafka's validation answers for the configs
// the goldens validate: the answer's shape is what is under test.
func primeValidate(t *testing.T, f *fakeHerder, ex []connecttest.Exchange, dir string) {
	for _, e := range ex {
		if !strings.HasSuffix(e.Request.Path, "/config/validate") || e.Response.Status != http.StatusOK {
			continue
		}
		var cfg map[string]string
		var infos herder.ConfigInfos
		if err := json.Unmarshal([]byte(strings.ReplaceAll(e.Request.Body, "{{dir}}", dir)), &cfg); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(strings.ReplaceAll(e.Response.Body, "{{dir}}", dir)), &infos); err != nil {
			t.Fatal(err)
		}
		f.validate[canonical(cfg)] = &infos
	}
}

// goldenPlugins is a PluginSource with the capture worker's plugins.
type goldenPluginSource struct {
	list    []PluginInfo
	configs map[string][]herder.ConfigKeyInfo
}

func (g goldenPluginSource) Plugins() []PluginInfo { return g.list }

func (g goldenPluginSource) PluginConfig(name string) ([]herder.ConfigKeyInfo, error) {
	if c, ok := g.configs[name]; ok {
		return c, nil
	}
	return nil, herder.Errorf(http.StatusNotFound, "Unknown plugin %s.", name)
}

func goldenPlugins(t *testing.T, ex []connecttest.Exchange, dir string) PluginSource {
	g := goldenPluginSource{configs: map[string][]herder.ConfigKeyInfo{}}
	if err := json.Unmarshal([]byte(exchange(t, ex, "connector plugins connectorsOnly=false").Response.Body), &g.list); err != nil {
		t.Fatal(err)
	}
	for _, e := range ex {
		name, ok := strings.CutPrefix(e.Request.Path, "/connector-plugins/")
		if !ok || e.Request.Method != "GET" || e.Response.Status != http.StatusOK {
			continue
		}
		name = strings.TrimSuffix(name, "/config")
		var keys []herder.ConfigKeyInfo
		if err := json.Unmarshal([]byte(e.Response.Body), &keys); err != nil {
			t.Fatal(err)
		}
		g.configs[name] = keys
	}
	return g
}

// goldenLoggers has the loggers the capture worker had from its start:
// every logger of its final list but those the script's PUTs created
// (com.example.*), at their start-up levels (a logger changed over REST
// had its parent's, INFO).
func goldenLoggers(t *testing.T, ex []connecttest.Exchange) *Loggers {
	var all map[string]LoggerLevel
	if err := json.Unmarshal([]byte(exchange(t, ex, "list loggers").Response.Body), &all); err != nil {
		t.Fatal(err)
	}
	lg := NewLoggers(slog.LevelInfo)
	for name, l := range all {
		if strings.HasPrefix(name, "com.example.") {
			continue
		}
		level := l.Level
		if l.LastModified != nil {
			level = "INFO"
		}
		if !lg.Configure(name, level) {
			t.Fatalf("logger %s: unknown level %s", name, l.Level)
		}
	}
	return lg
}
