// Package ui is Fjord's web console: plain HTML, CSS and JavaScript
// modules (no build step, nothing fetched from the internet), embedded in
// the binary and served at /ui by every node that serves HTTP. It reads
// only the admin API (/api/v1) and Kafka Connect's REST API, both in the
// /openapi.json document, so everything it shows or does a script can do too.
package ui

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
)

//go:embed static
var static embed.FS

// Prefix is where the console is served.
const Prefix = "/ui"

// Files are the console's files (index.html at the root).
func Files() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err)
	}
	return sub
}

// Mount serves the console on r at Prefix: /ui redirects to /ui/, which
// serves index.html; the pages route by the URL fragment, so every page
// is /ui/#/....
func Mount(r chi.Router) {
	files := http.StripPrefix(Prefix+"/", http.FileServer(http.FS(Files())))
	r.Get(Prefix, func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, Prefix+"/", http.StatusMovedPermanently)
	})
	r.Get(Prefix+"/*", func(w http.ResponseWriter, req *http.Request) {
		// The files change only with the binary; revalidate each load so
		// an upgraded node never serves a stale mix of modules.
		w.Header().Set("Cache-Control", "no-cache")
		if strings.HasSuffix(req.URL.Path, ".js") {
			w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		}
		files.ServeHTTP(w, req)
	})
}
