package main

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/fjordhq/fjord/api/admin"
	"github.com/fjordhq/fjord/connect/runtime"
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

// workerRegistryURL is the schema registry a worker's converters use
// (value.converter.schema.registry.url, else the key converter's; the
// first of a comma-separated list), so the console on a worker decodes
// Avro messages and lists subjects from the registry its connectors
// write to. "" when the converters use none.
func workerRegistryURL(wc *runtime.WorkerConfig) string {
	for _, conv := range []string{"value.converter", "key.converter"} {
		if u := wc.ConverterProps(conv)["schema.registry.url"]; strings.TrimSpace(u) != "" {
			first, _, _ := strings.Cut(u, ",")
			return strings.TrimRight(strings.TrimSpace(first), "/")
		}
	}
	return ""
}
