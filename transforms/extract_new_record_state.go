package transforms

import (
	"log/slog"
	"strings"
	"sync"

	"github.com/fjordhq/fjord/connect"
)

// ExtractNewRecordState is Debezium's io.debezium.transforms.
// ExtractNewRecordState ("event flattening"): a change event envelope
// (a value schema named "*.Envelope" with before/after/source/op/ts_ms)
// becomes its "after" row. Records that are not envelopes pass through.
//
// Deletes and tombstones follow delete.tombstone.handling.mode (Debezium
// 3.x; default tombstone):
//
//	drop                    delete and tombstone dropped
//	tombstone               delete becomes a null value (with the row schema), tombstone dropped
//	rewrite                 delete becomes its "before" row with __deleted=true, tombstone dropped
//	                        (inserts and updates get __deleted=false)
//	rewrite-with-tombstone  rewrite, tombstone kept
//	delete-to-tombstone     delete becomes a tombstone (no schema), tombstone dropped
//
// The keys Debezium 2.x used, drop.tombstones (default true) and
// delete.handling.mode (drop, rewrite, none; default drop), are still
// honoured when delete.tombstone.handling.mode is not set, as Debezium 2
// did. Truncate events (no before, no after) are dropped.
//
// add.fields copies envelope fields into the row (op, ts_ms, source
// fields such as table or lsn, "source.ts_ms", "transaction.id"; "f:name"
// renames), prefixed by add.fields.prefix ("__"); add.headers does the
// same into headers. route.by.field sets the topic from a row column.
// drop.fields.header.name names a header listing fields to remove.
type ExtractNewRecordState struct {
	mode                     string
	keepTombstones           bool // legacy drop.tombstones=false
	routeByField             string
	fields, headers          []fieldReference
	dropFieldsHeader         string
	dropFieldsFromKey        bool
	dropFieldsKeepCompatible bool
	replaceNull              bool

	after, before extractor
	mu            sync.Mutex
	addCache      map[addCacheKey]*connect.Schema
	deletedCache  schemaCache
}

const debeziumVersion = "3.6.1.Final"

const (
	modeDrop                 = "drop"
	modeTombstone            = "tombstone"
	modeRewrite              = "rewrite"
	modeRewriteWithTombstone = "rewrite-with-tombstone"
	modeDeleteToTombstone    = "delete-to-tombstone"
)

type addCacheKey struct {
	schema *connect.Schema
	op     string
}

