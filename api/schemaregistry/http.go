package schemaregistry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
)

// contentType is Confluent's media type; application/json and
// application/octet-stream requests are accepted too, as Confluent does.
const contentType = "application/vnd.schemaregistry.v1+json"

// forwardedHeader marks a request forwarded to the leader, so a leader
// change in flight cannot bounce it around.
const forwardedHeader = "X-Fjord-Registry-Forwarded"

// maxBody caps request bodies (Confluent's default max request size is
// larger than any sane schema; 16 MiB keeps a bad client from OOMing us).
const maxBody = 16 << 20

func (s *Server) routes(r chi.Router) {
	r.Get("/", func(w http.ResponseWriter, req *http.Request) { writeJSON(w, http.StatusOK, struct{}{}) })
	r.Get("/subjects", s.listSubjects)
	r.Get("/subjects/{subject}/versions", s.listVersions)
	r.Post("/subjects/{subject}/versions", s.register)
	r.Get("/subjects/{subject}/versions/{version}", s.getVersion)
	r.Get("/subjects/{subject}/versions/{version}/schema", s.getVersionSchema)
	r.Get("/subjects/{subject}/versions/{version}/referencedby", s.referencedBy)
	r.Delete("/subjects/{subject}/versions/{version}", s.deleteVersion)
	r.Post("/subjects/{subject}", s.lookup)
	r.Delete("/subjects/{subject}", s.deleteSubject)
	r.Get("/schemas", s.listSchemas)
	r.Get("/contexts", func(w http.ResponseWriter, req *http.Request) { writeJSON(w, http.StatusOK, []string{"."}) })
	r.Get("/schemas/types", func(w http.ResponseWriter, req *http.Request) { writeJSON(w, http.StatusOK, []string{"AVRO"}) })
	r.Get("/schemas/ids/{id}", s.schemaByID)
	r.Get("/schemas/ids/{id}/schema", s.schemaByIDRaw)
	r.Get("/schemas/ids/{id}/subjects", s.subjectsByID)
	r.Get("/schemas/ids/{id}/versions", s.versionsByID)
	r.Get("/config", s.getConfig)
	r.Put("/config", s.putConfig)
	r.Delete("/config", s.deleteConfig)
	r.Get("/config/{subject}", s.getConfig)
	r.Put("/config/{subject}", s.putConfig)
	r.Delete("/config/{subject}", s.deleteConfig)
	r.Post("/compatibility/subjects/{subject}/versions", s.compatibility)
	r.Post("/compatibility/subjects/{subject}/versions/{version}", s.compatibility)
	r.Get("/mode", s.getMode)
	r.Put("/mode", s.putMode)
	r.Get("/mode/{subject}", s.getMode)
	r.Put("/mode/{subject}", s.putMode)
	r.Delete("/mode/{subject}", s.deleteMode)
	r.NotFound(func(w http.ResponseWriter, req *http.Request) {
		writeError(w, &Error{Status: http.StatusNotFound, Code: http.StatusNotFound, Message: "HTTP 404 Not Found"})
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, req *http.Request) {
		writeError(w, &Error{Status: http.StatusMethodNotAllowed, Code: http.StatusMethodNotAllowed, Message: "HTTP 405 Method Not Allowed"})
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, err error) {
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Status: http.StatusInternalServerError, Code: 50001, Message: err.Error()}
	}
	writeJSON(w, e.Status, e)
}

