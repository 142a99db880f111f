package format

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"

	"github.com/fjordhq/fjord/connect"
)

// ParquetFormat writes Parquet files as Confluent's
// ParquetRecordWriterProvider (parquet-avro over AvroData): the schema
// of parquet_schema.go, dictionary-encoded strings, 64 KiB pages, V1
// data pages, parquet.codec compression, and the Avro schema in the
// footer's key/value metadata under "parquet.avro.schema" (with
// "writer.model.name" = "avro"), as parquet-avro writes them. Values
// must be structs (Parquet rows are records; Confluent fails on
// anything else); the headers view is enveloped in RecordHeaders and
// KeysFormat envelopes keys in RecordKey, as Confluent does.
//
// Rows go to parquet-go's writer as they come; it buffers a row group
// and compresses pages as they fill. A row group is written once about
// rowGroupBytes of values are buffered, and at Close, with the footer.
type parquetFormat struct {
	s     *settings
	codec compress.Codec
	ext   string
}

// rowGroupBytes is the raw value size after which a row group is
// written (parquet-java's default block size is 128 MB of encoded data;
// the raw size bounds the writer's memory more directly).
var rowGroupBytes = 64 << 20

// pageBytes is Confluent's PAGE_SIZE.
const pageBytes = 64 << 10

// parquetCodecs maps parquet.codec to parquet-go's codec and
// CompressionCodecName's extension.
func newParquet(s *settings) (*parquetFormat, error) {
	f := &parquetFormat{s: s}
	switch s.parquetCodec {
	case "none":
		f.codec, f.ext = &parquet.Uncompressed, ""
	case "snappy":
		f.codec, f.ext = &parquet.Snappy, ".snappy"
	case "gzip":
		f.codec, f.ext = &parquet.Gzip, ".gz"
	case "zstd":
		f.codec, f.ext = &parquet.Zstd, ".zstd"
	case "brotli":
		f.codec, f.ext = &parquet.Brotli, ".br"
	case "lz4_raw":
		f.codec, f.ext = &parquet.Lz4Raw, ".lz4raw"
	default:
		return nil, fmt.Errorf("parquet.codec %s is not supported", s.parquetCodec)
	}
	return f, nil
}

func (f *parquetFormat) Extension() string { return f.ext + ".parquet" }

// OneSchemaPerFile: a Parquet file has one schema.
func (f *parquetFormat) OneSchemaPerFile() {}

func (f *parquetFormat) NewWriter(w io.Writer) (RecordWriter, error) {
	return &parquetWriter{f: f, out: w}, nil
}

type parquetWriter struct {
	f       *parquetFormat
	out     io.Writer
	schema  *connect.Schema // the file's, from the first record
	plan    *plan
	pw      *parquet.Writer
	cols    [][]parquet.Value
	row     parquet.Row
	rows    []parquet.Row
	pending int // raw bytes in the current row group
}

func (w *parquetWriter) open(s *connect.Schema) error {
	if s == nil {
		return &connect.DataError{Msg: "ParquetFormat cannot write schemaless data: the record has no schema"}
	}
	if s.Type != connect.StructType {
		return &connect.DataError{Msg: fmt.Sprintf("ParquetFormat writes records (STRUCT values); the schema is %s", s)}
	}
	cs := s
	if cs.Optional {
		// Parquet's root cannot be null; the values still can't be.
		cs = connect.FromSchema(s).Required().Build()
	}
	a, err := avroSchemaFor(cs, w.f.s)
	if err != nil {
		return err
	}
	ps, p, err := parquetSchemaFor(cs, a)
	if err != nil {
		return err
	}
	w.pw = parquet.NewWriter(w.out, ps,
		parquet.Compression(w.f.codec),
		parquet.PageBufferSize(pageBytes),
		parquet.DataPageVersion(1),
		parquet.KeyValueMetadata("parquet.avro.schema", a.String()),
		parquet.KeyValueMetadata("writer.model.name", "avro"),
	)
	w.schema, w.plan = s, p
	w.cols = make([][]parquet.Value, p.last)
	w.rows = make([]parquet.Row, 1)
	return nil
}