func extractNewRecordStateConfigDef() *connect.ConfigDef {
	modes := []string{modeDrop, modeTombstone, modeRewrite, modeRewriteWithTombstone, modeDeleteToTombstone}
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "delete.tombstone.handling.mode", Type: connect.TypeString, Default: modeTombstone, Importance: connect.Medium, Width: connect.WidthMedium,
			DisplayName: "Handle delete and tombstone records",
			Validator: func(name string, v any) error {
				s, _ := v.(string)
				for _, m := range modes {
					if strings.EqualFold(strings.TrimSpace(s), m) {
						return nil
					}
				}
				return &connect.VerbatimError{Msg: "Invalid value " + s + " for configuration " + name + ": Value must be one of " + strings.Join(modes, ", ")}
			},
			Doc: "How to handle delete records. Options are: drop - Remove the delete event and tombstone from the stream.tombstone (default) - For each delete event, leave only a tombstone in the stream.rewrite - Remove tombstone from the record, and add a `__deleted` field with the value `true`.rewrite-with-tombstone - Retain tombstone in record and add a `__deleted` field with the value `true`.delete-to-tombstone - Convert delete events to tombstone events and drop tombstone events."}).
		Define(connect.ConfigKey{Name: "route.by.field", Type: connect.TypeString, Default: "", Importance: connect.Low, Width: connect.WidthLong, DisplayName: "Route by field name",
			Doc: "The column which determines how the events will be routed, the value will replace the topic name."}).
		Define(connect.ConfigKey{Name: "add.fields.prefix", Type: connect.TypeString, Default: "__", Importance: connect.Low, Width: connect.WidthShort, DisplayName: "Field prefix to be added to each field.",
			Doc: "Adds this prefix to each field listed."}).
		Define(connect.ConfigKey{Name: "add.fields", Type: connect.TypeList, Default: []string{}, Importance: connect.Low, Width: connect.WidthLong, DisplayName: "Adds the specified field(s) to the message if they exist.",
			Doc: "Adds each field listed, prefixed with __ (or __<struct>_ if the struct is specified). Example: 'version,connector,source.ts_ms' would add __version, __connector and __source_ts_ms fields. Optionally one can also map new field name like version:VERSION,connector:CONNECTOR,source.ts_ms:EVENT_TIMESTAMP.Please note that the new field name is case-sensitive."}).
		Define(connect.ConfigKey{Name: "add.headers.prefix", Type: connect.TypeString, Default: "__", Importance: connect.Low, Width: connect.WidthShort, DisplayName: "Header prefix to be added to each header.",
			Doc: "Adds this prefix listed to each header."}).
		Define(connect.ConfigKey{Name: "add.headers", Type: connect.TypeList, Default: []string{}, Importance: connect.Low, Width: connect.WidthLong, DisplayName: "Adds the specified fields to the header if they exist.",
			Doc: "Adds each field listed to the header,  __ (or __<struct>_ if the struct is specified). Example: 'version,connector,source.ts_ms' would add __version, __connector and __source_ts_ms fields. Optionally one can also map new field name like version:VERSION,connector:CONNECTOR,source.ts_ms:EVENT_TIMESTAMP.Please note that the new field name is case-sensitive."}).
		Define(connect.ConfigKey{Name: "drop.fields.header.name", Type: connect.TypeString, Default: nil, Importance: connect.Low, Width: connect.WidthShort,
			DisplayName: "Specifies a header that contains a list of field names to be removed",
			Doc:         "Specifies the name of a header that contains a list of fields to be removed from the event value."}).
		Define(connect.ConfigKey{Name: "drop.fields.from.key", Type: connect.TypeBoolean, Default: false, Importance: connect.Low, Width: connect.WidthShort,
			DisplayName: "Specifies whether the fields to be dropped should also be omitted from the key",
			Doc:         "Specifies whether to apply the drop fields behavior to the event key as well as the value. Default behavior is to only remove fields from the event value, not the key."}).
		Define(connect.ConfigKey{Name: "drop.fields.keep.schema.compatible", Type: connect.TypeBoolean, Default: true, Importance: connect.Low, Width: connect.WidthShort,
			DisplayName: "Specifies if fields are dropped, will the event's schemas be compatible",
			Doc:         "Controls the output event's schema compatibility when using the drop fields feature. `true`: dropped fields are removed if the schema indicates its optional leaving the schemas unchanged, `false`: dropped fields are removed from the key/value schemas, regardless of optionality."}).
		Define(connect.ConfigKey{Name: "replace.null.with.default", Type: connect.TypeBoolean, Default: true, Importance: connect.Low, Width: connect.WidthShort,
			DisplayName: "replace null field value with default",
			Doc:         "When this option is enabled, null field values are replaced by source-defined defaults when rewriting the record."}).
		Define(connect.ConfigKey{Name: "drop.tombstones", Type: connect.TypeBoolean, Default: true, Importance: connect.Low,
			Doc: "Deprecated (Debezium 2.x; removed in 3.x): drop tombstones. Used only when delete.tombstone.handling.mode is not set."}).
		Define(connect.ConfigKey{Name: "delete.handling.mode", Type: connect.TypeString, Default: "drop", Validator: connect.OneOfFold("drop", "rewrite", "none"), Importance: connect.Low,
			Doc: "Deprecated (Debezium 2.x; removed in 3.x): drop, rewrite or none for delete events. Used only when delete.tombstone.handling.mode is not set."})
}

func (t *ExtractNewRecordState) Config() *connect.ConfigDef { return extractNewRecordStateConfigDef() }
func (t *ExtractNewRecordState) Close() error               { return nil }
func (t *ExtractNewRecordState) Version() string            { return debeziumVersion }

