package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
)

// The schema views read a Confluent-compatible schema registry over its
// REST API (Fjord's own, Confluent's, Karapace, Apicurio's ccompat), so
// the console shows what any registry client would see.

// schemaList is GET /api/v1/schemas.
type schemaList struct {
	// Available: a registry is configured and answered.
	Available bool `json:"available"`
	// Compatibility is the global level (null when unavailable).
	Compatibility *string          `json:"compatibility"`
	Subjects      []subjectSummary `json:"subjects"`
	// Detail says why the registry is unavailable ("" when it is).
	Detail string `json:"detail,omitempty"`
}

type subjectSummary struct {
	Subject       string `json:"subject"`
	Versions      []int  `json:"versions"`
	LatestVersion int    `json:"latest_version"`
	LatestID      int    `json:"latest_id"`
	SchemaType    string `json:"schema_type"`
	// Compatibility is the subject's own level, null when it follows the
	// global one.
	Compatibility *string `json:"compatibility"`
}

// subjectDetail is GET /api/v1/schemas/{subject}.
type subjectDetail struct {
	Subject string `json:"subject"`
	// Compatibility is the effective level: the subject's, else global.
	Compatibility string          `json:"compatibility"`
	Versions      []schemaVersion `json:"versions"`
}

type schemaVersion struct {
	Version    int    `json:"version"`
	ID         int    `json:"id"`
	SchemaType string `json:"schema_type"`
	Schema     string `json:"schema"`
}

// registryVersion is the registry's GET /subjects/{s}/versions/{v}.
type registryVersion struct {
	Subject    string `json:"subject"`
	Version    int    `json:"version"`
	ID         int    `json:"id"`
	SchemaType string `json:"schemaType"` // absent for AVRO
	Schema     string `json:"schema"`
}

func (v registryVersion) schemaType() string {
	if v.SchemaType == "" {
		return "AVRO"
	}
	return v.SchemaType
}

// registryConfig is GET /config[/{s}]: Confluent answers
// compatibilityLevel, some versions and forks compatibility.
type registryConfig struct {
	CompatibilityLevel string `json:"compatibilityLevel"`
	Compatibility      string `json:"compatibility"`
}

func (c registryConfig) level() string {
	if c.CompatibilityLevel != "" {
		return c.CompatibilityLevel
	}
	return c.Compatibility
}

// registryError is a registry's non-2xx answer ({"error_code": 40401,
// "message": ...} in Confluent's API).
type registryError struct {
	status  int
	code    int
	message string
}

func (e *registryError) Error() string {
	return fmt.Sprintf("schema registry answered %d (error %d): %s", e.status, e.code, e.message)
}

func isRegistryNotFound(err error) bool {
	var re *registryError
	return errors.As(err, &re) && re.status == http.StatusNotFound
}

// registryConcurrency bounds the requests one admin call makes to the
// registry at once (a listing asks three per subject).
const registryConcurrency = 8