func (w *parquetWriter) Write(s *connect.Schema, v any) error {
	if s == headersSchema {
		s, v = envelopeHeaders(v)
	}
	if w.pw == nil {
		if err := w.open(s); err != nil {
			return err
		}
	} else if s != w.schema && !s.Equal(w.schema) {
		return fmt.Errorf("record schema %s differs from the Parquet file's %s: start a new file", s, w.schema)
	}
	st, ok := v.(*connect.Struct)
	if !ok {
		if v == nil {
			return &connect.DataError{Msg: "ParquetFormat cannot write a null value: a Parquet row is a record"}
		}
		return &connect.DataError{Msg: fmt.Sprintf("ParquetFormat writes Struct values, not %T", v)}
	}
	if ss := st.Schema(); ss != w.schema && !ss.Equal(w.schema) {
		return &connect.DataError{Msg: "Struct schema does not match the record's schema"}
	}
	for i := range w.cols {
		w.cols[i] = w.cols[i][:0]
	}
	if err := w.fields(w.plan, st, 0); err != nil {
		return err
	}
	row := w.row[:0]
	for _, c := range w.cols {
		row = append(row, c...)
	}
	w.row, w.rows[0] = row, row
	if _, err := w.pw.WriteRows(w.rows); err != nil {
		return err
	}
	if w.pending >= rowGroupBytes {
		w.pending = 0
		return w.pw.Flush()
	}
	return nil
}

// Close writes the last row group and the footer. A writer that got no
// record writes nothing (the schema comes from the first record).
func (w *parquetWriter) Close() error {
	if w.pw == nil {
		return nil
	}
	return w.pw.Close()
}

// fields shreds a struct's fields (Dremel encoding: each leaf value with
// its repetition and definition levels, column by column).
func (w *parquetWriter) fields(p *plan, st *connect.Struct, r int) error {
	fs := p.cs.Fields
	if len(st.Schema().Fields) != len(fs) {
		return &connect.DataError{Msg: "Mismatching struct schema"}
	}
	for i, fp := range p.fields {
		if err := w.value(fp, st.GetField(&fs[i]), r); err != nil {
			return fmt.Errorf("field %s: %w", fs[i].Name, err)
		}
	}
	return nil
}

// nulls records that p holds no value: every leaf under it gets a null
// at definition level d.
func (w *parquetWriter) nulls(p *plan, r, d int) {
	for c := p.first; c < p.last; c++ {
		w.cols[c] = append(w.cols[c], parquet.NullValue().Level(r, d, c))
	}
}

func (w *parquetWriter) value(p *plan, v any, r int) error {
	if v == nil {
		if !p.optional {
			return &connect.DataError{Msg: "Found null value for non-optional schema"}
		}
		w.nulls(p, r, p.def-1)
		return nil
	}
	switch p.kind {
	case kindLeaf:
		val, err := w.leafValue(p, v)
		if err != nil {
			return err
		}
		w.cols[p.col] = append(w.cols[p.col], val.Level(r, p.def, p.col))
	case kindStruct:
		st, ok := v.(*connect.Struct)
		if !ok {
			return dataErrorf("expected a Struct for %s, got %T", p.cs, v)
		}
		return w.fields(p, st, r)
	case kindList:
		items, ok := v.([]any)
		if !ok {
			return dataErrorf("expected an array ([]any), got %T", v)
		}
		if len(items) == 0 {
			w.nulls(p, r, p.def)
			return nil
		}
		for i, it := range items {
			ri := r
			if i > 0 {
				ri = p.repRep
			}
			if err := w.value(p.elem, it, ri); err != nil {
				return err
			}
		}
	case kindMap:
		m, ok := v.(map[string]any)
		if !ok {
			return dataErrorf("expected a map[string]any, got %T", v)
		}
		if len(m) == 0 {
			w.nulls(p, r, p.def)
			return nil
		}
		for i, k := range slices.Sorted(maps.Keys(m)) {
			ri := r
			if i > 0 {
				ri = p.repRep
			}
			w.cols[p.key.col] = append(w.cols[p.key.col], parquet.ByteArrayValue(stringBytes(k)).Level(ri, p.repDef, p.key.col))
			w.pending += 8 + len(k)
			if err := w.value(p.elem, m[k], ri); err != nil {
				return err
			}
		}
	case kindEntries:
		entries, err := sortedEntries(v)
		if err != nil {
			return err
		}
		if len(entries) == 0 {
			w.nulls(p, r, p.def)
			return nil
		}
		for i, e := range entries {
			ri := r
			if i > 0 {
				ri = p.repRep
			}
			if err := w.value(p.elem.fields[0], e[0], ri); err != nil {
				return err
			}
			if err := w.value(p.elem.fields[1], e[1], ri); err != nil {
				return err
			}
		}
	}
	return nil
}

