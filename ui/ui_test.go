package ui

import (
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
)

// The console has no build step, so nothing but the browser notices a
// module that imports a missing file or a name its target does not
// export — and one such mistake blanks every page, since app.js imports
// all of them. These tests walk the same references the browser does.

var (
	// src="..." and href="..." in index.html.
	htmlRef = regexp.MustCompile(`(?:src|href)="([^"]+)"`)
	// import ... from '...', import '...', export ... from '...', import('...').
	jsFrom    = regexp.MustCompile(`(?m)^\s*(?:import|export)\s+([^;]*?)\s*from\s*['"]([^'"]+)['"]`)
	jsBare    = regexp.MustCompile(`(?m)^\s*import\s*['"]([^'"]+)['"]`)
	jsDynamic = regexp.MustCompile(`import\(\s*['"]([^'"]+)['"]\s*\)`)
	// Exported names: export function f, export async function f,
	// export const/let/var/class x, export { a, b as c }.
	jsExportDecl = regexp.MustCompile(`(?m)^\s*export\s+(?:async\s+)?(?:function\*?|const|let|var|class)\s+([A-Za-z_$][\w$]*)`)
	jsExportList = regexp.MustCompile(`(?m)^\s*export\s*\{([^}]*)\}`)
)

// localRef reports whether ref names a file of the console (not a data:
// URL, an absolute URL or an in-page anchor).
func localRef(ref string) bool {
	return ref != "" && !strings.Contains(ref, ":") && !strings.HasPrefix(ref, "#") && !strings.HasPrefix(ref, "/")
}

// reachable returns every console file index.html references, directly
// or through module imports, with the names each importer expects from
// it (file → importer → names; "*" for a namespace or bare import).
func reachable(t *testing.T, files fs.FS) map[string]map[string][]string {
	t.Helper()
	index, err := fs.ReadFile(files, "index.html")
	if err != nil {
		t.Fatalf("index.html is not embedded: %v", err)
	}
	wants := map[string]map[string][]string{"index.html": {}}
	queue := []string{}
	add := func(from, ref string, names []string) {
		if !localRef(ref) {
			return
		}
		p := path.Clean(path.Join(path.Dir(from), ref))
		if _, ok := wants[p]; !ok {
			wants[p] = map[string][]string{}
			queue = append(queue, p)
		}
		wants[p][from] = append(wants[p][from], names...)
	}
	for _, m := range htmlRef.FindAllStringSubmatch(string(index), -1) {
		add("index.html", m[1], []string{"*"})
	}
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		if !strings.HasSuffix(f, ".js") {
			continue
		}
		src, err := fs.ReadFile(files, f)
		if err != nil {
			continue // reported by the caller as missing
		}
		code := stripComments(string(src))
		for _, m := range jsFrom.FindAllStringSubmatch(code, -1) {
			add(f, m[2], importedNames(m[1]))
		}
		for _, m := range jsBare.FindAllStringSubmatch(code, -1) {
			add(f, m[1], []string{"*"})
		}
		for _, m := range jsDynamic.FindAllStringSubmatch(code, -1) {
			add(f, m[1], []string{"*"})
		}
	}
	return wants
}

// importedNames lists the names an import clause takes: "{ a, b as c }"
// → a, b; "* as ns" and a default import → "*" (not checked).
func importedNames(clause string) []string {
	open := strings.Index(clause, "{")
	close := strings.LastIndex(clause, "}")
	if open < 0 || close < open {
		return []string{"*"}
	}
	var out []string
	for _, part := range strings.Split(clause[open+1:close], ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		out = append(out, strings.Fields(part)[0])
	}
	return out
}

// exportedNames lists what a module exports.
func exportedNames(code string) map[string]bool {
	out := map[string]bool{}
	for _, m := range jsExportDecl.FindAllStringSubmatch(code, -1) {
		out[m[1]] = true
	}
	for _, m := range jsExportList.FindAllStringSubmatch(code, -1) {
		for _, part := range strings.Split(m[1], ",") {
			f := strings.Fields(strings.TrimSpace(part))
			if len(f) > 0 {
				out[f[len(f)-1]] = true // "a as b" exports b
			}
		}
	}
	return out
}

// stripComments drops // line comments and /* */ blocks so a commented
// import is not taken for a real one. (Good enough for the console's
// code: it does not put "//" inside import lines' strings.)
func stripComments(code string) string {
	code = regexp.MustCompile(`(?s)/\*.*?\*/`).ReplaceAllString(code, "")
	return regexp.MustCompile(`(?m)^\s*//.*$`).ReplaceAllString(code, "")
}