// subjectParam is the subject path segment, decoded once: chi matches
// on the raw path when the URL has escapes Go would not re-create (an
// encoded "/"), else on the decoded one.
func subjectParam(r *http.Request) string {
	s := chi.URLParam(r, "subject")
	if r.URL.RawPath == "" {
		return s
	}
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

func boolQuery(r *http.Request, name string) bool {
	v, _ := strconv.ParseBool(r.URL.Query().Get(name))
	return v
}

// forward sends a write to the leader when this instance is not it, and
// reports whether it did (then the response is written).
func (s *Server) forward(w http.ResponseWriter, r *http.Request, body []byte, err error) bool {
	var nl *errNotLeader
	if !errors.As(err, &nl) {
		return false
	}
	if r.Header.Get(forwardedHeader) != "" {
		writeError(w, &Error{Status: http.StatusInternalServerError, Code: codeRequestForwardingFailed,
			Message: "Error while forwarding the request to the leader: this instance is not the leader either (leader election in progress)"})
		return true
	}
	l := nl.leader
	if !l.Known {
		// A rebalance is settling: wait a little for a leader.
		deadline := time.Now().Add(s.cfg.LeaderWait)
		for !l.Known && time.Now().Before(deadline) {
			select {
			case <-r.Context().Done():
				return true
			case <-time.After(50 * time.Millisecond):
			}
			l = s.elector.Leader()
		}
		if l.Self {
			return false // we became leader: the caller retries locally
		}
		if !l.Known {
			writeError(w, &Error{Status: http.StatusInternalServerError, Code: codeUnknownLeader, Message: "Leader not known."})
			return true
		}
	}
	if l.URL == "" {
		writeError(w, &Error{Status: http.StatusInternalServerError, Code: codeRequestForwardingFailed,
			Message: "Error while forwarding the request to the leader: the leader advertises no URL (set its advertised URL)"})
		return true
	}
	target := strings.TrimSuffix(l.URL, "/") + strings.TrimPrefix(r.URL.Path, s.prefix)
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	req, rerr := http.NewRequestWithContext(r.Context(), r.Method, target, bytes.NewReader(body))
	if rerr != nil {
		writeError(w, &Error{Status: http.StatusInternalServerError, Code: codeRequestForwardingFailed, Message: "Error while forwarding the request to the leader: " + rerr.Error()})
		return true
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set(forwardedHeader, "1")
	if a := r.Header.Get("Authorization"); a != "" {
		req.Header.Set("Authorization", a)
	}
	resp, rerr := s.httpc.Do(req)
	if rerr != nil {
		writeError(w, &Error{Status: http.StatusInternalServerError, Code: codeRequestForwardingFailed, Message: "Error while forwarding the request to the leader: " + rerr.Error()})
		return true
	}
	defer resp.Body.Close()
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
	return true
}

// write runs a write locally or forwards it to the leader. body is the
// raw request body (re-sent when forwarding); do performs the write.
func (s *Server) write(w http.ResponseWriter, r *http.Request, body []byte, do func(ctx context.Context) (any, error)) {
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.WriteTimeout)
	defer cancel()
	for attempt := 0; attempt < 2; attempt++ {
		v, err := do(ctx)
		if err == nil {
			writeJSON(w, http.StatusOK, v)
			return
		}
		var nl *errNotLeader
		if errors.As(err, &nl) && !nl.leader.Known {
			// forward waits for a leader; if that is us, retry here.
			if s.forward(w, r, body, err) {
				return
			}
			continue
		}
		if s.forward(w, r, body, err) {
			return
		}
		writeError(w, err)
		return
	}
	writeError(w, &Error{Status: http.StatusInternalServerError, Code: codeUnknownLeader, Message: "Leader not known."})
}

func (s *Server) listSubjects(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.reg.Subjects(boolQuery(r, "deleted"), r.URL.Query().Get("subjectPrefix")))
}

func (s *Server) listVersions(w http.ResponseWriter, r *http.Request) {
	vs, err := s.reg.Versions(subjectParam(r), boolQuery(r, "deleted"), boolQuery(r, "deletedOnly"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, vs)
}

func (s *Server) getVersion(w http.ResponseWriter, r *http.Request) {
	si, err := s.reg.Version(subjectParam(r), chi.URLParam(r, "version"), boolQuery(r, "deleted"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, si)
}

// getVersionSchema answers the bare schema text, as Confluent does.
func (s *Server) getVersionSchema(w http.ResponseWriter, r *http.Request) {
	si, err := s.reg.Version(subjectParam(r), chi.URLParam(r, "version"), boolQuery(r, "deleted"))
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, si.Schema)
}

// referencedBy answers no ids: schema references are not supported, so
// nothing refers to anything (after checking the version exists).
func (s *Server) referencedBy(w http.ResponseWriter, r *http.Request) {
	if _, err := s.reg.Version(subjectParam(r), chi.URLParam(r, "version"), true); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, []int{})
}

