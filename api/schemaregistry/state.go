package schemaregistry

import (
	"crypto/md5"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// state is the registry's view of the _schemas log: what every record
// applied so far says. It is rebuilt from the log at start and kept up
// to date by applying each record in log order, on every instance, so
// all instances answer alike. It does no I/O; the Registry guards it.
type state struct {
	subjects map[string]map[int]*version
	ids      map[int]*idInfo
	// byHash maps the MD5 of a stored schema text to its id, to give
	// the same schema the same id under every subject.
	byHash  map[[16]byte]int
	maxID   int
	configs map[string]string // "" is the global level
	modes   map[string]string // "" is the global mode
	applied int64             // offset of the last applied record, -1 before any
}

type version struct {
	Subject    string
	Version    int
	ID         int
	SchemaType string
	Schema     string
	Deleted    bool
}

type idInfo struct {
	schema     string
	schemaType string
	// keys are the subject/versions holding this id; the id is gone when
	// the last one is permanently deleted.
	keys map[subjectVersion]bool
}

type subjectVersion struct {
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

func newState() *state {
	return &state{
		subjects: map[string]map[int]*version{},
		ids:      map[int]*idInfo{},
		byHash:   map[[16]byte]int{},
		configs:  map[string]string{},
		modes:    map[string]string{},
		applied:  -1,
	}
}

// apply applies one record. Records it cannot read are reported and
// skipped: one bad record must not stop the registry from serving the
// others (Confluent logs and skips too).
func (st *state) apply(r Record) error {
	if r.Offset > st.applied {
		st.applied = r.Offset
	}
	var k recordKey
	if err := json.Unmarshal(r.Key, &k); err != nil {
		return fmt.Errorf("record at offset %d: bad key %q: %w", r.Offset, r.Key, err)
	}
	subject := k.subject()
	switch k.KeyType {
	case keySchema:
		if r.Value == nil {
			st.removeVersion(subject, k.Version)
			return nil
		}
		var v schemaValue
		if err := json.Unmarshal(r.Value, &v); err != nil {
			return fmt.Errorf("record at offset %d: bad SCHEMA value: %w", r.Offset, err)
		}
		st.putVersion(&version{Subject: subject, Version: k.Version, ID: v.ID, SchemaType: normType(v.SchemaType), Schema: v.Schema, Deleted: v.Deleted})
	case keyConfig:
		if r.Value == nil {
			delete(st.configs, subject)
			return nil
		}
		var v configValue
		if err := json.Unmarshal(r.Value, &v); err != nil {
			return fmt.Errorf("record at offset %d: bad CONFIG value: %w", r.Offset, err)
		}
		if v.CompatibilityLevel == "" {
			delete(st.configs, subject)
		} else {
			st.configs[subject] = strings.ToUpper(v.CompatibilityLevel)
		}
	case keyMode:
		if r.Value == nil {
			delete(st.modes, subject)
			return nil
		}
		var v modeValue
		if err := json.Unmarshal(r.Value, &v); err != nil {
			return fmt.Errorf("record at offset %d: bad MODE value: %w", r.Offset, err)
		}
		st.modes[subject] = strings.ToUpper(v.Mode)
	case keyDeleteSubject:
		if r.Value == nil {
			return nil
		}
		var v deleteSubjectValue
		if err := json.Unmarshal(r.Value, &v); err != nil {
			return fmt.Errorf("record at offset %d: bad DELETE_SUBJECT value: %w", r.Offset, err)
		}
		for n, ver := range st.subjects[subject] {
			if n <= v.Version {
				ver.Deleted = true
			}
		}
	case keyClearSubject:
		if r.Value == nil {
			return nil
		}
		for n := range st.subjects[subject] {
			st.removeVersion(subject, n)
		}
	case keyNoop:
	default:
		return fmt.Errorf("record at offset %d: unknown keytype %q (skipped)", r.Offset, k.KeyType)
	}
	return nil
}

func normType(t string) string {
	if t == "" {
		return "AVRO"
	}
	return strings.ToUpper(t)
}

func (st *state) putVersion(v *version) {
	vs := st.subjects[v.Subject]
	if vs == nil {
		vs = map[int]*version{}
		st.subjects[v.Subject] = vs
	}
	if old := vs[v.Version]; old != nil && old.ID != v.ID {
		st.dropKey(old.ID, subjectVersion{v.Subject, v.Version})
	}
	vs[v.Version] = v
	info := st.ids[v.ID]
	if info == nil {
		info = &idInfo{schema: v.Schema, schemaType: v.SchemaType, keys: map[subjectVersion]bool{}}
		st.ids[v.ID] = info
		h := hashSchema(v.SchemaType, v.Schema)
		if _, ok := st.byHash[h]; !ok {
			st.byHash[h] = v.ID
		}
	}
	info.keys[subjectVersion{v.Subject, v.Version}] = true
	if v.ID > st.maxID {
		st.maxID = v.ID
	}
}

func (st *state) removeVersion(subject string, n int) {
	vs := st.subjects[subject]
	old := vs[n]
	if old == nil {
		return
	}
	delete(vs, n)
	if len(vs) == 0 {
		delete(st.subjects, subject)
	}
	st.dropKey(old.ID, subjectVersion{subject, n})
}

func (st *state) dropKey(id int, k subjectVersion) {
	info := st.ids[id]
	if info == nil {
		return
	}
	delete(info.keys, k)
	if len(info.keys) == 0 {
		delete(st.ids, id)
		h := hashSchema(info.schemaType, info.schema)
		if st.byHash[h] == id {
			delete(st.byHash, h)
		}
	}
}

func hashSchema(schemaType, schema string) [16]byte {
	return md5.Sum([]byte(schemaType + "\x00" + schema))
}

// versions returns a subject's versions in ascending order.
func (st *state) versions(subject string, includeDeleted bool) []*version {
	var out []*version
	for _, v := range st.subjects[subject] {
		if includeDeleted || !v.Deleted {
			out = append(out, v)
		}
	}
	slices.SortFunc(out, func(a, b *version) int { return a.Version - b.Version })
	return out
}

func (st *state) hasSubject(subject string, includeDeleted bool) bool {
	return len(st.versions(subject, includeDeleted)) > 0
}

// get returns a version (-1: the latest), nil if absent.
func (st *state) get(subject string, n int, includeDeleted bool) *version {
	vs := st.versions(subject, includeDeleted)
	if len(vs) == 0 {
		return nil
	}
	if n == -1 {
		return vs[len(vs)-1]
	}
	for _, v := range vs {
		if v.Version == n {
			return v
		}
	}
	return nil
}

func (st *state) subjectList(includeDeleted bool, prefix string) []string {
	out := []string{}
	for s := range st.subjects {
		if strings.HasPrefix(s, prefix) && st.hasSubject(s, includeDeleted) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// idFor returns the id already given to this schema text, if any.
func (st *state) idFor(schemaType, schema string) (int, bool) {
	id, ok := st.byHash[hashSchema(schemaType, schema)]
	return id, ok
}

// usesOf lists the subject/versions holding id, sorted.
func (st *state) usesOf(id int, includeDeleted bool) []subjectVersion {
	info := st.ids[id]
	if info == nil {
		return nil
	}
	var out []subjectVersion
	for _, k := range slices.Collect(maps.Keys(info.keys)) {
		v := st.subjects[k.Subject][k.Version]
		if v != nil && (includeDeleted || !v.Deleted) {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b subjectVersion) int {
		if c := strings.Compare(a.Subject, b.Subject); c != 0 {
			return c
		}
		return a.Version - b.Version
	})
	return out
}