func TestReferencedFilesExistAndExportWhatIsImported(t *testing.T) {
	files := Files()
	wants := reachable(t, files)
	if len(wants) < 4 {
		t.Fatalf("found only %d files from index.html; the reference scan is broken", len(wants))
	}
	for f, importers := range wants {
		src, err := fs.ReadFile(files, f)
		if err != nil {
			for from := range importers {
				t.Errorf("%s references %s, which is not in ui/static", from, f)
			}
			continue
		}
		if !strings.HasSuffix(f, ".js") {
			continue
		}
		exports := exportedNames(stripComments(string(src)))
		for from, names := range importers {
			for _, n := range names {
				if n != "*" && !exports[n] {
					t.Errorf("%s imports %q from %s, which does not export it", from, n, f)
				}
			}
		}
	}
	// The pages the router needs must be among them.
	for _, p := range []string{"app.js", "style.css", "chart.js", "pages/overview.js", "pages/topics.js", "pages/groups.js", "pages/schemas.js"} {
		if _, ok := wants[p]; !ok {
			t.Errorf("%s is not reachable from index.html", p)
		}
	}
}

func newConsole() *httptest.Server {
	r := chi.NewRouter()
	Mount(r)
	return httptest.NewServer(r)
}

// noRedirect keeps the client from following redirects so the test sees them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func TestServedWithContentTypes(t *testing.T) {
	srv := newConsole()
	defer srv.Close()
	wants := reachable(t, Files())
	paths := []string{""} // /ui/ itself serves index.html
	for f := range wants {
		if f != "index.html" { // http.FileServer redirects it to /ui/
			paths = append(paths, f)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		res, err := noRedirect.Get(srv.URL + Prefix + "/" + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("GET /ui/%s: status %d, want 200", p, res.StatusCode)
			continue
		}
		want := map[string]string{".js": "text/javascript", ".css": "text/css", ".html": "text/html", "": "text/html"}[path.Ext(p)]
		if want == "" {
			continue
		}
		mt, _, err := mime.ParseMediaType(res.Header.Get("Content-Type"))
		if err != nil || mt != want {
			// Browsers refuse to run a module served as anything but JavaScript.
			t.Errorf("GET /ui/%s: Content-Type %q, want %s", p, res.Header.Get("Content-Type"), want)
		}
		if len(body) == 0 {
			t.Errorf("GET /ui/%s: empty body", p)
		}
		if p == "" && !strings.Contains(string(body), `<script type="module" src="app.js">`) {
			t.Errorf("GET /ui/ did not serve index.html: %.200s", body)
		}
		if cc := res.Header.Get("Cache-Control"); cc != "no-cache" {
			t.Errorf("GET /ui/%s: Cache-Control %q, want no-cache (an upgraded node must not serve stale modules)", p, cc)
		}
	}
}

func TestRedirectAndMissingFile(t *testing.T) {
	srv := newConsole()
	defer srv.Close()
	res, err := noRedirect.Get(srv.URL + "/ui")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMovedPermanently || res.Header.Get("Location") != "/ui/" {
		t.Errorf("GET /ui: %d Location %q, want 301 to /ui/", res.StatusCode, res.Header.Get("Location"))
	}
	res, err = noRedirect.Get(srv.URL + "/ui/pages/no-such-page.js")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("GET a missing file: status %d, want 404", res.StatusCode)
	}
}

// The scanners above are what the other tests rely on; check them on
// known input so a regexp that silently matches nothing cannot pass.
func TestScanners(t *testing.T) {
	code := stripComments(`
// import { gone } from './commented.js';
/* import { alsoGone } from './block.js'; */
import { h, api as call } from '../app.js';
import * as ns from './ns.js';
import './side.js';
export async function renderList() {}
export function render() {}
export const x = 1;
export { a, b as c };
const lazy = import('./lazy.js');
`)
	var froms []string
	for _, m := range jsFrom.FindAllStringSubmatch(code, -1) {
		froms = append(froms, m[2]+":"+strings.Join(importedNames(m[1]), ","))
	}
	if got, want := strings.Join(froms, " "), "../app.js:h,api ./ns.js:*"; got != want {
		t.Errorf("imports: got %q, want %q", got, want)
	}
	if m := jsBare.FindAllStringSubmatch(code, -1); len(m) != 1 || m[0][1] != "./side.js" {
		t.Errorf("bare imports: %v", m)
	}
	if m := jsDynamic.FindAllStringSubmatch(code, -1); len(m) != 1 || m[0][1] != "./lazy.js" {
		t.Errorf("dynamic imports: %v", m)
	}
	ex := exportedNames(code)
	for _, n := range []string{"renderList", "render", "x", "a", "c"} {
		if !ex[n] {
			t.Errorf("export %s not found in %v", n, ex)
		}
	}
	if ex["b"] {
		t.Errorf("%v: 'b as c' exports c, not b", ex)
	}
}