// registryGet GETs path (already escaped) from the registry into out.
func (s *Server) registryGet(ctx context.Context, path string, out any) error {
	base := strings.TrimRight(s.opts.RegistryURL, "/")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/vnd.schemaregistry.v1+json, application/json")
	resp, err := s.http.Do(req)
	if err != nil {
		return fmt.Errorf("the schema registry at %s did not answer: %w", base, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return fmt.Errorf("reading the schema registry's answer to GET %s: %w", path, err)
	}
	if resp.StatusCode/100 != 2 {
		re := &registryError{status: resp.StatusCode, message: strings.TrimSpace(string(body))}
		var e struct {
			Code    int    `json:"error_code"`
			Message string `json:"message"`
		}
		if json.Unmarshal(body, &e) == nil && e.Message != "" {
			re.code, re.message = e.Code, e.Message
		}
		return re
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("the schema registry's answer to GET %s is not what Confluent's API returns: %w", path, err)
	}
	return nil
}

// noRegistry is the 503 answered by routes that need a registry when
// this node has none.
func noRegistry() error {
	return errorf(http.StatusServiceUnavailable,
		"No schema registry is configured for this admin API (fjord dev serves one at /schema-registry).")
}

// registryFailure turns a registry error into the answer: the
// registry's own 4xx status, else 503 (it is down or unreachable).
func registryFailure(err error) error {
	var re *registryError
	if errors.As(err, &re) && re.status/100 == 4 {
		return errorf(re.status, "%s", re.message)
	}
	return errorf(http.StatusServiceUnavailable, "%v", err)
}

func (s *Server) listSchemas(w http.ResponseWriter, r *http.Request) {
	out := schemaList{Subjects: []subjectSummary{}}
	if s.opts.RegistryURL == "" {
		out.Detail = "No schema registry is configured for this admin API."
		writeJSON(w, http.StatusOK, out)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 20*time.Second)
	defer cancel()
	var global registryConfig
	if err := s.registryGet(ctx, "/config", &global); err != nil {
		// Unreachable or broken: the page says so rather than failing.
		out.Detail = err.Error()
		writeJSON(w, http.StatusOK, out)
		return
	}
	level := global.level()
	out.Available, out.Compatibility = true, &level
	var names []string
	if err := s.registryGet(ctx, "/subjects", &names); err != nil {
		fail(w, registryFailure(err))
		return
	}
	sort.Strings(names)
	out.Subjects = make([]subjectSummary, len(names))
	errs := make([]error, len(names))
	runBounded(len(names), registryConcurrency, func(i int) {
		out.Subjects[i], errs[i] = s.subjectSummary(ctx, names[i])
	})
	// A subject deleted between the listing and its details is left
	// out; any other failure fails the answer.
	kept := out.Subjects[:0]
	for i, sum := range out.Subjects {
		switch {
		case errs[i] == nil:
			kept = append(kept, sum)
		case isRegistryNotFound(errs[i]):
		default:
			fail(w, registryFailure(fmt.Errorf("subject %s: %w", names[i], errs[i])))
			return
		}
	}
	out.Subjects = kept
	writeJSON(w, http.StatusOK, out)
}

// subjectSummary reads a subject's versions, latest version and own
// compatibility level.
func (s *Server) subjectSummary(ctx context.Context, subject string) (subjectSummary, error) {
	sum := subjectSummary{Subject: subject}
	p := "/subjects/" + url.PathEscape(subject)
	if err := s.registryGet(ctx, p+"/versions", &sum.Versions); err != nil {
		return sum, err
	}
	var latest registryVersion
	if err := s.registryGet(ctx, p+"/versions/latest", &latest); err != nil {
		return sum, err
	}
	sum.LatestVersion, sum.LatestID, sum.SchemaType = latest.Version, latest.ID, latest.schemaType()
	var cfg registryConfig
	switch err := s.registryGet(ctx, "/config/"+url.PathEscape(subject), &cfg); {
	case err == nil:
		if l := cfg.level(); l != "" {
			sum.Compatibility = &l
		}
	case isRegistryNotFound(err): // no subject-level config: null
	default:
		return sum, err
	}
	return sum, nil
}

func (s *Server) getSchemaSubject(w http.ResponseWriter, r *http.Request) {
	if s.opts.RegistryURL == "" {
		fail(w, noRegistry())
		return
	}
	subject := unescapedParam(r, "subject")
	ctx, cancel := context.WithTimeout(r.Context(), 20*time.Second)
	defer cancel()
	p := "/subjects/" + url.PathEscape(subject)
	var versions []int
	if err := s.registryGet(ctx, p+"/versions", &versions); err != nil {
		if isRegistryNotFound(err) {
			fail(w, errorf(http.StatusNotFound, "Subject '%s' not found.", subject))
			return
		}
		fail(w, registryFailure(err))
		return
	}
	out := subjectDetail{Subject: subject, Versions: make([]schemaVersion, len(versions))}
	var cfg registryConfig
	if err := s.registryGet(ctx, "/config/"+url.PathEscape(subject)+"?defaultToGlobal=true", &cfg); err != nil {
		fail(w, registryFailure(err))
		return
	}
	out.Compatibility = cfg.level()
	errs := make([]error, len(versions))
	runBounded(len(versions), registryConcurrency, func(i int) {
		var v registryVersion
		errs[i] = s.registryGet(ctx, fmt.Sprintf("%s/versions/%d", p, versions[i]), &v)
		out.Versions[i] = schemaVersion{Version: versions[i], ID: v.ID, SchemaType: v.schemaType(), Schema: v.Schema}
	})
	for _, err := range errs {
		if err != nil {
			fail(w, registryFailure(err))
			return
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// unescapedParam is a path segment decoded once: chi matches on the raw path
// when the URL holds escapes Go would not re-create (an encoded "/" in a
// subject name), and then hands the segment over still escaped.
func unescapedParam(r *http.Request, name string) string {
	v := chi.URLParam(r, name)
	if r.URL.RawPath == "" {
		return v
	}
	if u, err := url.PathUnescape(v); err == nil {
		return u
	}
	return v
}

// runBounded calls f(0..n-1) on at most limit goroutines and waits.
func runBounded(n, limit int, f func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, limit)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			f(i)
		}()
	}
	wg.Wait()
}
