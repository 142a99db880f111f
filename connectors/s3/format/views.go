package format

import (
	"fmt"
	"io"
	"sync"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/converters/header"
)

// Side files for store.kafka.keys and store.kafka.headers, as
// Confluent's RecordViews: "<name>.keys<ext>" holds each record's key and
// "<name>.headers<ext>" its headers, one entry per value record, written
// with keys.format.class and headers.format.class.
//
// Confluent envelopes some views (RecordViews' getView(record,
// enveloped)): Parquet needs a record at the top, so it writes a key as
// RecordKey{key} and headers as RecordHeaders{headers}; JSON writes
// headers as {"headers":[...]}; Avro and ByteArray write the bare view.
// The JSON and Parquet writers recognise HeadersView's schema and
// envelope it themselves; keys need KeysFormat (a key's schema is the
// record's own).

// KeysExtension is the suffix of the keys file beside an object of the
// value format: ".keys" and f's extension (".keys.avro").
func KeysExtension(f Format) string { return ".keys" + f.Extension() }

// HeadersExtension is the suffix of the headers file: ".headers" and f's
// extension (".headers.avro").
func HeadersExtension(f Format) string { return ".headers" + f.Extension() }

// singleHeaderSchema is Confluent's HeaderRecordView.SINGLE_HEADER_SCHEMA:
// an unnamed struct of two required strings.
var singleHeaderSchema = connect.NewStruct().
	Field("key", connect.StringSchema).
	Field("value", connect.StringSchema).Build()

// headersSchema is the headers view's schema, an array of
// singleHeaderSchema. Writers compare schemas to it by pointer.
var headersSchema = connect.NewArray(singleHeaderSchema).Build()

// headersEnvelope is HeaderRecordView's enveloped schema.
var headersEnvelope = connect.NewStruct().Name("RecordHeaders").Field("headers", headersSchema).Build()

// HeadersSchema returns the schema HeadersView gives.
func HeadersSchema() *connect.Schema { return headersSchema }

// HeadersView is Confluent's HeaderRecordView: the headers as an array of
// {key, value} structs, each value as Kafka's Values.convertToString
// writes it. A header whose value is null has a null value in the view,
// which the formats refuse to write, as Confluent's Struct.put refuses
// it.
func HeadersView(h connect.Headers) (*connect.Schema, any) {
	items := make([]any, len(h))
	kf, vf := &singleHeaderSchema.Fields[0], &singleHeaderSchema.Fields[1]
	for i, x := range h {
		st := connect.NewStructValue(singleHeaderSchema)
		st.PutFieldUnchecked(kf, x.Key)
		if x.Value != nil {
			if s, err := header.FormatString(x.Schema, x.Value); err == nil {
				st.PutFieldUnchecked(vf, s)
			}
		}
		items[i] = st
	}
	return headersSchema, items
}

// envelopeHeaders wraps the headers view in RecordHeaders{headers}.
func envelopeHeaders(v any) (*connect.Schema, any) {
	st := connect.NewStructValue(headersEnvelope)
	st.PutFieldUnchecked(&headersEnvelope.Fields[0], v)
	return headersEnvelope, st
}

// HeadersFromView turns what a headers file's reader returns back into
// headers, each value a STRING header (the view kept text only). It
// accepts the bare view and Confluent's envelopes, from any format (a
// JSON file reads back as maps).
func HeadersFromView(v any) (connect.Headers, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case *connect.Struct:
		if f := x.Schema().Field("headers"); f != nil {
			return HeadersFromView(x.GetField(f))
		}
	case map[string]any:
		if hs, ok := x["headers"]; ok && len(x) == 1 {
			return HeadersFromView(hs)
		}
	case []any:
		out := make(connect.Headers, 0, len(x))
		for _, it := range x {
			k, val, err := headerEntry(it)
			if err != nil {
				return nil, err
			}
			if val == nil {
				out.Add(k, connect.OptionalStringSchema, nil)
				continue
			}
			out.Add(k, connect.StringSchema, *val)
		}
		return out, nil
	}
	return nil, fmt.Errorf("not a headers view: %T", v)
}

