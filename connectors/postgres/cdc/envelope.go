package cdc

import (
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"

	"github.com/fjordhq/fjord/connect"
)

// Debezium's change event envelope and source block for PostgreSQL.

// DebeziumVersion is what source.version reports by default. Fjord says
// it is Debezium 3.6.1, whose events it reproduces: consumers that check
// the field (to pick a parser, or tests that compare events) see the
// version whose format they get. SourceInfo.Version overrides it.
const DebeziumVersion = "3.6.1.Final"

// debeziumConnector is source.connector of Debezium's PostgreSQL
// connector.
const debeziumConnector = "postgresql"

// SnapshotValues are the values source.snapshot can take (Debezium's
// SnapshotRecord, lower case, in its order).
const snapshotAllowed = "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"

// SourceInfo is the source block's content.
type SourceInfo struct {
	// Version is source.version; "" gives DebeziumVersion (3.6.1.Final):
	// Fjord reports the Debezium release whose events it reproduces, so
	// consumers that check the field (to pick a parser, or tests that
	// compare events) see the version whose format they get.
	Version string
	// Name is topic.prefix.
	Name string
	// TsUs is the commit time (µs since the epoch) of the transaction;
	// in a snapshot, when the row was read. ts_ms and ts_ns derive from
	// it as Debezium derives them from one Instant.
	TsUs int64
	// Snapshot is "true", "first", "last", "first_in_data_collection",
	// "last_in_data_collection", "incremental", or "false"/"" when
	// streaming (left unset, as Debezium does: its default says false).
	Snapshot string
	DB       string
	// Sequence is `["<lastCommitLsn>","<lsn>"]` (see SourceSequence).
	Sequence      string
	Schema, Table string
	// TxID, LSN and Xmin are left out of incremental snapshot events, as
	// Debezium does.
	TxID, LSN, Xmin *int64
	// Origin and OriginLSN are the replication origin of the
	// transaction, when it has one.
	Origin    *string
	OriginLSN *int64
}

var (
	sourceOnce   sync.Once
	sourceSchema *connect.Schema
	txSchema     *connect.Schema
)

func buildSourceSchemas() {
	snapshot := connect.NewSchema(connect.String).Name(dbzEnum).Version(1).
		Parameter("allowed", snapshotAllowed).Default("false").Optional().Build()
	sourceSchema = connect.NewStruct().Name("io.debezium.connector.postgresql.Source").Version(1).
		Field("version", connect.StringSchema).
		Field("connector", connect.StringSchema).
		Field("name", connect.StringSchema).
		Field("ts_ms", connect.Int64Schema).
		Field("snapshot", snapshot).
		Field("db", connect.StringSchema).
		Field("sequence", connect.OptionalStringSchema).
		Field("ts_us", connect.OptionalInt64Schema).
		Field("ts_ns", connect.OptionalInt64Schema).
		Field("schema", connect.StringSchema).
		Field("table", connect.StringSchema).
		Field("txId", connect.OptionalInt64Schema).
		Field("lsn", connect.OptionalInt64Schema).
		Field("xmin", connect.OptionalInt64Schema).
		Field("origin", connect.OptionalStringSchema).
		Field("origin_lsn", connect.OptionalInt64Schema).
		Build()
	txSchema = connect.NewStruct().Name("event.block").Version(1).Optional().
		Field("id", connect.StringSchema).
		Field("total_order", connect.Int64Schema).
		Field("data_collection_order", connect.Int64Schema).
		Build()
}

// SourceSchema is io.debezium.connector.postgresql.Source.
func SourceSchema() *connect.Schema {
	sourceOnce.Do(buildSourceSchemas)
	return sourceSchema
}

// TransactionSchema is the envelope's transaction block (event.block).
func TransactionSchema() *connect.Schema {
	sourceOnce.Do(buildSourceSchemas)
	return txSchema
}

