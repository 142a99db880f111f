package main

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/api/admin"
	"github.com/fjordhq/fjord/connect/runtime"
	"github.com/fjordhq/fjord/internal/clientsec"
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

// consoleClientOpts are the admin API's Kafka client options on a broker
// node: the admin.-prefixed client settings of --http-config (Kafka's
// names), seeded with admin.bootstrap.servers or else this broker.
func consoleClientOpts(seed string, httpProps map[string]string) ([]kgo.Opt, error) {
	props := map[string]string{}
	for k, v := range httpProps {
		if rest, ok := strings.CutPrefix(k, "admin."); ok {
			props[rest] = v
		}
	}
	seeds := []string{seed}
	if bs := strings.TrimSpace(props["bootstrap.servers"]); bs != "" {
		seeds = strings.Split(bs, ",")
		for i := range seeds {
			seeds[i] = strings.TrimSpace(seeds[i])
		}
	}
	opts, problems := clientsec.Options(props)
	if len(problems) > 0 {
		return nil, fmt.Errorf("--http-config admin.* client settings: %s", strings.Join(problems, "; "))
	}
	return append([]kgo.Opt{kgo.SeedBrokers(seeds...)}, opts...), nil
}