func headerEntry(it any) (string, *string, error) {
	var k, v any
	switch e := it.(type) {
	case *connect.Struct:
		var err error
		if k, err = e.Get("key"); err != nil {
			return "", nil, fmt.Errorf("headers view entry: %w", err)
		}
		if v, err = e.Get("value"); err != nil {
			return "", nil, fmt.Errorf("headers view entry: %w", err)
		}
	case map[string]any:
		k, v = e["key"], e["value"]
	default:
		return "", nil, fmt.Errorf("headers view entry is %T, not a {key, value} struct", it)
	}
	ks, ok := k.(string)
	if !ok {
		return "", nil, fmt.Errorf("headers view entry has key %T, not a string", k)
	}
	if v == nil {
		return ks, nil, nil
	}
	vs, ok := v.(string)
	if !ok {
		return "", nil, fmt.Errorf("headers view entry %q has value %T, not a string", ks, v)
	}
	return ks, &vs, nil
}

// KeysFormat is f for keys files: for Parquet it envelopes each key as
// Confluent's KeyRecordView does (RecordKey{key}) and unwraps it when
// reading; other formats write keys bare and are returned as they are.
func KeysFormat(f Format) Format {
	if _, ok := f.(*parquetFormat); ok {
		return &keyEnvelopeFormat{Format: f, schemas: map[*connect.Schema]*connect.Schema{}}
	}
	return f
}

type keyEnvelopeFormat struct {
	Format
	mu      sync.Mutex
	schemas map[*connect.Schema]*connect.Schema
}

// OneSchemaPerFile: Parquet's files carry one schema.
func (f *keyEnvelopeFormat) OneSchemaPerFile() {}

// envelope is KeyRecordView's schema for a key schema, cached: one
// writer sees few key schemas, and equal envelopes keep one file.
func (f *keyEnvelopeFormat) envelope(s *connect.Schema) (*connect.Schema, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if e, ok := f.schemas[s]; ok {
		return e, nil
	}
	if s == nil {
		return nil, fmt.Errorf("%s needs a key schema: schemaless keys cannot be written", parquetName)
	}
	e, err := connect.NewStruct().Name("RecordKey").Field("key", s).BuildE()
	if err != nil {
		return nil, err
	}
	if len(f.schemas) > 1000 {
		clear(f.schemas)
	}
	f.schemas[s] = e
	return e, nil
}

func (f *keyEnvelopeFormat) NewWriter(w io.Writer) (RecordWriter, error) {
	inner, err := f.Format.NewWriter(w)
	if err != nil {
		return nil, err
	}
	return &keyEnvelopeWriter{f: f, inner: inner}, nil
}

type keyEnvelopeWriter struct {
	f     *keyEnvelopeFormat
	inner RecordWriter
}

func (w *keyEnvelopeWriter) Write(s *connect.Schema, v any) error {
	e, err := w.f.envelope(s)
	if err != nil {
		return err
	}
	st := connect.NewStructValue(e)
	st.PutFieldUnchecked(&e.Fields[0], v)
	return w.inner.Write(e, st)
}

func (w *keyEnvelopeWriter) Close() error { return w.inner.Close() }

func (f *keyEnvelopeFormat) NewReader(r io.ReaderAt, size int64) (RecordReader, error) {
	inner, err := f.Format.NewReader(r, size)
	if err != nil {
		return nil, err
	}
	return &keyEnvelopeReader{inner: inner}, nil
}

type keyEnvelopeReader struct{ inner RecordReader }

func (r *keyEnvelopeReader) Next() (*connect.Schema, any, error) {
	s, v, err := r.inner.Next()
	if err != nil {
		return nil, nil, err
	}
	st, ok := v.(*connect.Struct)
	if !ok || s == nil || s.Type != connect.StructType || s.Field("key") == nil || len(s.Fields) != 1 {
		return nil, nil, fmt.Errorf("keys file record is not a RecordKey{key} envelope")
	}
	f := s.Field("key")
	return f.Schema, st.GetFieldWithoutDefault(f), nil
}
