package schemaregistry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/fjordhq/fjord/converters/avro/avsc"
)

// Error is an answer in Confluent's error shape: an HTTP status, a
// Confluent error code and a message.
type Error struct {
	Status  int    `json:"-"`
	Code    int    `json:"error_code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Message }

func newError(status, code int, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Confluent's error codes (io.confluent.kafka.schemaregistry.rest.exceptions.Errors).
const (
	codeSubjectNotFound         = 40401
	codeVersionNotFound         = 40402
	codeSchemaNotFound          = 40403
	codeSubjectSoftDeleted      = 40404
	codeSubjectNotSoftDeleted   = 40405
	codeVersionSoftDeleted      = 40406
	codeVersionNotSoftDeleted   = 40407
	codeSubjectCompatNotConfig  = 40408
	codeSubjectModeNotConfig    = 40409
	codeIncompatible            = 409
	codeInvalidSchema           = 42201
	codeInvalidVersion          = 42202
	codeInvalidCompatibility    = 42203
	codeInvalidMode             = 42204
	codeOperationNotPermitted   = 42205
	codeIDDoesNotMatch          = 42207
	codeStoreError              = 50001
	codeTimeout                 = 50002
	codeRequestForwardingFailed = 50003
	codeUnknownLeader           = 50004
)

func subjectNotFound(s string) *Error {
	return newError(http.StatusNotFound, codeSubjectNotFound, "Subject '%s' not found.", s)
}

func versionNotFound(v int) *Error {
	return newError(http.StatusNotFound, codeVersionNotFound, "Version %d not found.", v)
}

func invalidVersion(v string) *Error {
	return newError(http.StatusUnprocessableEntity, codeInvalidVersion,
		"The specified version '%s' is not a valid version id. Allowed values are between [1, 2^31-1] and the string \"latest\"", v)
}

func storeError(msg string, err error) *Error {
	return newError(http.StatusInternalServerError, codeStoreError, "%s: %v", msg, err)
}

// errNotLeader is returned by writes on an instance that is not the
// leader; the HTTP layer forwards the request to Leader.URL.
type errNotLeader struct{ leader Leader }

func (e *errNotLeader) Error() string { return "not the schema registry leader" }

// Registry is the schema registry over a Journal: the state every
// instance rebuilds from the log, reads served from it, and writes
// (register, delete, config, mode) done by one writer goroutine on the
// leader, each appended to the journal and applied before it answers.
//
// Locking: mu guards the state and is never held across I/O; writes are
// serialised by the writer goroutine, not by a lock; parsedMu (a cache)
// may be taken inside mu.
type Registry struct {
	journal      Journal
	elector      Elector
	defaultLevel string
	log          *slog.Logger

	mu      sync.RWMutex
	st      *state
	applied chan struct{} // closed and replaced after each apply

	writes chan writeReq
	stop   chan struct{}
	wg     sync.WaitGroup

	// parsedMu guards parsed (stored schema text → parsed), taken alone
	// or inside mu, never the other way round.
	parsedMu sync.Mutex
	parsed   map[string]*avsc.Schema
}

type writeReq struct {
	ctx     context.Context
	fn      func(ctx context.Context) (any, error)
	done    chan writeResult
	barrier bool
}

type writeResult struct {
	v   any
	err error
}

// NewRegistry returns a registry over j, written by the leader e names.
// defaultLevel is the compatibility level when none is configured
// (Confluent's schema.compatibility.level, BACKWARD).
func NewRegistry(j Journal, e Elector, defaultLevel string, logger *slog.Logger) (*Registry, error) {
	if defaultLevel == "" {
		defaultLevel = Backward
	}
	defaultLevel = strings.ToUpper(defaultLevel)
	if !validLevel(defaultLevel) {
		return nil, fmt.Errorf("invalid default compatibility level %q: want one of NONE, BACKWARD, BACKWARD_TRANSITIVE, FORWARD, FORWARD_TRANSITIVE, FULL, FULL_TRANSITIVE", defaultLevel)
	}
	if logger == nil {
		logger = slog.Default()
	}
	if e == nil {
		e = SelfElector{}
	}
	return &Registry{
		journal: j, elector: e, defaultLevel: defaultLevel, log: logger,
		st: newState(), applied: make(chan struct{}),
		writes: make(chan writeReq), stop: make(chan struct{}),
		parsed: map[string]*avsc.Schema{},
	}, nil
}

// Start replays the journal and starts the writer.
func (r *Registry) Start(ctx context.Context) error {
	if err := r.journal.Start(ctx, r.apply); err != nil {
		return fmt.Errorf("read schemas journal: %w", err)
	}
	r.wg.Add(1)
	go r.runWriter()
	return nil
}

// Close stops the writer (the journal is closed by its owner).
func (r *Registry) Close() {
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	r.wg.Wait()
}

func (r *Registry) apply(rec Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.st.apply(rec); err != nil {
		r.log.Warn("schema registry: skipping record", "err", err)
	}
	close(r.applied)
	r.applied = make(chan struct{})
}

func (r *Registry) runWriter() {
	defer r.wg.Done()
	for {
		select {
		case <-r.stop:
			return
		case req := <-r.writes:
			// Leadership is checked again here: it may have moved while
			// the request waited (drain below makes that the only way).
			if l := r.elector.Leader(); !l.Self && !req.barrier {
				req.done <- writeResult{nil, &errNotLeader{l}}
				continue
			}
			v, err := req.fn(req.ctx)
			req.done <- writeResult{v, err}
		}
	}
}

// drain returns once the write in progress, if any, has finished. The
// elector calls it when leadership is being taken away (before the
// group rebalances), after marking the leader unknown: writes queued
// later see that and are refused, so an old and a new leader never
// write at the same time.
func (r *Registry) drain() {
	req := writeReq{ctx: context.Background(), fn: func(context.Context) (any, error) { return nil, nil }, done: make(chan writeResult, 1), barrier: true}
	select {
	case r.writes <- req:
		<-req.done
	case <-r.stop:
	}
}

// exec runs fn on the writer goroutine, if this instance leads.
func (r *Registry) exec(ctx context.Context, fn func(ctx context.Context) (any, error)) (any, error) {
	l := r.elector.Leader()
	if !l.Self {
		return nil, &errNotLeader{l}
	}
	req := writeReq{ctx: ctx, fn: fn, done: make(chan writeResult, 1)}
	select {
	case r.writes <- req:
	case <-ctx.Done():
		return nil, newError(http.StatusInternalServerError, codeTimeout, "Write to the Kafka store timed out: %v", ctx.Err())
	case <-r.stop:
		return nil, storeError("Schema registry is shutting down", errors.New("closed"))
	}
	res := <-req.done
	return res.v, res.err
}

// catchUp makes the reader reach the end of the log before a write, so
// the writer decides on everything written before it (a new leader may
// not have read its predecessor's last records yet). Like Confluent, it
// appends a NOOP record and waits to read it back.
func (r *Registry) catchUp(ctx context.Context) error {
	rec, err := encodeRecord(recordKey{KeyType: keyNoop}, nil)
	if err != nil {
		return err
	}
	off, err := r.journal.Append(ctx, rec)
	if err != nil {
		return storeError("Error while writing to the Kafka store", err)
	}
	return r.waitApplied(ctx, off)
}

// append writes records and waits until they are applied.
func (r *Registry) append(ctx context.Context, recs ...Record) error {
	off, err := r.journal.Append(ctx, recs...)
	if err != nil {
		return storeError("Error while writing to the Kafka store", err)
	}
	return r.waitApplied(ctx, off)
}

func (r *Registry) waitApplied(ctx context.Context, off int64) error {
	for {
		r.mu.RLock()
		done, ch := r.st.applied >= off, r.applied
		r.mu.RUnlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return newError(http.StatusInternalServerError, codeTimeout, "Write to the Kafka store timed out while waiting to read back offset %d: %v", off, ctx.Err())
		}
	}
}

// parseVersion parses a version path segment: 1..2^31-1 or "latest"
// (-1), as Confluent's VersionId.
func parseVersion(s string) (int, error) {
	if strings.EqualFold(strings.TrimSpace(s), "latest") {
		return -1, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	if err != nil || (n <= 0 && n != -1) {
		return 0, invalidVersion(s)
	}
	return int(n), nil
}

// SchemaInfo is a registered schema under a subject (Confluent's Schema
// entity).
type SchemaInfo struct {
	Subject    string      `json:"subject"`
	Version    int         `json:"version"`
	ID         int         `json:"id"`
	SchemaType string      `json:"schemaType,omitempty"`
	References []reference `json:"references,omitempty"`
	Schema     string      `json:"schema"`
	Deleted    bool        `json:"deleted,omitempty"`
}

func info(v *version) *SchemaInfo {
	si := &SchemaInfo{Subject: v.Subject, Version: v.Version, ID: v.ID, Schema: v.Schema, Deleted: v.Deleted}
	if v.SchemaType != "AVRO" {
		si.SchemaType = v.SchemaType
	}
	return si
}

// RegisterRequest is the body of a register or lookup call.
type RegisterRequest struct {
	Schema     string      `json:"schema"`
	SchemaType string      `json:"schemaType,omitempty"`
	References []reference `json:"references,omitempty"`
	// ID and Version are honoured in IMPORT mode only.
	ID      int `json:"id,omitempty"`
	Version int `json:"version,omitempty"`
}

// parse checks and parses a request's schema into its canonical text.
// Only Avro is served; references are not supported.
func parseRequest(req RegisterRequest) (*avsc.Schema, string, error) {
	t := normType(req.SchemaType)
	if t != "AVRO" {
		return nil, "", newError(http.StatusUnprocessableEntity, codeInvalidSchema, "Invalid schema type %s", t)
	}
	if len(req.References) > 0 {
		return nil, "", newError(http.StatusUnprocessableEntity, codeInvalidSchema,
			"Invalid schema of type AVRO, details: schema references are not supported by this registry (inline the referenced types)")
	}
	if strings.TrimSpace(req.Schema) == "" {
		return nil, "", newError(http.StatusUnprocessableEntity, codeInvalidSchema, "Empty schema")
	}
	s, err := avsc.Parse(req.Schema)
	if err != nil {
		return nil, "", newError(http.StatusUnprocessableEntity, codeInvalidSchema, "Invalid schema of type AVRO, details: %v", err)
	}
	return s, s.String(), nil
}

// levelFor is the compatibility level in force for a subject.
func (st *state) levelFor(subject, def string) string {
	if l, ok := st.configs[subject]; ok && subject != "" {
		return l
	}
	if l, ok := st.configs[""]; ok {
		return l
	}
	return def
}

func (st *state) modeFor(subject string) string {
	if m, ok := st.modes[subject]; ok && subject != "" {
		return m
	}
	if m, ok := st.modes[""]; ok {
		return m
	}
	return "READWRITE"
}

func readOnly(subject string) *Error {
	return newError(http.StatusUnprocessableEntity, codeOperationNotPermitted, "Subject %s in context . is in read-only mode", subject)
}

// Register registers a schema under subject and returns its id: the
// existing id when the same schema (by canonical text) is already
// registered anywhere, a new one (max+1) otherwise.
func (r *Registry) Register(ctx context.Context, subject string, req RegisterRequest) (int, error) {
	parsed, text, err := parseRequest(req)
	if err != nil {
		return 0, err
	}
	// Already under this subject: answer without the leader, as
	// Confluent's registerOrForward does.
	if req.ID <= 0 {
		if v := r.lookup(subject, text, false); v != nil {
			return v.ID, nil
		}
	}
	v, err := r.exec(ctx, func(ctx context.Context) (any, error) {
		if err := r.catchUp(ctx); err != nil {
			return nil, err
		}
		recs, id, err := r.planRegister(subject, req, parsed, text)
		if err != nil || recs == nil {
			return id, err
		}
		if err := r.append(ctx, recs...); err != nil {
			return nil, err
		}
		return id, nil
	})
	if err != nil {
		return 0, err
	}
	return v.(int), nil
}

// planRegister decides a registration under the read lock: the records
// to write (none if already registered) and the id.
func (r *Registry) planRegister(subject string, req RegisterRequest, parsed *avsc.Schema, text string) ([]Record, int, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	st := r.st
	mode := st.modeFor(subject)
	switch {
	case mode == "READONLY" || mode == "READONLY_OVERRIDE":
		return nil, 0, readOnly(subject)
	case req.ID > 0 && mode != "IMPORT":
		return nil, 0, newError(http.StatusUnprocessableEntity, codeOperationNotPermitted, "Subject %s in context . is not in import mode", subject)
	case req.ID <= 0 && mode != "READWRITE":
		return nil, 0, newError(http.StatusUnprocessableEntity, codeOperationNotPermitted, "Subject %s in context . is not in read-write mode", subject)
	}
	all := st.versions(subject, true)
	newVersion := 1
	var live []prior
	for _, v := range all {
		newVersion = max(newVersion, v.Version+1)
		if v.Deleted {
			continue
		}
		if req.ID <= 0 && v.Schema == text {
			return nil, v.ID, nil
		}
		live = append(live, prior{version: v.Version, text: v.Schema})
	}
	id, known := st.idFor("AVRO", text)
	if req.ID > 0 {
		// IMPORT: the id is given; it must not name another schema.
		if other := st.ids[req.ID]; other != nil && other.schema != text {
			return nil, 0, newError(http.StatusUnprocessableEntity, codeIDDoesNotMatch,
				"Overwrite new schema with id %d is not permitted.", req.ID)
		}
		id = req.ID
		if req.Version > 0 {
			newVersion = req.Version
		}
	} else {
		msgs, err := checkCompatibility(st.levelFor(subject, r.defaultLevel), parsed, live, r.parseStored)
		if err != nil {
			return nil, 0, err
		}
		if len(msgs) > 0 {
			return nil, 0, newError(http.StatusConflict, codeIncompatible,
				"Schema being registered is incompatible with an earlier schema for subject \"%s\", details: [%s]", subject, strings.Join(msgs, ", "))
		}
		if !known {
			id = st.maxID + 1
		}
	}
	// Soft-deleted versions of the same schema are tombstoned, as
	// Confluent does, so the subject keeps one version per schema.
	var recs []Record
	for _, v := range all {
		if v.Deleted && v.ID == id && v.Version < newVersion {
			rec, err := encodeRecord(schemaKey(subject, v.Version), nil)
			if err != nil {
				return nil, 0, err
			}
			recs = append(recs, rec)
		}
	}
	rec, err := encodeRecord(schemaKey(subject, newVersion), schemaValue{Subject: subject, Version: newVersion, ID: id, Schema: text})
	if err != nil {
		return nil, 0, err
	}
	return append(recs, rec), id, nil
}

// lookup finds the latest version of subject with this schema text.
func (r *Registry) lookup(subject, text string, includeDeleted bool) *version {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var found *version
	for _, v := range r.st.subjects[subject] {
		if v.Schema == text && (includeDeleted || !v.Deleted) && (found == nil || v.Version > found.Version) {
			found = v
		}
	}
	return found
}

// maxParsed bounds the cache of parsed stored schemas.
const maxParsed = 10000

// parseStored parses a stored schema text, cached: compatibility checks
// parse the same earlier versions again and again.
func (r *Registry) parseStored(text string) (*avsc.Schema, error) {
	r.parsedMu.Lock()
	s, ok := r.parsed[text]
	r.parsedMu.Unlock()
	if ok {
		return s, nil
	}
	s, err := avsc.Parse(text)
	if err != nil {
		return nil, storeError("Stored schema does not parse", err)
	}
	r.parsedMu.Lock()
	if len(r.parsed) >= maxParsed {
		clear(r.parsed)
	}
	r.parsed[text] = s
	r.parsedMu.Unlock()
	return s, nil
}

// Lookup finds a schema under a subject (POST /subjects/{s}).
func (r *Registry) Lookup(subject string, req RegisterRequest, includeDeleted bool) (*SchemaInfo, error) {
	_, text, err := parseRequest(req)
	if err != nil {
		return nil, err
	}
	if v := r.lookup(subject, text, includeDeleted); v != nil {
		return info(v), nil
	}
	r.mu.RLock()
	has := r.st.hasSubject(subject, includeDeleted)
	r.mu.RUnlock()
	if !has {
		return nil, subjectNotFound(subject)
	}
	return nil, newError(http.StatusNotFound, codeSchemaNotFound, "Schema not found")
}

// Subjects lists subjects with live versions (and soft-deleted ones
// with includeDeleted), sorted.
func (r *Registry) Subjects(includeDeleted bool, prefix string) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.st.subjectList(includeDeleted, prefix)
}

// Versions lists a subject's version numbers.
func (r *Registry) Versions(subject string, includeDeleted, deletedOnly bool) ([]int, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if !r.st.hasSubject(subject, includeDeleted || deletedOnly) {
		return nil, subjectNotFound(subject)
	}
	out := []int{}
	for _, v := range r.st.versions(subject, true) {
		switch {
		case deletedOnly && !v.Deleted:
		case !deletedOnly && !includeDeleted && v.Deleted:
		default:
			out = append(out, v.Version)
		}
	}
	return out, nil
}

// Version returns one version ("latest" or a number).
func (r *Registry) Version(subject, ver string, includeDeleted bool) (*SchemaInfo, error) {
	n, err := parseVersion(ver)
	if err != nil {
		return nil, err
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if v := r.st.get(subject, n, includeDeleted); v != nil {
		return info(v), nil
	}
	if !r.st.hasSubject(subject, includeDeleted) {
		return nil, subjectNotFound(subject)
	}
	return nil, versionNotFound(n)
}

// Schemas lists versions of the subjects starting with prefix, by
// subject then version (only the latest of each with latestOnly).
func (r *Registry) Schemas(prefix string, includeDeleted, latestOnly bool) []*SchemaInfo {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := []*SchemaInfo{}
	for _, subject := range r.st.subjectList(includeDeleted, prefix) {
		vs := r.st.versions(subject, includeDeleted)
		if latestOnly {
			vs = vs[len(vs)-1:]
		}
		for _, v := range vs {
			out = append(out, info(v))
		}
	}
	return out
}

// SchemaByID is GET /schemas/ids/{id}.
func (r *Registry) SchemaByID(id int) (schemaType, schema string, err error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	in := r.st.ids[id]
	if in == nil {
		return "", "", newError(http.StatusNotFound, codeSchemaNotFound, "Schema %d not found", id)
	}
	return in.schemaType, in.schema, nil
}

// IDUses lists the subject/versions that hold id.
func (r *Registry) IDUses(id int, includeDeleted bool) ([]subjectVersion, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.st.ids[id] == nil {
		return nil, newError(http.StatusNotFound, codeSchemaNotFound, "Schema %d not found", id)
	}
	return r.st.usesOf(id, includeDeleted), nil
}

// DeleteVersion deletes one version: soft (marked deleted, the id keeps
// resolving) or, after a soft delete, permanently (a tombstone).
func (r *Registry) DeleteVersion(ctx context.Context, subject, ver string, permanent bool) (int, error) {
	n, err := parseVersion(ver)
	if err != nil {
		return 0, err
	}
	v, err := r.exec(ctx, func(ctx context.Context) (any, error) {
		if err := r.catchUp(ctx); err != nil {
			return nil, err
		}
		r.mu.RLock()
		mode := r.st.modeFor(subject)
		target := r.st.get(subject, n, true)
		if n != -1 {
			if live := r.st.get(subject, n, false); target != nil && live == nil && !permanent {
				r.mu.RUnlock()
				return nil, newError(http.StatusNotFound, codeVersionSoftDeleted,
					"Subject '%s' Version %d was soft deleted.Set permanent=true to delete permanently", subject, n)
			}
		}
		hasSubject := r.st.hasSubject(subject, true)
		r.mu.RUnlock()
		if mode == "READONLY" || mode == "READONLY_OVERRIDE" {
			return nil, readOnly(subject)
		}
		if target == nil {
			if !hasSubject {
				return nil, subjectNotFound(subject)
			}
			return nil, versionNotFound(n)
		}
		var rec Record
		switch {
		case permanent && !target.Deleted:
			return nil, newError(http.StatusNotFound, codeVersionNotSoftDeleted,
				"Subject '%s' Version %d was not deleted first before being permanently deleted", subject, target.Version)
		case permanent:
			rec, err = encodeRecord(schemaKey(subject, target.Version), nil)
		default:
			rec, err = encodeRecord(schemaKey(subject, target.Version), schemaValue{
				Subject: subject, Version: target.Version, ID: target.ID, Schema: target.Schema, Deleted: true})
		}
		if err != nil {
			return nil, err
		}
		return target.Version, r.append(ctx, rec)
	})
	if err != nil {
		return 0, err
	}
	return v.(int), nil
}

// DeleteSubject deletes every version of a subject: soft (one
// DELETE_SUBJECT record) or, after a soft delete, permanently (a
// tombstone per version, plus the subject's config and mode).
func (r *Registry) DeleteSubject(ctx context.Context, subject string, permanent bool) ([]int, error) {
	v, err := r.exec(ctx, func(ctx context.Context) (any, error) {
		if err := r.catchUp(ctx); err != nil {
			return nil, err
		}
		r.mu.RLock()
		mode := r.st.modeFor(subject)
		all := r.st.versions(subject, true)
		live := r.st.versions(subject, false)
		_, hasConfig := r.st.configs[subject]
		_, hasMode := r.st.modes[subject]
		r.mu.RUnlock()
		if len(all) == 0 {
			return nil, subjectNotFound(subject)
		}
		if !permanent && len(live) == 0 {
			return nil, newError(http.StatusNotFound, codeSubjectSoftDeleted,
				"Subject '%s' was soft deleted.Set permanent=true to delete permanently", subject)
		}
		if mode == "READONLY" || mode == "READONLY_OVERRIDE" {
			return nil, readOnly(subject)
		}
		deleted := []int{}
		var recs []Record
		if !permanent {
			for _, v := range live {
				deleted = append(deleted, v.Version)
			}
			rec, err := encodeRecord(subjectKey(keyDeleteSubject, subject), deleteSubjectValue{Subject: subject, Version: live[len(live)-1].Version})
			if err != nil {
				return nil, err
			}
			recs = append(recs, rec)
		} else {
			if len(live) > 0 {
				return nil, newError(http.StatusNotFound, codeSubjectNotSoftDeleted,
					"Subject '%s' was not deleted first before being permanently deleted", subject)
			}
			for i := len(all) - 1; i >= 0; i-- {
				rec, err := encodeRecord(schemaKey(subject, all[i].Version), nil)
				if err != nil {
					return nil, err
				}
				recs = append(recs, rec)
			}
			for _, v := range all {
				deleted = append(deleted, v.Version)
			}
			for _, kt := range []struct {
				key string
				has bool
			}{{keyConfig, hasConfig}, {keyMode, hasMode}} {
				if kt.has {
					rec, err := encodeRecord(subjectKey(kt.key, subject), nil)
					if err != nil {
						return nil, err
					}
					recs = append(recs, rec)
				}
			}
		}
		return deleted, r.append(ctx, recs...)
	})
	if err != nil {
		return nil, err
	}
	return v.([]int), nil
}

// CheckCompatibility is POST /compatibility/subjects/{s}/versions[/{v}]:
// the messages of every incompatibility (none when compatible) against
// one version ("latest" or a number), or, with ver "", against the
// subject's versions as the level says (the latest, or all of them when
// transitive), as Confluent's CompatibilityResource.
func (r *Registry) CheckCompatibility(subject, ver string, req RegisterRequest) ([]string, error) {
	n := 0
	if ver != "" {
		var err error
		if n, err = parseVersion(ver); err != nil {
			return nil, err
		}
	}
	parsed, _, err := parseRequest(req)
	if err != nil {
		return nil, err
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	level := r.st.levelFor(subject, r.defaultLevel)
	against := r.st.versions(subject, false)
	if ver != "" {
		v := r.st.get(subject, n, false)
		switch {
		case v != nil:
			against = []*version{v}
		case n == -1:
			against = nil
		default:
			return nil, versionNotFound(n)
		}
	}
	var previous []prior
	for _, v := range against {
		previous = append(previous, prior{version: v.Version, text: v.Schema})
	}
	return checkCompatibility(level, parsed, previous, r.parseStored)
}

// Config returns the compatibility level of a subject ("" for global).
// Without defaultToGlobal, an unconfigured subject is 40408; the global
// level is always answered.
func (r *Registry) Config(subject string, defaultToGlobal bool) (string, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if subject == "" {
		return r.st.levelFor("", r.defaultLevel), nil
	}
	if l, ok := r.st.configs[subject]; ok {
		return l, nil
	}
	if defaultToGlobal {
		return r.st.levelFor("", r.defaultLevel), nil
	}
	return "", newError(http.StatusNotFound, codeSubjectCompatNotConfig, "Subject '%s' does not have subject-level compatibility configured", subject)
}

// SetConfig sets the compatibility level of a subject ("" for global).
func (r *Registry) SetConfig(ctx context.Context, subject, level string) (string, error) {
	level = strings.ToUpper(strings.TrimSpace(level))
	if !validLevel(level) {
		return "", newError(http.StatusUnprocessableEntity, codeInvalidCompatibility,
			"Invalid compatibility level. Valid values are none, backward, forward, full, backward_transitive, forward_transitive, and full_transitive")
	}
	_, err := r.exec(ctx, func(ctx context.Context) (any, error) {
		if err := r.catchUp(ctx); err != nil {
			return nil, err
		}
		r.mu.RLock()
		mode := r.st.modeFor(subject)
		r.mu.RUnlock()
		if mode == "READONLY" || mode == "READONLY_OVERRIDE" {
			return nil, readOnly(subject)
		}
		rec, err := encodeRecord(subjectKey(keyConfig, subject), configValue{Subject: subject, CompatibilityLevel: level})
		if err != nil {
			return nil, err
		}
		return nil, r.append(ctx, rec)
	})
	return level, err
}

// DeleteConfig removes a subject's level ("" resets the global one to
// the default) and returns the level it had.
func (r *Registry) DeleteConfig(ctx context.Context, subject string) (string, error) {
	v, err := r.exec(ctx, func(ctx context.Context) (any, error) {
		if err := r.catchUp(ctx); err != nil {
			return nil, err
		}
		r.mu.RLock()
		old, ok := r.st.configs[subject]
		mode := r.st.modeFor(subject)
		r.mu.RUnlock()
		if mode == "READONLY" || mode == "READONLY_OVERRIDE" {
			return nil, readOnly(subject)
		}
		if !ok {
			if subject != "" {
				return nil, subjectNotFound(subject)
			}
			return r.defaultLevel, nil
		}
		rec, err := encodeRecord(subjectKey(keyConfig, subject), nil)
		if err != nil {
			return nil, err
		}
		return old, r.append(ctx, rec)
	})
	if err != nil {
		return "", err
	}
	return v.(string), nil
}

var validModes = map[string]bool{"READWRITE": true, "READONLY": true, "READONLY_OVERRIDE": true, "IMPORT": true}

// Mode returns the mode of a subject ("" for global).
func (r *Registry) Mode(subject string, defaultToGlobal bool) (string, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if subject == "" {
		return r.st.modeFor(""), nil
	}
	if m, ok := r.st.modes[subject]; ok {
		return m, nil
	}
	if defaultToGlobal {
		return r.st.modeFor(""), nil
	}
	return "", newError(http.StatusNotFound, codeSubjectModeNotConfig, "Subject '%s' does not have subject-level mode configured", subject)
}

// SetMode sets the mode of a subject ("" for global). IMPORT needs an
// empty registry (or subject) unless force.
func (r *Registry) SetMode(ctx context.Context, subject, mode string, force bool) (string, error) {
	mode = strings.ToUpper(strings.TrimSpace(mode))
	if !validModes[mode] {
		return "", newError(http.StatusUnprocessableEntity, codeInvalidMode, "Invalid mode. Valid values are READWRITE, READONLY, IMPORT and FORWARD.")
	}
	_, err := r.exec(ctx, func(ctx context.Context) (any, error) {
		if err := r.catchUp(ctx); err != nil {
			return nil, err
		}
		if mode == "IMPORT" && !force {
			r.mu.RLock()
			var nonEmpty bool
			if subject == "" {
				nonEmpty = len(r.st.subjects) > 0
			} else {
				nonEmpty = r.st.hasSubject(subject, true)
			}
			r.mu.RUnlock()
			if nonEmpty {
				return nil, newError(http.StatusUnprocessableEntity, codeOperationNotPermitted, "Cannot import since found existing subjects")
			}
		}
		rec, err := encodeRecord(subjectKey(keyMode, subject), modeValue{Subject: subject, Mode: mode})
		if err != nil {
			return nil, err
		}
		return nil, r.append(ctx, rec)
	})
	return mode, err
}

// DeleteMode removes a subject's mode and returns the one it had.
func (r *Registry) DeleteMode(ctx context.Context, subject string) (string, error) {
	v, err := r.exec(ctx, func(ctx context.Context) (any, error) {
		if err := r.catchUp(ctx); err != nil {
			return nil, err
		}
		r.mu.RLock()
		old, ok := r.st.modes[subject]
		r.mu.RUnlock()
		if !ok {
			if subject != "" {
				return nil, subjectNotFound(subject)
			}
			return "READWRITE", nil
		}
		rec, err := encodeRecord(subjectKey(keyMode, subject), nil)
		if err != nil {
			return nil, err
		}
		return old, r.append(ctx, rec)
	})
	if err != nil {
		return "", err
	}
	return v.(string), nil
}

// MaxID is the highest id assigned so far.
func (r *Registry) MaxID() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.st.maxID
}
