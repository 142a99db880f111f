package deploy

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"
)

// dockerfile is the root Dockerfile as instructions: keyword and
// arguments, continuation lines joined, comments dropped.
type instruction struct{ keyword, args string }

func dockerfile(t *testing.T) []instruction {
	t.Helper()
	var out []instruction
	var cur strings.Builder
	sc := bufio.NewScanner(strings.NewReader(string(readFile(t, "Dockerfile"))))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cont := strings.HasSuffix(line, `\`)
		cur.WriteString(strings.TrimSuffix(line, `\`))
		if cont {
			cur.WriteString(" ")
			continue
		}
		kw, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{strings.ToUpper(kw), strings.TrimSpace(args)})
		cur.Reset()
	}
	return out
}

// dockerEntrypoint is the binary the image runs (ENTRYPOINT's exec form).
func dockerEntrypoint(t *testing.T) string {
	t.Helper()
	for _, in := range dockerfile(t) {
		if in.keyword == "ENTRYPOINT" {
			var argv []string
			if err := json.Unmarshal([]byte(in.args), &argv); err != nil || len(argv) != 1 {
				t.Fatalf("Dockerfile: ENTRYPOINT %s: want the exec form with the binary alone", in.args)
			}
			return argv[0]
		}
	}
	t.Fatal("Dockerfile: no ENTRYPOINT")
	return ""
}

func dockerfileExposed(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, in := range dockerfile(t) {
		if in.keyword == "EXPOSE" {
			out = append(out, strings.Fields(in.args)...)
		}
	}
	return out
}

// TestDockerfile: a static binary built in a Go builder stage, copied to
// the ENTRYPOINT's path of a distroless nonroot image that runs as
// nonroot and exposes Fjord's ports.
func TestDockerfile(t *testing.T) {
	ins := dockerfile(t)
	var froms, runs, copies []string
	user := ""
	for _, in := range ins {
		switch in.keyword {
		case "FROM":
			froms = append(froms, in.args)
		case "RUN":
			runs = append(runs, in.args)
		case "COPY":
			copies = append(copies, in.args)
		case "USER":
			user = in.args
		}
	}
	if len(froms) != 2 || froms[0] != "golang:1.26 AS build" || froms[1] != "gcr.io/distroless/static-debian12:nonroot" {
		t.Errorf("FROM %q; want a golang:1.26 build stage and gcr.io/distroless/static-debian12:nonroot", froms)
	}
	build := ""
	for _, r := range runs {
		if strings.Contains(r, "go build") {
			build = r
		}
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", `-ldflags="-s -w"`, "-o /fjord", "./cmd/fjord"} {
		if !strings.Contains(build, want) {
			t.Errorf("build step %q lacks %s", build, want)
		}
	}
	entry := dockerEntrypoint(t)
	if !slices.Contains(copies, "--from=build /fjord "+entry) {
		t.Errorf("COPY %q: the built /fjord is not copied to the ENTRYPOINT %s", copies, entry)
	}
	if user != "nonroot" {
		t.Errorf("USER %q, want nonroot", user)
	}
	for _, p := range []string{"9092", "9093", "8080", "8083"} {
		if !slices.Contains(dockerfileExposed(t), p) {
			t.Errorf("port %s is not EXPOSEd", p)
		}
	}
}

// TestDockerignoreKeepsBuildInputs: .dockerignore excludes nothing `go
// build ./cmd/fjord` reads — go.mod, go.sum, and the Go and embedded
// files of every package of this module the binary is built from.
func TestDockerignoreKeepsBuildInputs(t *testing.T) {
	var patterns []string
	for line := range strings.Lines(string(readFile(t, ".dockerignore"))) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "!") {
			t.Fatalf(".dockerignore: exception %q is not understood by this test", line)
		}
		patterns = append(patterns, strings.TrimPrefix(line, "/"))
	}
	cmd := exec.Command("go", "list", "-deps", "-f",
		`{{if and .Module .Module.Main}}{{range .GoFiles}}{{$.Dir}}/{{.}}{{"\n"}}{{end}}{{range .EmbedFiles}}{{$.Dir}}/{{.}}{{"\n"}}{{end}}{{end}}`,
		"./cmd/fjord")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	root := strings.TrimSuffix(goEnv(t, "GOMOD"), "go.mod")
	files := []string{"go.mod", "go.sum"}
	for f := range strings.Lines(string(out)) {
		if f = strings.TrimSpace(f); f != "" {
			files = append(files, strings.TrimPrefix(f, root))
		}
	}
	if len(files) < 100 {
		t.Fatalf("go list found %d files; expected the whole binary's", len(files))
	}
	for _, f := range files {
		if p := dockerignored(patterns, f); p != "" {
			t.Errorf(".dockerignore pattern %q excludes %s, which the build needs", p, f)
		}
	}
	// And it does keep out what must not be sent: the git history, build
	// caches, local data.
	for _, f := range []string{".git/HEAD", ".cache/bin/minio", "data/broker/x", "bin/fjord", "fjord"} {
		if dockerignored(patterns, f) == "" {
			t.Errorf(".dockerignore does not exclude %s", f)
		}
	}
}

// dockerignored is the pattern excluding path f (relative to the context
// root), "" if none. Docker matches each pattern against the path and its
// parent directories, with filepath.Match syntax.
func dockerignored(patterns []string, f string) string {
	for _, p := range patterns {
		for dir := f; dir != "." && dir != "/" && dir != ""; dir = path.Dir(dir) {
			if ok, _ := path.Match(p, dir); ok {
				return p
			}
		}
	}
	return ""
}

func goEnv(t *testing.T, key string) string {
	t.Helper()
	cmd := exec.Command("go", "env", key)
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}
