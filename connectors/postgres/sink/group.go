package sink

import (
	"fmt"
	"strings"

	"github.com/fjordhq/fjord/connect"
)

// run is a stretch of one put's records for one table that one statement
// sequence writes: the same key and value schemas and, outside upsert
// mode, the same operation (Confluent's BufferedRecords flushes when the
// schema changes or a write follows deletes).
type run struct {
	table       tableID
	keySchema   *connect.Schema
	valueSchema *connect.Schema // nil while the run holds deletes only
	recs        []*connect.Record
	deletes     int
}

func (r *run) writes() int { return len(r.recs) - r.deletes }

// isDelete: a null value is a delete when deletes are enabled.
func (s *settings) isDelete(r *connect.Record) bool { return r.Value == nil && s.deleteEnabled }

// checkRecord is Confluent's RecordValidator: what a record must carry
// for the modes configured.
func (s *settings) checkRecord(r *connect.Record) error {
	needKey := s.pkMode == PKModeRecordKey || s.deleteEnabled
	if needKey && (r.Key == nil || r.KeySchema == nil ||
		(r.KeySchema.Type != connect.StructType && !r.KeySchema.Type.IsPrimitive())) {
		return fmt.Errorf("Sink connector '%s' is configured with 'delete.enabled=%t' and 'pk.mode=%s' and therefore requires "+
			"records with a non-null key and non-null Struct or primitive key schema, but found record at "+
			"(topic='%s',partition=%d,offset=%d,timestamp=%d) with a %s key and %s key schema.",
			s.name, s.deleteEnabled, s.pkMode, r.Topic, r.Partition, r.Offset, r.Timestamp, goTypeOrNull(r.Key), schemaTypeOrNull(r.KeySchema))
	}
	if s.isDelete(r) {
		return nil
	}
	if r.Value == nil || r.ValueSchema == nil ||
		(r.ValueSchema.Type != connect.StructType && r.ValueSchema.Type != connect.String) {
		return fmt.Errorf("Sink connector '%s' is configured with 'delete.enabled=%t' and 'pk.mode=%s' and therefore requires "+
			"records with a non-null Struct or String value and non-null Struct or String schema, but found record at "+
			"(topic='%s',partition=%d,offset=%d,timestamp=%d) with a %s value and %s value schema.",
			s.name, s.deleteEnabled, s.pkMode, r.Topic, r.Partition, r.Offset, r.Timestamp, goTypeOrNull(r.Value), schemaTypeOrNull(r.ValueSchema))
	}
	if r.ValueSchema.Type == connect.String {
		var conflicting []string
		if len(s.whitelist) > 0 {
			conflicting = append(conflicting, FieldsWhitelistConfig)
		}
		if len(s.timestampFields) > 0 {
			conflicting = append(conflicting, TimestampFieldsListConfig)
		}
		if len(conflicting) > 0 {
			return fmt.Errorf("Sink connector '%s' is configured with field-level options that are not applicable to String values: %s. "+
				"Remove these options, or have the upstream producer emit Struct values instead.", s.name, strings.Join(conflicting, ", "))
		}
	}
	return nil
}

func goTypeOrNull(v any) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

func schemaTypeOrNull(s *connect.Schema) string {
	if s == nil {
		return "null"
	}
	return s.Type.String()
}

func sameSchema(a, b *connect.Schema) bool { return a == b || a.Equal(b) }

// grouper splits a put's records into runs, per table in record order.
type grouper struct {
	s    *settings
	runs []*run
	last map[tableID]*run
}

// add places a record (already checked) into its table's current run or
// a new one.
func (g *grouper) add(id tableID, r *connect.Record) {
	del := g.s.isDelete(r)
	cur := g.last[id]
	if cur == nil || !g.fits(cur, r, del) {
		cur = &run{table: id, keySchema: r.KeySchema}
		g.runs = append(g.runs, cur)
		g.last[id] = cur
	}
	if del {
		cur.deletes++
	} else if cur.valueSchema == nil {
		cur.valueSchema = r.ValueSchema
	}
	cur.recs = append(cur.recs, r)
}

func (g *grouper) fits(cur *run, r *connect.Record, del bool) bool {
	// Key columns come from the key schema in record_key mode (the only
	// mode deletes work in); in the other modes the key schema does not
	// shape the columns.
	if g.s.pkMode == PKModeRecordKey && !sameSchema(cur.keySchema, r.KeySchema) {
		return false
	}
	if g.s.insertMode != InsertModeUpsert {
		// In order: a delete between two writes of a key must happen
		// between them.
		if del != (cur.deletes > 0) {
			return false
		}
	}
	if del {
		return true
	}
	return cur.valueSchema == nil || sameSchema(cur.valueSchema, r.ValueSchema)
}
