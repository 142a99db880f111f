package main

import (
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/fjordhq/fjord/api/admin"
	"github.com/fjordhq/fjord/ui"
)

// mountConsole serves the admin API (/api/v1) and the web console (/ui)
// on r, as every node that serves HTTP does. A node without a Connect
// worker also serves the merged OpenAPI document itself (a worker's
// REST API serves it otherwise). It returns how to stop the admin API's
// sampler and client.
func mountConsole(r chi.Router, opts admin.Options, serveOpenAPI bool) (func(), error) {
	srv, err := admin.New(opts)
	if err != nil {
		return nil, fmt.Errorf("admin API: %w", err)
	}
	srv.Mount(r)
	ui.Mount(r)
	if serveOpenAPI {
		doc := admin.OpenAPI()
		r.Get("/openapi.json", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(doc)
		})
	}
	return srv.Close, nil
}
