package connectapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/fjordhq/fjord/connect/herder"
)

// listConnectors answers GET /connectors[?expand=status&expand=info].
func (s *Server) listConnectors(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	names, err := s.h.Connectors(ctx)
	if err != nil {
		s.fail(w, r, nil, err)
		return
	}
	expand, ok := r.URL.Query()["expand"]
	if !ok {
		if names == nil {
			names = []string{}
		}
		writeJSON(w, http.StatusOK, names)
		return
	}
	// {"name": {"status": ..., "info": ...}}: Kafka's inner map is a
	// HashMap, which iterates "status" before "info" whatever the query
	// order; unknown expansions are ignored; a connector deleted meanwhile
	// (404) is left out.
	wantStatus, wantInfo := slices.Contains(expand, "status"), slices.Contains(expand, "info")
	var buf bytes.Buffer
	buf.WriteByte('{')
	first := true
	for _, name := range names {
		var parts [][2]any
		if wantStatus {
			st, err := s.h.ConnectorStatus(ctx, name)
			if isNotFound(err) {
				continue
			}
			if err != nil {
				s.fail(w, r, nil, err)
				return
			}
			parts = append(parts, [2]any{"status", normalizeStatus(st)})
		}
		if wantInfo {
			info, err := s.h.ConnectorInfo(ctx, name)
			if isNotFound(err) {
				continue
			}
			if err != nil {
				s.fail(w, r, nil, err)
				return
			}
			parts = append(parts, [2]any{"info", normalizeInfo(info)})
		}
		if !first {
			buf.WriteByte(',')
		}
		first = false
		k, _ := encode(name)
		buf.Write(k)
		buf.WriteString(":{")
		for i, p := range parts {
			if i > 0 {
				buf.WriteByte(',')
			}
			b, err := encode(p[1])
			if err != nil {
				s.fail(w, r, nil, err)
				return
			}
			fmt.Fprintf(&buf, "%q:", p[0])
			buf.Write(b)
		}
		buf.WriteByte('}')
	}
	buf.WriteByte('}')
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(buf.Bytes())
}

func isNotFound(err error) bool {
	var he *herder.Error
	return errors.As(err, &he) && he.Code == http.StatusNotFound
}

// createRequest is POST /connectors' body.
type createRequest struct {
	Name         *string         `json:"name"`
	Config       json.RawMessage `json:"config"`
	InitialState *string         `json:"initial_state"`
}

// createConnector answers POST /connectors: 201 with the connector and a
// Location header.
func (s *Server) createConnector(w http.ResponseWriter, r *http.Request) {
	if e := requireJSON(r); e != nil {
		writeError(w, e)
		return
	}
	body, e := readBody(r)
	if e != nil {
		writeError(w, e)
		return
	}
	var req createRequest
	if err := decodeObject(body, &req); err != nil {
		writeError(w, badRequest("Invalid request body: %s; expected {\"name\": ..., \"config\": {...}}", jsonSyntax(err)))
		return
	}
	// Kafka trims the name and treats a missing one as "" (the config
	// validation then reports it).
	name := ""
	if req.Name != nil {
		name = strings.TrimSpace(*req.Name)
	}
	if len(bytes.TrimSpace(req.Config)) == 0 || string(bytes.TrimSpace(req.Config)) == "null" {
		writeError(w, badRequest("Invalid request body: missing \"config\"; expected {\"name\": ..., \"config\": {...}}"))
		return
	}
	cfg, nulls, err := decodeConfig(req.Config)
	if err != nil {
		writeError(w, configBodyError(err))
		return
	}
	var state herder.TargetState
	if req.InitialState != nil {
		switch st := herder.TargetState(strings.ToUpper(*req.InitialState)); st {
		case herder.TargetRunning, herder.TargetPaused, herder.TargetStopped:
			state = st
		default:
			writeError(w, badRequest("Invalid initial_state %q: must be one of RUNNING, PAUSED, STOPPED", *req.InitialState))
			return
		}
	}
	if e := checkAndPutName(name, cfg, &nulls); e != nil {
		writeError(w, e)
		return
	}
	ctx, cancel := s.ctx(r)
	defer cancel()
	if len(nulls) > 0 {
		s.fail(w, r, body, s.nullValuesError(r, cfg, nulls))
		return
	}
	_, info, err := s.h.PutConnectorConfig(ctx, name, cfg, state, false)
	if err != nil {
		s.fail(w, r, body, err)
		return
	}
	w.Header().Set("Location", location(r, name))
	writeJSON(w, http.StatusCreated, normalizeInfo(info))
}