func (t *ExtractNewRecordState) Configure(props map[string]string) error {
	cfg, err := parseConfig(extractNewRecordStateConfigDef(), props)
	if err != nil {
		return err
	}
	t.mode = strings.ToLower(strings.TrimSpace(cfg.String("delete.tombstone.handling.mode")))
	_, modeSet := props["delete.tombstone.handling.mode"]
	_, legacyTomb := props["drop.tombstones"]
	_, legacyDel := props["delete.handling.mode"]
	if !modeSet && (legacyTomb || legacyDel) {
		slog.Warn("ExtractNewRecordState: drop.tombstones and delete.handling.mode are deprecated (removed in Debezium 3); use delete.tombstone.handling.mode")
		t.keepTombstones = !cfg.Bool("drop.tombstones")
		switch strings.ToLower(cfg.String("delete.handling.mode")) {
		case "drop":
			t.mode = modeDrop
		case "rewrite":
			t.mode = modeRewrite
		default: // none: a delete becomes a null value, as tombstone mode does
			t.mode = modeTombstone
		}
	}
	if t.mode == modeRewriteWithTombstone {
		t.keepTombstones = true
	}
	t.routeByField = cfg.String("route.by.field")
	if t.fields, err = parseFieldReferences(cfg.String("add.fields.prefix"), cfg.List("add.fields")); err != nil {
		return err
	}
	if t.headers, err = parseFieldReferences(cfg.String("add.headers.prefix"), cfg.List("add.headers")); err != nil {
		return err
	}
	t.dropFieldsHeader = cfg.String("drop.fields.header.name")
	t.dropFieldsFromKey = cfg.Bool("drop.fields.from.key")
	t.dropFieldsKeepCompatible = cfg.Bool("drop.fields.keep.schema.compatible")
	t.replaceNull = cfg.Bool("replace.null.with.default")
	t.after = extractor{field: "after"}
	t.before = extractor{field: "before"}
	t.addCache = map[addCacheKey]*connect.Schema{}
	return nil
}

// extractor is ExtractField$Value on a top-level envelope field, as
// Debezium delegates to it.
type extractor struct{ field string }

func (e extractor) apply(r *connect.Record) (*connect.Record, error) {
	st, err := requireStructOrNull(r.Value, "field extraction")
	if err != nil {
		return nil, err
	}
	f := r.ValueSchema.Field(e.field)
	if f == nil {
		return nil, &UnknownFieldError{Field: e.field}
	}
	var v any
	if st != nil {
		v = st.GetField(st.Schema().Field(e.field))
	}
	return valueSide.with(r, f.Schema, v), nil
}

func isEnvelope(r *connect.Record) bool {
	return r.ValueSchema != nil && strings.HasSuffix(r.ValueSchema.Name, ".Envelope")
}

func (t *ExtractNewRecordState) Apply(r *connect.Record) (*connect.Record, error) {
	if r == nil {
		return nil, nil
	}
	tombstone := r.Value == nil
	envelope := isEnvelope(r)
	if (envelope || tombstone) && len(t.headers) > 0 {
		r = r.Clone()
		orig, _ := r.Value.(*connect.Struct)
		for _, h := range t.headers {
			if orig == nil {
				if h.field == "op" {
					r.Headers.Add(h.newField, connect.StringSchema, "d")
				}
				continue
			}
			if s := h.schema(orig.Schema()); s != nil {
				r.Headers.Add(h.newField, s, h.value(orig))
			}
		}
	}
	if tombstone {
		if t.keepTombstones {
			return r, nil
		}
		return nil, nil
	}
	if !envelope {
		return r, nil
	}
	out, err := t.after.apply(r)
	if err != nil {
		return nil, err
	}
	if out.Value == nil {
		before, err := t.before.apply(r)
		if err != nil {
			return nil, err
		}
		if before.Value == nil {
			return nil, nil // truncate
		}
		if out, err = t.handleDelete(r, before); err != nil || out == nil {
			return out, err
		}
		if t.routeByField != "" {
			row, _ := before.Value.(*connect.Struct)
			if out, err = t.route(row, out); err != nil {
				return nil, err
			}
		}
		if t.dropFieldsHeader != "" {
			if out, err = t.dropFields(out); err != nil {
				return nil, err
			}
		}
		if out.Value != nil {
			return t.addFields(r, out)
		}
		return out, nil
	}
	if t.mode == modeRewrite || t.mode == modeRewriteWithTombstone {
		if _, ok := out.Value.(*connect.Struct); ok {
			if out, err = t.markDeleted(out, "false"); err != nil {
				return nil, err
			}
		}
	}
	if t.routeByField != "" {
		row, err := requireStruct(out.Value, "Read record to set topic routing for CREATE / UPDATE")
		if err != nil {
			return nil, err
		}
		if out, err = t.route(row, out); err != nil {
			return nil, err
		}
	}
	if out, err = t.addFields(r, out); err != nil {
		return nil, err
	}
	if t.dropFieldsHeader != "" {
		return t.dropFields(out)
	}
	return out, nil
}

