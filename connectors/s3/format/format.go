// Package format encodes and decodes the records of one S3 object in the
// formats Confluent's S3 sink writes (its format.class values): JSON
// lines, Avro object container files, Parquet and raw bytes.
package format

import (
	"io"

	"github.com/fjordhq/fjord/connect"
)

// Format is one configured format.class.
type Format interface {
	// Extension is the object name's suffix, compression included, as
	// Confluent names it: ".json", ".json.gz", ".avro", ".snappy.parquet",
	// ".bin".
	Extension() string
	// NewWriter starts one object written to w. For Avro and Parquet the
	// first record's schema becomes the file's schema (the sink rotates
	// the file before a record whose schema differs).
	NewWriter(w io.Writer) (RecordWriter, error)
	// NewReader reads an object back (the S3 source and the tests).
	NewReader(r io.ReaderAt, size int64) (RecordReader, error)
}

// RecordWriter appends records to one object.
type RecordWriter interface {
	// Write appends one record's Connect schema and value (v may be nil
	// for a null value; s may be nil for schemaless data).
	Write(s *connect.Schema, v any) error
	// Close writes what the format needs at the end (Avro's last block,
	// Parquet's footer, gzip's trailer). It does not close the io.Writer.
	Close() error
}

// RecordReader reads the records of one object in order.
type RecordReader interface {
	// Next returns the next record's schema and value, io.EOF after the
	// last.
	Next() (*connect.Schema, any, error)
}

// SchemaFixed is implemented by formats whose files carry one schema
// (Avro, Parquet): the sink starts a new file when a record's schema is
// not the file's.
type SchemaFixed interface {
	OneSchemaPerFile()
}