// decodeObject decodes a JSON object body into v.
func decodeObject(body []byte, v any) error {
	t := bytes.TrimSpace(body)
	if len(t) == 0 {
		return errors.New("empty body")
	}
	if t[0] != '{' {
		return errors.New("not a JSON object")
	}
	return decodeStrict(t, v)
}

// configBodyError is the 400 for a config body that is not a JSON object
// of strings.
func configBodyError(err error) *herder.Error {
	if err == nil {
		return badRequest("Invalid connector config: expected a JSON object of strings")
	}
	return badRequest("Invalid connector config: %s; expected a JSON object of strings", jsonSyntax(err))
}

// checkAndPutName is Kafka's ConnectorsResource.checkAndPutConnectorConfigName:
// a "name" in the config must equal the connector's name; a missing (or
// null) one is set to it.
func checkAndPutName(name string, cfg map[string]string, nulls *[]string) *herder.Error {
	if included, ok := cfg["name"]; ok {
		if included != name {
			return badRequest("Connector name configuration (%s) doesn't match connector name in the URL (%s)", included, name)
		}
		return nil
	}
	cfg["name"] = name
	*nulls = slices.DeleteFunc(*nulls, func(k string) bool { return k == "name" })
	return nil
}

// nullValuesError refuses a config with null values the way Kafka's
// herder does: the validation's errors plus one per null key, in Kafka's
// "Connector configuration is invalid" message.
func (s *Server) nullValuesError(r *http.Request, cfg map[string]string, nulls []string) error {
	ctx, cancel := s.ctx(r)
	defer cancel()
	infos, err := s.h.ValidateConnectorConfig(ctx, cfg)
	if err != nil {
		return err
	}
	infos = addNullErrors(infos, nulls)
	var msgs []string
	count := infos.ErrorCount
	for _, c := range infos.Configs {
		msgs = append(msgs, c.Value.Errors...)
	}
	for _, n := range nulls {
		if !slices.ContainsFunc(infos.Configs, func(c herder.ConfigInfo) bool { return c.Value.Name == n || c.Definition.Name == n }) {
			msgs = append(msgs, nullValueError)
			count++
		}
	}
	return herder.Errorf(http.StatusBadRequest, "%s", InvalidConfigMessage(count, msgs))
}

// InvalidConfigMessage is Kafka's message refusing a connector config
// with validation errors (AbstractHerder.maybeAddConfigErrors).
func InvalidConfigMessage(count int, errs []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Connector configuration is invalid and contains the following %d error(s):", count)
	for _, e := range errs {
		b.WriteString("\n")
		b.WriteString(e)
	}
	b.WriteString("\nYou can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`")
	return b.String()
}

// location is the absolute URL of a connector, as Jersey builds Kafka's
// Location header from the request's base URI.
func location(r *http.Request, name string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/connectors/" + url.PathEscape(name)
}

func (s *Server) getConnector(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	info, err := s.h.ConnectorInfo(ctx, param(r, "connector"))
	if err != nil {
		s.fail(w, r, nil, err)
		return
	}
	writeJSON(w, http.StatusOK, normalizeInfo(info))
}

