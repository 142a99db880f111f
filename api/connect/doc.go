// Package connectapi serves Kafka Connect's REST API over a
// herder.Herder, so tools written for Kafka Connect (curl scripts,
// kcctl, Terraform providers, UIs) work against Fjord unchanged:
//
//	var h herder.Herder = ...                 // standalone or distributed
//	loggers := connectapi.NewLoggers(slog.LevelInfo)
//	srv := connectapi.New(h, connectapi.Options{Loggers: loggers})
//	http.ListenAndServe("127.0.0.1:8083", srv)
//
// or connectapi.Mount(router, h, opts) to add the routes to a chi router
// that serves other things too (fjord dev: api.Server's Router).
//
// testdata/kafka-connect-4.4 holds Kafka Connect 4.4's own answers to a
// script of 135 requests (capture.sh regenerates them); package
// connecttest replays them against any herder behind this API.
//
// The package owns only the HTTP side: paths, methods, query parameters,
// request decoding and response encoding. Everything a connector is or
// does comes from the Herder, whose errors (*herder.Error) carry the
// status and message Kafka answers. The rules below were checked against
// Kafka Connect 4.4 itself (testdata/kafka-connect-4.4: capture.sh runs
// it, the tests replay its answers):
//
//   - JSON is written as Jackson writes it: entity fields in Kafka's order
//     (the herder entities' struct order), no HTML escaping, no trailing
//     newline, [] and {} rather than null where Kafka never prints null.
//   - Config bodies are read as Jackson reads a Map<String, String>:
//     numbers and booleans become their text, nulls become Kafka's
//     per-key "Null value can not be supplied" validation errors.
//   - Errors are {"error_code": status, "message": ...}; unknown paths
//     and methods answer Jersey's "HTTP 404 Not Found" and "HTTP 405
//     Method Not Allowed"; a body that is not JSON of the right shape is
//     refused with 400 and a message saying what was wrong, where Kafka
//     answers 500 with Jackson's parser message (the one deliberate
//     difference).
//   - A herder that returns *herder.NotLeaderError has the request
//     forwarded to the leader (forward.go), with Kafka's "forward" query
//     parameter so a request makes at most two hops; ForwardOptions.Sign
//     is the seam for inter-worker request signing.
//   - Kafka's internal POST /connectors/{c}/tasks (internal.go), by which
//     a worker hands the leader its connector's task configs, is served
//     for a TaskConfigReceiver (herder.Distributed): the receiving worker
//     checks the signature, a follower forwards the same bytes with the
//     same signature headers; other herders answer Kafka's standalone 500.
//
// Optional behaviour comes from small interfaces a herder may implement:
// HealthChecker (GET /health), PluginConfigProvider (GET
// /connector-plugins/{p}/config with the runtime's common keys) and
// ClusterLoggerSetter (PUT /admin/loggers/{name}?scope=cluster).
// /admin/loggers reads and sets the levels of a Loggers, whose handlers
// the process's components log through. The OpenAPI document of the API
// (openapi.json) is served at /openapi.json.
package connectapi