// Struct builds the source block.
func (s SourceInfo) Struct() *connect.Struct { return s.build(nil) }

// boxedSource holds a table's source strings already converted to
// interface values: they are the same for every event of a table, and
// boxing them anew costs an allocation each.
type boxedSource struct {
	version, name, db, schema, table      string
	bVersion, bName, bDB, bSchema, bTable any
}

func (b *boxedSource) matches(version string, s *SourceInfo) bool {
	return b != nil && b.version == version && b.name == s.Name && b.db == s.DB && b.schema == s.Schema && b.table == s.Table
}

// sourceBoxes returns the boxed strings of s, reusing the table's last.
func (ts *TableSchemas) sourceBoxes(s *SourceInfo) *boxedSource {
	version := s.Version
	if version == "" {
		version = DebeziumVersion
	}
	if b := ts.boxes.Load(); b.matches(version, s) {
		return b
	}
	b := &boxedSource{version: version, name: s.Name, db: s.DB, schema: s.Schema, table: s.Table,
		bVersion: version, bName: s.Name, bDB: s.DB, bSchema: s.Schema, bTable: s.Table}
	ts.boxes.Store(b)
	return b
}

func (s SourceInfo) build(b *boxedSource) *connect.Struct {
	sch := SourceSchema()
	st := connect.NewStructValue(sch)
	f := sch.Fields
	if b == nil {
		version := s.Version
		if version == "" {
			version = DebeziumVersion
		}
		b = &boxedSource{bVersion: version, bName: s.Name, bDB: s.DB, bSchema: s.Schema, bTable: s.Table}
	}
	st.PutFieldUnchecked(&f[0], b.bVersion)
	st.PutFieldUnchecked(&f[1], debeziumConnector)
	st.PutFieldUnchecked(&f[2], b.bName)
	st.PutFieldUnchecked(&f[3], floorDiv(s.TsUs, 1000))
	if s.Snapshot != "" && s.Snapshot != "false" {
		st.PutFieldUnchecked(&f[4], s.Snapshot)
	}
	st.PutFieldUnchecked(&f[5], b.bDB)
	if s.Sequence != "" {
		st.PutFieldUnchecked(&f[6], s.Sequence)
	}
	st.PutFieldUnchecked(&f[7], s.TsUs)
	st.PutFieldUnchecked(&f[8], s.TsUs*1000)
	st.PutFieldUnchecked(&f[9], b.bSchema)
	st.PutFieldUnchecked(&f[10], b.bTable)
	if s.Snapshot != "incremental" {
		putInt64(st, &f[11], s.TxID)
		putInt64(st, &f[12], s.LSN)
		putInt64(st, &f[13], s.Xmin)
	}
	if s.Origin != nil {
		st.PutFieldUnchecked(&f[14], *s.Origin)
	}
	putInt64(st, &f[15], s.OriginLSN)
	return st
}

func putInt64(st *connect.Struct, f *connect.Field, v *int64) {
	if v != nil {
		st.PutFieldUnchecked(f, *v)
	}
}

// SourceSequence is source.sequence as Debezium writes it: the JSON array
// of the last commit LSN and the event's LSN, as decimal strings, null
// when unknown.
func SourceSequence(lastCommitLSN, lsn *uint64) string {
	b := make([]byte, 0, 48)
	b = append(b, '[')
	for i, v := range []*uint64{lastCommitLSN, lsn} {
		if i > 0 {
			b = append(b, ',')
		}
		if v == nil {
			b = append(b, "null"...)
			continue
		}
		b = append(b, '"')
		b = strconv.AppendInt(b, int64(*v), 10) // Lsn.asLong: a signed long
		b = append(b, '"')
	}
	return string(append(b, ']'))
}

// TxBlock is the envelope's transaction block (provide.transaction.metadata).
type TxBlock struct {
	ID                  string // "<txId>:<lsn>" as Debezium's PostgreSQL connector writes it
	TotalOrder          int64  // position of the event among all events of the transaction, from 1
	DataCollectionOrder int64  // position among the transaction's events of this table, from 1
}

