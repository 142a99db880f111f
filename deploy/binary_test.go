package deploy

import (
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/fjordhq/fjord/api"
	connectapi "github.com/fjordhq/fjord/api/connect"
	"github.com/fjordhq/fjord/internal/testkit"
)

// fjordHelp runs the fjord binary's `<args> --help`.
func fjordHelp(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(testkit.FjordBinary(t), append(args, "--help")...).CombinedOutput()
	if err != nil {
		t.Fatalf("fjord %s --help: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestArtefactCommandsExist: every subcommand and flag the artefacts run
// the image with is one the fjord binary has (the Dockerfile builds
// ./cmd/fjord; its ENTRYPOINT is the binary, so a command is its args).
func TestArtefactCommandsExist(t *testing.T) {
	used := map[string][]string{} // subcommand -> flags
	add := func(args []string) {
		if len(args) == 0 {
			t.Fatal("empty command")
		}
		for _, a := range args[1:] {
			if strings.HasPrefix(a, "--") {
				used[args[0]] = append(used[args[0]], a)
			}
		}
		if _, ok := used[args[0]]; !ok {
			used[args[0]] = nil
		}
	}
	c := loadCompose(t)
	for _, name := range append(slices.Clone(brokerServices), connectServices...) {
		add(strs(c.service(name), "command"))
		add(strs(c.service(name), "healthcheck", "test")[2:])
	}
	k := loadK8s(t)
	add(strs(container(t, k.get("StatefulSet", "fjord"), "fjord"), "args"))
	add(strs(container(t, k.get("Deployment", "fjord-connect"), "connect"), "args"))

	root := fjordHelp(t)
	for sub, flags := range used {
		if !listsSubcommand(root, sub) {
			t.Errorf("fjord has no subcommand %q (fjord --help:\n%s)", sub, root)
			continue
		}
		help := fjordHelp(t, sub)
		for _, f := range flags {
			if !strings.Contains(help, f+" ") {
				t.Errorf("fjord %s has no flag %s", sub, f)
			}
		}
	}
}

// listsSubcommand reports whether help lists cmd as a subcommand (two spaces,
// the name, a space).
func listsSubcommand(help, cmd string) bool {
	return strings.Contains(help, "\n  "+cmd+" ")
}

// TestProbePathsAreServed: the paths the probes use are routes Fjord
// serves — /healthz and /readyz on a broker's --http-addr (api.Server),
// Kafka Connect's GET /health on a worker's REST listener — and answer
// 200 on a server whose checks pass.
func TestProbePathsAreServed(t *testing.T) {
	h := api.New(nil)
	for _, p := range []string{"/healthz", "/readyz"} {
		rec := httptest.NewRecorder()
		h.Router.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, p, nil))
		if rec.Code != http.StatusOK {
			t.Errorf("broker HTTP %s: %d %s, want 200", p, rec.Code, rec.Body)
		}
	}
	routes := connectapi.New(nil, connectapi.Options{}).Routes()
	if !slices.Contains(routes, [2]string{"GET", "/health"}) {
		t.Errorf("the Connect REST API has no GET /health: %v", routes)
	}
	// And the files probe exactly these.
	c := loadCompose(t)
	for _, b := range brokerServices {
		if u := c.healthcheckURL(b); u.Path != "/readyz" {
			t.Errorf("%s probes %s", b, u.Path)
		}
	}
	for _, w := range connectServices {
		if u := c.healthcheckURL(w); u.Path != "/health" {
			t.Errorf("%s probes %s", w, u.Path)
		}
	}
}