func (s *Server) deleteConnector(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	if err := s.h.DeleteConnector(ctx, param(r, "connector")); err != nil {
		s.fail(w, r, nil, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) getConnectorConfig(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	info, err := s.h.ConnectorInfo(ctx, param(r, "connector"))
	if err != nil {
		s.fail(w, r, nil, err)
		return
	}
	writeJSON(w, http.StatusOK, normalizeInfo(info).Config)
}

// putConnectorConfig answers PUT /connectors/{name}/config: 201 with a
// Location when it created the connector, 200 when it updated it.
func (s *Server) putConnectorConfig(w http.ResponseWriter, r *http.Request) {
	if e := requireJSON(r); e != nil {
		writeError(w, e)
		return
	}
	body, e := readBody(r)
	if e != nil {
		writeError(w, e)
		return
	}
	cfg, nulls, err := decodeConfig(body)
	if err != nil || cfg == nil {
		writeError(w, configBodyError(err))
		return
	}
	name := param(r, "connector")
	if e := checkAndPutName(name, cfg, &nulls); e != nil {
		writeError(w, e)
		return
	}
	if len(nulls) > 0 {
		s.fail(w, r, body, s.nullValuesError(r, cfg, nulls))
		return
	}
	ctx, cancel := s.ctx(r)
	defer cancel()
	created, info, err := s.h.PutConnectorConfig(ctx, name, cfg, "", true)
	if err != nil {
		s.fail(w, r, body, err)
		return
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
		w.Header().Set("Location", location(r, name))
	}
	writeJSON(w, code, normalizeInfo(info))
}

func (s *Server) patchConnectorConfig(w http.ResponseWriter, r *http.Request) {
	if e := requireJSON(r); e != nil {
		writeError(w, e)
		return
	}
	body, e := readBody(r)
	if e != nil {
		writeError(w, e)
		return
	}
	patch, err := decodePatch(body)
	if err != nil {
		writeError(w, configBodyError(err))
		return
	}
	ctx, cancel := s.ctx(r)
	defer cancel()
	info, err := s.h.PatchConnectorConfig(ctx, param(r, "connector"), patch)
	if err != nil {
		s.fail(w, r, body, err)
		return
	}
	writeJSON(w, http.StatusOK, normalizeInfo(info))
}

func (s *Server) getConnectorStatus(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	st, err := s.h.ConnectorStatus(ctx, param(r, "connector"))
	if err != nil {
		s.fail(w, r, nil, err)
		return
	}
	writeJSON(w, http.StatusOK, normalizeStatus(st))
}

// restartConnector answers POST /connectors/{name}/restart. Without
// includeTasks and onlyFailed it restarts the connector alone and answers
// 204, as Kafka did before KIP-745; otherwise 202 with the planned state.
func (s *Server) restartConnector(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	includeTasks, onlyFailed := javaBool(q.Get("includeTasks")), javaBool(q.Get("onlyFailed"))
	ctx, cancel := s.ctx(r)
	defer cancel()
	name := param(r, "connector")
	st, err := s.h.RestartConnector(ctx, name, includeTasks, onlyFailed)
	if err != nil {
		s.fail(w, r, nil, err)
		return
	}
	if !includeTasks && !onlyFailed {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if st == nil {
		// A herder that plans no state reports the current one.
		if st, err = s.h.ConnectorStatus(ctx, name); err != nil {
			s.fail(w, r, nil, err)
			return
		}
	}
	writeJSON(w, http.StatusAccepted, normalizeStatus(st))
}

func (s *Server) pauseConnector(w http.ResponseWriter, r *http.Request) {
	s.lifecycle(w, r, s.h.PauseConnector, http.StatusAccepted)
}

func (s *Server) resumeConnector(w http.ResponseWriter, r *http.Request) {
	s.lifecycle(w, r, s.h.ResumeConnector, http.StatusAccepted)
}

// stopConnector answers 204: Kafka's stop returns void, unlike pause and
// resume (202).
func (s *Server) stopConnector(w http.ResponseWriter, r *http.Request) {
	s.lifecycle(w, r, s.h.StopConnector, http.StatusNoContent)
}

func (s *Server) lifecycle(w http.ResponseWriter, r *http.Request, op func(ctx context.Context, name string) error, code int) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	if err := op(ctx, param(r, "connector")); err != nil {
		s.fail(w, r, nil, err)
		return
	}
	w.WriteHeader(code)
}

func (s *Server) getTasks(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	tasks, err := s.h.TaskConfigs(ctx, param(r, "connector"))
	if err != nil {
		s.fail(w, r, nil, err)
		return
	}
	out := make([]herder.TaskInfo, len(tasks))
	for i, t := range tasks {
		if t.Config == nil {
			t.Config = map[string]string{}
		}
		out[i] = t
	}
	writeJSON(w, http.StatusOK, out)
}

// taskID parses the {task} path parameter as Jersey parses an Integer: a
// value that is not one matches no resource (404 "HTTP 404 Not Found").
func taskID(r *http.Request) (herder.TaskID, bool) {
	n, err := strconv.ParseInt(param(r, "task"), 10, 32)
	if err != nil {
		return herder.TaskID{}, false
	}
	return herder.TaskID{Connector: param(r, "connector"), Task: int(n)}, true
}

func (s *Server) getTaskStatus(w http.ResponseWriter, r *http.Request) {
	id, ok := taskID(r)
	if !ok {
		writeError(w, herder.Errorf(http.StatusNotFound, "HTTP 404 Not Found"))
		return
	}
	ctx, cancel := s.ctx(r)
	defer cancel()
	st, err := s.h.TaskStatus(ctx, id)
	if err != nil {
		s.fail(w, r, nil, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (s *Server) restartTask(w http.ResponseWriter, r *http.Request) {
	id, ok := taskID(r)
	if !ok {
		writeError(w, herder.Errorf(http.StatusNotFound, "HTTP 404 Not Found"))
		return
	}
	ctx, cancel := s.ctx(r)
	defer cancel()
	if err := s.h.RestartTask(ctx, id); err != nil {
		s.fail(w, r, nil, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// ActiveTopics is GET /connectors/{name}/topics' value per connector.
type ActiveTopics struct {
	Topics []string `json:"topics"`
}

func (s *Server) getTopics(w http.ResponseWriter, r *http.Request) {
	if s.opts.TopicTrackingDisabled {
		writeError(w, herder.Errorf(http.StatusForbidden, "Topic tracking is disabled."))
		return
	}
	ctx, cancel := s.ctx(r)
	defer cancel()
	name := param(r, "connector")
	topics, err := s.h.ConnectorActiveTopics(ctx, name)
	if err != nil {
		s.fail(w, r, nil, err)
		return
	}
	if topics == nil {
		topics = []string{}
	}
	writeJSON(w, http.StatusOK, map[string]ActiveTopics{name: {Topics: topics}})
}

func (s *Server) resetTopics(w http.ResponseWriter, r *http.Request) {
	if s.opts.TopicTrackingDisabled {
		writeError(w, herder.Errorf(http.StatusForbidden, "Topic tracking is disabled."))
		return
	}
	if s.opts.TopicTrackingResetDisabled {
		writeError(w, herder.Errorf(http.StatusForbidden, "Topic tracking reset is disabled."))
		return
	}
	s.lifecycle(w, r, s.h.ResetConnectorActiveTopics, http.StatusAccepted)
}

func (s *Server) getOffsets(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	offs, err := s.h.ConnectorOffsets(ctx, param(r, "connector"))
	if err != nil {
		s.fail(w, r, nil, err)
		return
	}
	out := herder.ConnectorOffsets{Offsets: []herder.ConnectorOffset{}}
	if offs != nil && offs.Offsets != nil {
		out.Offsets = offs.Offsets
	}
	writeJSON(w, http.StatusOK, out)
}

// Message is the KIP-875 endpoints' answer: {"message": "..."}.
type Message struct {
	Message string `json:"message"`
}

func (s *Server) alterOffsets(w http.ResponseWriter, r *http.Request) {
	if e := requireJSON(r); e != nil {
		writeError(w, e)
		return
	}
	body, e := readBody(r)
	if e != nil {
		writeError(w, e)
		return
	}
	var req struct {
		Offsets []struct {
			Partition map[string]any `json:"partition"`
			Offset    map[string]any `json:"offset"`
		} `json:"offsets"`
	}
	if err := decodeObject(body, &req); err != nil {
		writeError(w, badRequest("Invalid offsets: %s; expected {\"offsets\": [{\"partition\": {...}, \"offset\": {...}}]}", jsonSyntax(err)))
		return
	}
	if len(req.Offsets) == 0 {
		writeError(w, badRequest("Partitions / offsets need to be provided for an alter offsets request"))
		return
	}
	offs := &herder.ConnectorOffsets{Offsets: make([]herder.ConnectorOffset, len(req.Offsets))}
	for i, o := range req.Offsets {
		offs.Offsets[i] = herder.ConnectorOffset{Partition: javaNumbers(o.Partition), Offset: javaNumbers(o.Offset)}
	}
	ctx, cancel := s.ctx(r)
	defer cancel()
	msg, err := s.h.AlterConnectorOffsets(ctx, param(r, "connector"), offs)
	if err != nil {
		s.fail(w, r, body, err)
		return
	}
	writeJSON(w, http.StatusOK, Message{msg})
}

func (s *Server) resetOffsets(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	msg, err := s.h.ResetConnectorOffsets(ctx, param(r, "connector"))
	if err != nil {
		s.fail(w, r, nil, err)
		return
	}
	writeJSON(w, http.StatusOK, Message{msg})
}

// javaNumbers turns the json.Numbers of a decoded offset map into what
// Jackson gives Kafka's herder: integers as int64 (Kafka's Integer/Long),
// others as float64, so large offsets keep every digit.
func javaNumbers(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = javaNumber(v)
	}
	return out
}

func javaNumber(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		if f, err := x.Float64(); err == nil && !math.IsInf(f, 0) {
			return f
		}
		return x.String()
	case map[string]any:
		return javaNumbers(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = javaNumber(e)
		}
		return out
	}
	return v
}

// normalizeInfo copies info with nil lists and maps replaced by empty
// ones (Kafka prints [] and {}).
func normalizeInfo(info *herder.ConnectorInfo) *herder.ConnectorInfo {
	if info == nil {
		return &herder.ConnectorInfo{Config: map[string]string{}, Tasks: []herder.TaskID{}}
	}
	out := *info
	if out.Config == nil {
		out.Config = map[string]string{}
	}
	if out.Tasks == nil {
		out.Tasks = []herder.TaskID{}
	}
	return &out
}

func normalizeStatus(st *herder.ConnectorStateInfo) *herder.ConnectorStateInfo {
	if st == nil {
		return &herder.ConnectorStateInfo{Tasks: []herder.TaskState{}}
	}
	out := *st
	if out.Tasks == nil {
		out.Tasks = []herder.TaskState{}
	}
	return &out
}