// sortedEntries lists a map's entries in a stable order (Connect maps
// are Go maps, which have none).
func sortedEntries(v any) ([][2]any, error) {
	var out [][2]any
	switch m := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(m)) {
			out = append(out, [2]any{k, m[k]})
		}
	case map[any]any:
		for k, val := range m {
			out = append(out, [2]any{k, val})
		}
		slices.SortFunc(out, func(a, b [2]any) int { return cmp.Compare(fmt.Sprint(a[0]), fmt.Sprint(b[0])) })
	default:
		return nil, dataErrorf("expected a map, got %T", v)
	}
	return out, nil
}

func dataErrorf(format string, args ...any) error {
	return &connect.DataError{Msg: fmt.Sprintf(format, args...)}
}

// stringBytes views a string's bytes without copying: parquet-go copies
// byte array values into its column buffers and never writes to them.
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

func (w *parquetWriter) leafValue(p *plan, v any) (parquet.Value, error) {
	bad := func() (parquet.Value, error) {
		return parquet.Value{}, dataErrorf("Invalid Java object for schema with type %s: %T", p.cs.Type, v)
	}
	w.pending += 8
	switch p.leaf {
	case leafInt8:
		if x, ok := v.(int8); ok {
			return parquet.Int32Value(int32(x)), nil
		}
	case leafInt16:
		if x, ok := v.(int16); ok {
			return parquet.Int32Value(int32(x)), nil
		}
	case leafInt32:
		if x, ok := v.(int32); ok {
			return parquet.Int32Value(x), nil
		}
	case leafDate:
		if t, ok := v.(time.Time); ok {
			days, err := connect.DateToDays(t)
			return parquet.Int32Value(days), err
		}
	case leafTime:
		if t, ok := v.(time.Time); ok {
			ms, err := connect.TimeToMillis(t)
			return parquet.Int32Value(ms), err
		}
	case leafInt64:
		if x, ok := v.(int64); ok {
			return parquet.Int64Value(x), nil
		}
	case leafTimestamp:
		if t, ok := v.(time.Time); ok {
			return parquet.Int64Value(t.UnixMilli()), nil
		}
	case leafFloat32:
		if x, ok := v.(float32); ok {
			return parquet.FloatValue(x), nil
		}
	case leafFloat64:
		if x, ok := v.(float64); ok {
			return parquet.DoubleValue(x), nil
		}
	case leafBool:
		if x, ok := v.(bool); ok {
			return parquet.BooleanValue(x), nil
		}
	case leafString:
		if x, ok := v.(string); ok {
			w.pending += len(x)
			return parquet.ByteArrayValue(stringBytes(x)), nil
		}
	case leafBytes:
		if x, ok := v.([]byte); ok {
			return w.bytesValue(p, x, false)
		}
	case leafDecimal:
		d, ok := v.(connect.Decimal)
		if !ok || d.Unscaled == nil {
			return bad()
		}
		b, err := connect.DecimalToBytes(p.cs, d)
		if err != nil {
			return parquet.Value{}, err
		}
		return w.bytesValue(p, b, d.Unscaled.Sign() < 0)
	}
	return bad()
}

// bytesValue is a BINARY value, or a FIXED one of the column's size
// (shorter values sign-extended for decimals, zero-padded otherwise, as
// AvroData pads them).
func (w *parquetWriter) bytesValue(p *plan, b []byte, negative bool) (parquet.Value, error) {
	w.pending += len(b)
	if p.size == 0 {
		return parquet.ByteArrayValue(b), nil
	}
	if len(b) > p.size {
		return parquet.Value{}, dataErrorf("value of %d bytes is too long for fixed size %d", len(b), p.size)
	}
	if len(b) < p.size {
		pad := byte(0)
		if negative {
			pad = 0xff
		}
		fixed := make([]byte, p.size)
		for i := range p.size - len(b) {
			fixed[i] = pad
		}
		copy(fixed[p.size-len(b):], b)
		b = fixed
	}
	return parquet.FixedLenByteArrayValue(b), nil
}