// envelopeSchema is Debezium's Envelope schema: before, after, source,
// transaction, then op and the processing timestamps, version 2.
func envelopeSchema(topic string, value *connect.Schema) *connect.Schema {
	return connect.NewStruct().Name(topic+".Envelope").Version(2).
		Field("before", value).
		Field("after", value).
		Field("source", SourceSchema()).
		Field("transaction", TransactionSchema()).
		Field("op", connect.StringSchema).
		Field("ts_ms", connect.OptionalInt64Schema).
		Field("ts_us", connect.OptionalInt64Schema).
		Field("ts_ns", connect.OptionalInt64Schema).
		Build()
}

// Envelope builds the value of a change event, of schema
// ts.EnvelopeSchema: op is "r", "c", "u", "d" or "t"; before and after
// are rows of ts.Value (nil when absent); now is the processing time
// (ts_ms, ts_us, ts_ns).
func (ts *TableSchemas) Envelope(op string, before, after *connect.Struct, src SourceInfo, now time.Time) *connect.Struct {
	return ts.EnvelopeTx(op, before, after, src, now, nil)
}

// EnvelopeTx is Envelope with the transaction block (nil when
// provide.transaction.metadata is off).
func (ts *TableSchemas) EnvelopeTx(op string, before, after *connect.Struct, src SourceInfo, now time.Time, tx *TxBlock) *connect.Struct {
	s := ts.EnvelopeSchema
	f := s.Fields
	st := connect.NewStructValue(s)
	if before != nil {
		st.PutFieldUnchecked(&f[0], before)
	}
	if after != nil {
		st.PutFieldUnchecked(&f[1], after)
	}
	st.PutFieldUnchecked(&f[2], src.build(ts.sourceBoxes(&src)))
	if tx != nil {
		t := TransactionSchema()
		b := connect.NewStructValue(t)
		b.PutFieldUnchecked(&t.Fields[0], tx.ID)
		b.PutFieldUnchecked(&t.Fields[1], tx.TotalOrder)
		b.PutFieldUnchecked(&t.Fields[2], tx.DataCollectionOrder)
		st.PutFieldUnchecked(&f[3], b)
	}
	st.PutFieldUnchecked(&f[4], op)
	st.PutFieldUnchecked(&f[5], now.UnixMilli())
	st.PutFieldUnchecked(&f[6], now.UnixMicro())
	st.PutFieldUnchecked(&f[7], now.UnixNano())
	return st
}

// DataChangeTopic is Debezium's topic for a table, <prefix>.<schema>.<table>
// (blank parts left out), with characters Kafka does not allow in topic
// names replaced by '_' and cut to 249 characters. Debezium names the
// table's Key, Value and Envelope schemas after it.
func DataChangeTopic(prefix, schema, table string) string {
	var parts []string
	for _, p := range []string{prefix, schema, table} {
		if strings.TrimSpace(p) != "" {
			parts = append(parts, p)
		}
	}
	return sanitizeTopic(strings.Join(parts, "."))
}

// sanitizeTopic replaces each UTF-16 unit outside [a-zA-Z0-9._-] by '_'
// (a character outside the BMP takes two), as Debezium does.
func sanitizeTopic(name string) string {
	valid := func(r rune) bool {
		return r == '.' || r == '_' || r == '-' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9'
	}
	var b strings.Builder
	for _, r := range name {
		n := len(utf16.Encode([]rune{r}))
		if valid(r) {
			b.WriteRune(r)
		} else {
			b.WriteString(strings.Repeat("_", n))
		}
	}
	s := b.String()
	if len(s) > 249 {
		s = s[:249] // all ASCII by now
	}
	switch s {
	case ".":
		return "_"
	case "..":
		return "__"
	}
	return s
}