// listSchemas is GET /schemas: every version (the latest per subject
// with latestOnly), filtered by subjectPrefix.
func (s *Server) listSchemas(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.reg.Schemas(r.URL.Query().Get("subjectPrefix"), boolQuery(r, "deleted"), boolQuery(r, "latestOnly")))
}

func (s *Server) readRegister(w http.ResponseWriter, r *http.Request) ([]byte, RegisterRequest, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		writeError(w, &Error{Status: http.StatusBadRequest, Code: http.StatusBadRequest, Message: "read request: " + err.Error()})
		return nil, RegisterRequest{}, false
	}
	var req RegisterRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, &Error{Status: http.StatusBadRequest, Code: http.StatusBadRequest, Message: "Unrecognized or malformed request body: " + err.Error()})
		return nil, req, false
	}
	return body, req, true
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	body, req, ok := s.readRegister(w, r)
	if !ok {
		return
	}
	subject := subjectParam(r)
	s.write(w, r, body, func(ctx context.Context) (any, error) {
		id, err := s.reg.Register(ctx, subject, req)
		if err != nil {
			return nil, err
		}
		return map[string]int{"id": id}, nil
	})
}

func (s *Server) lookup(w http.ResponseWriter, r *http.Request) {
	_, req, ok := s.readRegister(w, r)
	if !ok {
		return
	}
	si, err := s.reg.Lookup(subjectParam(r), req, boolQuery(r, "deleted"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, si)
}

func (s *Server) deleteVersion(w http.ResponseWriter, r *http.Request) {
	subject, ver, perm := subjectParam(r), chi.URLParam(r, "version"), boolQuery(r, "permanent")
	s.write(w, r, nil, func(ctx context.Context) (any, error) {
		return s.reg.DeleteVersion(ctx, subject, ver, perm)
	})
}

func (s *Server) deleteSubject(w http.ResponseWriter, r *http.Request) {
	subject, perm := subjectParam(r), boolQuery(r, "permanent")
	s.write(w, r, nil, func(ctx context.Context) (any, error) {
		return s.reg.DeleteSubject(ctx, subject, perm)
	})
}

func (s *Server) idParam(w http.ResponseWriter, r *http.Request) (int, bool) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 32)
	if err != nil {
		writeError(w, &Error{Status: http.StatusNotFound, Code: http.StatusNotFound, Message: "HTTP 404 Not Found"})
		return 0, false
	}
	return int(id), true
}

// schemaByID answers {"schema": …} (schemaType only for non-Avro).
func (s *Server) schemaByID(w http.ResponseWriter, r *http.Request) {
	id, ok := s.idParam(w, r)
	if !ok {
		return
	}
	t, text, err := s.reg.SchemaByID(id)
	if err != nil {
		writeError(w, err)
		return
	}
	out := struct {
		SchemaType string `json:"schemaType,omitempty"`
		Schema     string `json:"schema"`
	}{Schema: text}
	if t != "AVRO" {
		out.SchemaType = t
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) schemaByIDRaw(w http.ResponseWriter, r *http.Request) {
	id, ok := s.idParam(w, r)
	if !ok {
		return
	}
	_, text, err := s.reg.SchemaByID(id)
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, text)
}

