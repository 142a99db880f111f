package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fjordhq/fjord/connect/herder"
	"github.com/fjordhq/fjord/connect/runtime/runtimetest"
)

// Validation sees the resolved values (as Kafka's), but its answer shows
// the placeholders and masks resolved values out of its messages; a
// variable that does not resolve is an error on its key.
func TestValidateWithVariables(t *testing.T) {
	dir := t.TempDir()
	props := filepath.Join(dir, "v.properties")
	if err := os.WriteFile(props, []byte("tasks=2\nbad=not-a-number-secret-77\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w := newTestWorker(t, workerProps("127.0.0.1:1", "config.providers", "file", "config.providers.file.class", "file"), nil)
	find := func(infos *herder.ConfigInfos, key string) herder.ConfigValueInfo {
		for _, c := range infos.Configs {
			if c.Value.Name == key {
				return c.Value
			}
		}
		t.Fatalf("no %s in the answer", key)
		return herder.ConfigValueInfo{}
	}
	validate := func(extra ...string) (*herder.ConfigInfos, string) {
		cfg := runtimetest.SourceConfig("v", "validate", "t", 1, extra...)
		infos, err := w.ValidateConnectorConfig(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		var all strings.Builder
		for _, c := range infos.Configs {
			all.WriteString(strings.Join(c.Value.Errors, " "))
			if c.Value.Value != nil {
				all.WriteString(*c.Value.Value)
			}
		}
		return infos, all.String()
	}

	good := "${file:" + props + ":tasks}"
	infos, _ := validate("tasks.max", good)
	if infos.ErrorCount != 0 {
		t.Fatalf("a tasks.max of %s (2) has errors: %+v", good, find(infos, "tasks.max"))
	}
	if v := find(infos, "tasks.max"); v.Value == nil || *v.Value != good {
		t.Errorf("tasks.max shows %v, want the placeholder", v.Value)
	}

	infos, all := validate("tasks.max", "${file:"+props+":bad}")
	if infos.ErrorCount == 0 || len(find(infos, "tasks.max").Errors) == 0 {
		t.Fatalf("a tasks.max that resolves to text has no error: %+v", find(infos, "tasks.max"))
	}
	if strings.Contains(all, "not-a-number-secret-77") {
		t.Errorf("the answer shows the resolved value: %s", all)
	}

	missing := "${file:" + props + ":absent}"
	infos, _ = validate("tasks.max", missing, "custom.key", "${env:FJORD_NOT_CONFIGURED}")
	if v := find(infos, "tasks.max"); len(v.Errors) != 1 || !strings.Contains(v.Errors[0], "cannot resolve "+missing) {
		t.Errorf("tasks.max errors %v", v.Errors)
	}
	if v := find(infos, "custom.key"); len(v.Errors) != 1 || !strings.Contains(v.Errors[0], "config provider env is not configured") {
		t.Errorf("custom.key errors %v", v.Errors)
	}
	if infos.ErrorCount != 2 {
		t.Errorf("error_count %d, want 2", infos.ErrorCount)
	}
}

// A worker.properties whose variables do not resolve, or whose providers
// are misconfigured, is refused at start with the key and variable named.
func TestWorkerConfigProviderErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.properties")
	for name, c := range map[string]struct {
		extra []string
		want  string
	}{
		"missing file": {[]string{"config.providers", "file", "config.providers.file.class", "file",
			"rest.advertised.host.name", "${file:" + missing + ":host}"},
			"worker config: config rest.advertised.host.name: cannot resolve ${file:" + missing + ":host}: could not read properties from file"},
		"no class": {[]string{"config.providers", "vault"}, "config.providers.vault.class is not set"},
		"no providers": {[]string{"rest.advertised.host.name", "${env:HOST}"},
			"no config provider is configured; add env to the worker's config.providers"},
	} {
		_, err := ParseWorkerConfig(workerProps("127.0.0.1:1", c.extra...), Standalone)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}
