package connectapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/fjordhq/fjord/connect/herder"
)

// TaskConfigReceiver is a herder that takes Kafka's internal inter-worker
// request POST /connectors/{connector}/tasks (herder.Distributed): a
// worker running a connector hands the leader the task configs it
// generated. Other herders answer it as Kafka's standalone herder does
// (500). The endpoint is not in the OpenAPI document (Kafka hides it).
type TaskConfigReceiver interface {
	// VerifyInternalRequest checks the request's signature
	// (X-Connect-Authorization over the body with the session key).
	VerifyInternalRequest(ctx context.Context, body []byte, h http.Header) error
	// PutTaskConfigs writes the configs (leader) or answers
	// *herder.NotLeaderError.
	PutTaskConfigs(ctx context.Context, name string, configs []map[string]string) error
}

// Kafka's inter-worker signature headers (InternalRequestSignature).
const (
	signatureHeader          = "X-Connect-Authorization"
	signatureAlgorithmHeader = "X-Connect-Request-Signature-Algorithm"
)

// putTaskConfigs is Kafka's InternalConnectResource.putTaskConfigs: the
// body (a JSON list of task configs) is read, its signature checked by
// the receiving worker, and the herder asked to write the configs; a
// worker that is not the leader forwards the request (same bytes, same
// signature headers, so the leader can verify them) with Kafka's
// "forward" hops, and relays the leader's answer. 204 on success.
func (s *Server) putTaskConfigs(w http.ResponseWriter, r *http.Request) {
	h, ok := s.h.(TaskConfigReceiver)
	if !ok {
		// Kafka's StandaloneHerder.putTaskConfigs.
		writeError(w, herder.Errorf(http.StatusInternalServerError, "Kafka Connect in standalone mode does not support externally setting task configurations."))
		return
	}
	name := param(r, "connector")
	body, e := readBody(r)
	if e != nil {
		writeError(w, e)
		return
	}
	var configs []map[string]string
	if err := json.Unmarshal(body, &configs); err != nil {
		writeError(w, herder.Errorf(http.StatusBadRequest, "Invalid task configs: %v", err))
		return
	}
	ctx, cancel := s.ctx(r)
	defer cancel()
	err := h.VerifyInternalRequest(ctx, body, r.Header)
	if err == nil {
		err = h.PutTaskConfigs(ctx, name, configs)
	}
	if err != nil {
		var nl *herder.NotLeaderError
		if errors.As(err, &nl) {
			s.forwardKeeping(w, r, body, nl.LeaderURL, signatureHeader, signatureAlgorithmHeader)
			return
		}
		s.fail(w, r, body, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