func (s *Server) subjectsByID(w http.ResponseWriter, r *http.Request) {
	id, ok := s.idParam(w, r)
	if !ok {
		return
	}
	uses, err := s.reg.IDUses(id, boolQuery(r, "deleted"))
	if err != nil {
		writeError(w, err)
		return
	}
	out := []string{}
	for _, u := range uses {
		if len(out) == 0 || out[len(out)-1] != u.Subject {
			out = append(out, u.Subject)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) versionsByID(w http.ResponseWriter, r *http.Request) {
	id, ok := s.idParam(w, r)
	if !ok {
		return
	}
	uses, err := s.reg.IDUses(id, boolQuery(r, "deleted"))
	if err != nil {
		writeError(w, err)
		return
	}
	if uses == nil {
		uses = []subjectVersion{}
	}
	writeJSON(w, http.StatusOK, uses)
}

func (s *Server) getConfig(w http.ResponseWriter, r *http.Request) {
	l, err := s.reg.Config(subjectParam(r), boolQuery(r, "defaultToGlobal"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"compatibilityLevel": l})
}

func (s *Server) putConfig(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		writeError(w, err)
		return
	}
	var req struct {
		Compatibility string `json:"compatibility"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, &Error{Status: http.StatusBadRequest, Code: http.StatusBadRequest, Message: "Unrecognized or malformed request body: " + err.Error()})
		return
	}
	subject := subjectParam(r)
	s.write(w, r, body, func(ctx context.Context) (any, error) {
		l, err := s.reg.SetConfig(ctx, subject, req.Compatibility)
		if err != nil {
			return nil, err
		}
		return map[string]string{"compatibility": l}, nil
	})
}

func (s *Server) deleteConfig(w http.ResponseWriter, r *http.Request) {
	subject := subjectParam(r)
	s.write(w, r, nil, func(ctx context.Context) (any, error) {
		l, err := s.reg.DeleteConfig(ctx, subject)
		if err != nil {
			return nil, err
		}
		return map[string]string{"compatibilityLevel": l}, nil
	})
}

func (s *Server) compatibility(w http.ResponseWriter, r *http.Request) {
	_, req, ok := s.readRegister(w, r)
	if !ok {
		return
	}
	verbose := boolQuery(r, "verbose")
	msgs, err := s.reg.CheckCompatibility(subjectParam(r), chi.URLParam(r, "version"), req)
	var e *Error
	if err != nil && verbose && errors.As(err, &e) && e.Code == codeInvalidSchema {
		// Confluent answers an invalid schema as incompatible when verbose.
		msgs, err = []string{e.Message}, nil
	}
	if err != nil {
		writeError(w, err)
		return
	}
	out := struct {
		IsCompatible bool      `json:"is_compatible"`
		Messages     *[]string `json:"messages,omitempty"`
	}{IsCompatible: len(msgs) == 0}
	if verbose {
		if msgs == nil {
			msgs = []string{}
		}
		out.Messages = &msgs
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getMode(w http.ResponseWriter, r *http.Request) {
	m, err := s.reg.Mode(subjectParam(r), boolQuery(r, "defaultToGlobal"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"mode": m})
}

func (s *Server) putMode(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		writeError(w, err)
		return
	}
	var req struct {
		Mode string `json:"mode"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, &Error{Status: http.StatusBadRequest, Code: http.StatusBadRequest, Message: "Unrecognized or malformed request body: " + err.Error()})
		return
	}
	subject, force := subjectParam(r), boolQuery(r, "force")
	s.write(w, r, body, func(ctx context.Context) (any, error) {
		m, err := s.reg.SetMode(ctx, subject, req.Mode, force)
		if err != nil {
			return nil, err
		}
		return map[string]string{"mode": m}, nil
	})
}

func (s *Server) deleteMode(w http.ResponseWriter, r *http.Request) {
	subject := subjectParam(r)
	s.write(w, r, nil, func(ctx context.Context) (any, error) {
		m, err := s.reg.DeleteMode(ctx, subject)
		if err != nil {
			return nil, err
		}
		return map[string]string{"mode": m}, nil
	})
}
