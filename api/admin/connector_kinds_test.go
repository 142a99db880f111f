package admin

import (
	"maps"
	"testing"

	"github.com/fjordhq/fjord/connect/plugins"
)

// TestKnownClassNames: the fallback table names exactly the classes and
// aliases the plugins register (connect_env_test.go imports them), so a
// renamed alias cannot silently drop a connector from the views.
func TestKnownClassNames(t *testing.T) {
	want := map[string]string{}
	for _, p := range plugins.List() {
		switch p.Class {
		case postgresCDCClass, mirrorSourceClass, mirrorCheckpointClass, mirrorHeartbeatClass:
			want[p.Class] = p.Class
			for _, a := range p.Aliases {
				want[a] = p.Class
			}
		}
	}
	if len(want) == 0 || !maps.Equal(want, knownClassNames) {
		t.Fatalf("knownClassNames\n got %v\nwant %v (the plugins' registered names)", knownClassNames, want)
	}
	for name, class := range knownClassNames {
		if got := canonicalClass(" " + name + " "); got != class {
			t.Errorf("canonicalClass(%q) = %q, want %q", name, got, class)
		}
	}
	if got := canonicalClass("FileStreamSource"); got != "org.apache.kafka.connect.file.FileStreamSourceConnector" {
		t.Errorf("canonicalClass(FileStreamSource) = %q: aliases of other plugins resolve through the registry", got)
	}
	if got := canonicalClass("com.example.Unknown"); got != "com.example.Unknown" {
		t.Errorf("an unknown class became %q", got)
	}
}