func (t *ExtractNewRecordState) handleDelete(r, before *connect.Record) (*connect.Record, error) {
	switch t.mode {
	case modeDrop:
		return nil, nil
	case modeDeleteToTombstone:
		c := r.Clone()
		c.ValueSchema, c.Value = nil, nil
		return c, nil
	case modeRewrite, modeRewriteWithTombstone:
		if _, ok := before.Value.(*connect.Struct); ok {
			return t.markDeleted(before, "true")
		}
		return before, nil
	}
	// tombstone (and legacy none): the "after" extraction, a null value
	// with the row schema.
	return t.after.apply(r)
}

// markDeleted is Debezium's InsertField$Value delegate adding the
// optional string field __deleted.
func (t *ExtractNewRecordState) markDeleted(r *connect.Record, deleted string) (*connect.Record, error) {
	ins := &InsertField{side: valueSide, static: &insertionSpec{"__deleted", true}, staticValue: deleted, replaceNull: t.replaceNull}
	st := r.Value.(*connect.Struct)
	s, err := t.deletedCache.getOrBuild(st.Schema(), func() (*connect.Schema, error) { return ins.buildSchema(st.Schema()) })
	if err != nil {
		return nil, err
	}
	out := connect.NewStructValue(s)
	for i := range st.Schema().Fields {
		f := &st.Schema().Fields[i]
		if err := kput(out, f.Name, fieldValue(st, f, t.replaceNull)); err != nil {
			return nil, err
		}
	}
	if err := kput(out, "__deleted", deleted); err != nil {
		return nil, err
	}
	return valueSide.with(r, s, out), nil
}

func (t *ExtractNewRecordState) route(row *connect.Struct, r *connect.Record) (*connect.Record, error) {
	if row == nil {
		return r, nil
	}
	v, err := row.Get(t.routeByField)
	if err != nil {
		return nil, err
	}
	topic, ok := v.(string)
	if v != nil && !ok {
		return nil, dataErr("Field '%s' is not of type STRING", t.routeByField)
	}
	if strings.TrimSpace(topic) == "" {
		return r, nil
	}
	c := r.Clone()
	c.Topic = topic
	return c, nil
}

func (t *ExtractNewRecordState) addFields(orig, r *connect.Record) (*connect.Record, error) {
	// Debezium rebuilds the row even with nothing to add, so the row
	// schema loses its optionality (copySchemaBasics does not copy it).
	row, err := requireStruct(r.Value, "source field insertion")
	if err != nil {
		return nil, err
	}
	env := orig.Value.(*connect.Struct)
	op, _ := env.GetWithoutDefault("op")
	opStr, _ := op.(string)
	key := addCacheKey{row.Schema(), opStr}
	t.mu.Lock()
	s := t.addCache[key]
	t.mu.Unlock()
	if s == nil {
		b := copyBasics(row.Schema(), connect.NewStruct())
		for _, f := range row.Schema().Fields {
			b.Field(f.Name, f.Schema)
		}
		for _, fr := range t.fields {
			if fs := fr.schema(env.Schema()); fs != nil {
				b.Field(fr.newField, fs)
			}
		}
		if s, err = b.BuildE(); err != nil {
			return nil, err
		}
		t.mu.Lock()
		if len(t.addCache) >= 64 {
			clear(t.addCache)
		}
		t.addCache[key] = s
		t.mu.Unlock()
	}
	out := connect.NewStructValue(s)
	for _, f := range row.Schema().Fields {
		v, _ := row.GetWithoutDefault(f.Name)
		if err := kput(out, f.Name, v); err != nil {
			return nil, err
		}
	}
	for _, fr := range t.fields {
		if fr.schema(env.Schema()) != nil {
			if err := kput(out, fr.newField, fr.value(env)); err != nil {
				return nil, err
			}
		}
	}
	return valueSide.with(r, s, out), nil
}

