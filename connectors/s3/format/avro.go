package format

import (
	"fmt"
	"io"

	"github.com/linkedin/goavro/v2"

	"github.com/fjordhq/fjord/connect"
	avroconv "github.com/fjordhq/fjord/converters/avro"
	"github.com/fjordhq/fjord/converters/avro/avsc"
)

// AvroFormat writes Avro object container files, as Confluent's
// AvroRecordWriterProvider: the writer schema is the first record's
// Connect schema converted by AvroData (connect.meta.data,
// enhanced.avro.schema.support), compressed with avro.codec. Any schema
// works, primitives too; schemaless records (no schema) are refused, as
// Avro needs one. A file holds one schema: the sink starts a new file
// when a record's schema changes.
type avroFormat struct{ s *settings }

func (f *avroFormat) Extension() string { return ".avro" }

// OneSchemaPerFile: a container file has one writer schema.
func (f *avroFormat) OneSchemaPerFile() {}

func (f *avroFormat) NewWriter(w io.Writer) (RecordWriter, error) {
	return &avroWriter{f: f, w: w}, nil
}

type avroWriter struct {
	f      *avroFormat
	w      io.Writer
	schema *connect.Schema // the file's, from the first record
	avro   *avsc.Schema
	codec  *goavro.Codec
	ocf    *ocfWriter
}

// avroSchemaFor is the Avro schema AvroData makes for s, with enum
// symbols preserved when enhanced.avro.schema.support is on.
func avroSchemaFor(s *connect.Schema, st *settings) (*avsc.Schema, error) {
	a, err := avroconv.SchemaFromConnect(s, st.connectMeta)
	if err != nil {
		return nil, err
	}
	if st.enhanced {
		restoreEnums(s, a)
	}
	return a, nil
}

func (w *avroWriter) open(s *connect.Schema) error {
	if s == nil {
		return &connect.DataError{Msg: "AvroFormat cannot write schemaless data: the record has no schema " +
			"(use a converter that gives schemas, or JsonFormat)"}
	}
	a, err := avroSchemaFor(s, w.f.s)
	if err != nil {
		return err
	}
	codec, err := goavro.NewCodec(avroconv.CodecSchema(a, true).String())
	if err != nil {
		return fmt.Errorf("Avro codec for %s: %w", a, err)
	}
	o, err := newOCFWriter(w.w, a.String(), w.f.s.avroCodec)
	if err != nil {
		return err
	}
	w.schema, w.avro, w.codec, w.ocf = s, a, codec, o
	return nil
}

func (w *avroWriter) Write(s *connect.Schema, v any) error {
	if w.ocf == nil {
		if err := w.open(s); err != nil {
			return err
		}
	} else if s != w.schema && !s.Equal(w.schema) {
		return fmt.Errorf("record schema %s differs from the Avro file's %s: start a new file", s, w.schema)
	}
	native, err := avroconv.ValueToNative(w.schema, w.avro, v)
	if err != nil {
		return err
	}
	start := len(w.ocf.block)
	b, err := w.codec.BinaryFromNative(w.ocf.block, native)
	if err != nil {
		w.ocf.block = w.ocf.block[:start]
		return &connect.DataError{Msg: err.Error()}
	}
	w.ocf.block = b
	return w.ocf.added()
}

// Close writes the last block. A writer that got no record writes
// nothing: the container header needs the first record's schema.
func (w *avroWriter) Close() error {
	if w.ocf == nil {
		return nil
	}
	return w.ocf.flush()
}

func (f *avroFormat) NewReader(r io.ReaderAt, size int64) (RecordReader, error) {
	if size == 0 {
		return emptyReader{}, nil
	}
	o, err := newOCFReader(r, size)
	if err != nil {
		return nil, err
	}
	a, err := avsc.Parse(o.schema)
	if err != nil {
		return nil, fmt.Errorf("Avro container schema: %w", err)
	}
	cs, err := avroconv.SchemaToConnect(a, f.s.connectMeta)
	if err != nil {
		return nil, err
	}
	codec, err := goavro.NewCodec(avroconv.CodecSchema(a, false).String())
	if err != nil {
		return nil, fmt.Errorf("Avro codec for %s: %w", o.schema, err)
	}
	return &avroReader{ocf: o, avro: a, schema: cs, codec: codec}, nil
}

type avroReader struct {
	ocf    *ocfReader
	avro   *avsc.Schema
	schema *connect.Schema
	codec  *goavro.Codec
	data   []byte
	left   int64 // records left in the current block
}

func (r *avroReader) Next() (*connect.Schema, any, error) {
	for r.left == 0 {
		if len(r.data) > 0 {
			return nil, nil, fmt.Errorf("Avro container block has %d bytes after its records", len(r.data))
		}
		n, data, err := r.ocf.nextBlock()
		if err != nil {
			return nil, nil, err
		}
		r.left, r.data = n, data
	}
	if err := avroconv.CheckBlocks(r.avro, r.data); err != nil {
		return nil, nil, err
	}
	native, rest, err := r.codec.NativeFromBinary(r.data)
	if err != nil {
		return nil, nil, err
	}
	r.data = rest
	r.left--
	v, err := avroconv.ValueFromNative(r.schema, r.avro, native)
	if err != nil {
		return nil, nil, err
	}
	return r.schema, v, nil
}

// emptyReader reads an object that holds no record.
type emptyReader struct{}

func (emptyReader) Next() (*connect.Schema, any, error) { return nil, nil, io.EOF }