func (t *ExtractNewRecordState) dropFields(r *connect.Record) (*connect.Record, error) {
	h, ok := r.Headers.Last(t.dropFieldsHeader)
	for _, x := range r.Headers {
		if x.Key == t.dropFieldsHeader {
			h, ok = x, true // Debezium takes the first header with the name
			break
		}
	}
	if !ok || h.Value == nil {
		return r, nil
	}
	items, _ := h.Value.([]any)
	var names []string
	for _, it := range items {
		if s, ok := it.(string); ok {
			names = append(names, s)
		}
	}
	if len(names) == 0 {
		return r, nil
	}
	drop := func(s side, schema *connect.Schema, rec *connect.Record) (*connect.Record, error) {
		fields := names
		if t.dropFieldsKeepCompatible {
			fields = nil
			if schema != nil {
				for _, f := range schema.Fields {
					if f.Schema.Optional && containsString(names, f.Name) {
						fields = append(fields, f.Name)
					}
				}
			}
		}
		if len(fields) == 0 {
			return rec, nil
		}
		rf := &ReplaceField{side: s, exclude: fields, renames: map[string]string{}, reverse: map[string]string{}, replaceNull: true}
		return rf.Apply(rec)
	}
	var err error
	if t.dropFieldsFromKey && r.Key != nil {
		if r, err = drop(keySide, r.KeySchema, r); err != nil {
			return nil, err
		}
	}
	return drop(valueSide, r.ValueSchema, r)
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// fieldReference is Debezium's FieldReference: an envelope field to
// copy ("op", "ts_ms", "table" meaning source.table, "source.lsn",
// "transaction.id", with ":name" renaming) and the name it gets.
type fieldReference struct {
	parent   string // "source", "transaction", ... or "" for top-level
	field    string
	newField string
}

func parseFieldReferences(prefix string, items []string) ([]fieldReference, error) {
	var out []fieldReference
	for _, item := range items {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		parts := javaSplit(item, ":")
		if len(parts) > 2 || len(parts) == 0 {
			return nil, configErr("add.fields", "Unexpected field name: "+item)
		}
		splits := javaSplit(parts[0], ".")
		if len(splits) == 0 {
			splits = []string{""}
		}
		fr := fieldReference{}
		if len(splits) == 1 {
			fr.field = splits[0]
			fr.parent = parentStructOf(fr.field)
		} else {
			fr.parent, fr.field = splits[0], splits[1]
		}
		switch {
		case len(parts) == 2:
			fr.newField = prefix + parts[1]
		case len(splits) == 1:
			fr.newField = prefix + fr.field
		default:
			fr.newField = prefix + fr.parent + "_" + fr.field
		}
		out = append(out, fr)
	}
	return out, nil
}

func parentStructOf(field string) string {
	switch field {
	case "id", "data_collection_order", "total_order":
		return "transaction"
	case "op", "ts_ms", "ts_us", "ts_ns":
		return ""
	case "updateDescription":
		return "updateDescription"
	}
	return "source"
}

// schema returns the optional copy of the referenced field's schema, or
// nil when the envelope has no such field.
func (f fieldReference) schema(env *connect.Schema) *connect.Schema {
	parent := env
	if f.parent != "" {
		pf := env.Field(f.parent)
		if pf == nil {
			return nil
		}
		parent = pf.Schema
	}
	field := parent.Field(f.field)
	if field == nil {
		if field = env.Field(f.field); field == nil {
			return nil
		}
	}
	s, err := copyBasicsOf(field.Schema).Optional().BuildE()
	if err != nil {
		return nil
	}
	return s
}

func (f fieldReference) value(env *connect.Struct) any {
	parent := env
	if f.parent != "" {
		v, _ := env.GetWithoutDefault(f.parent)
		p, _ := v.(*connect.Struct)
		if p == nil {
			return nil
		}
		parent = p
	}
	if parent.Schema().Field(f.field) != nil {
		v, _ := parent.GetWithoutDefault(f.field)
		return v
	}
	v, _ := env.GetWithoutDefault(f.field)
	return v
}
