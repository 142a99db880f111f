package format

import (
	"bufio"
	"bytes"
	"io"
	"strconv"
	"time"

	"github.com/fjordhq/fjord/connect"
	jsonconv "github.com/fjordhq/fjord/converters/json"
)

// JsonFormat writes JSON lines: each value as Kafka's JsonConverter with
// schemas.enable=false writes it, then "\n" (Java's line separator on
// the Linux workers Confluent's connector runs on). A null value is the
// line "null".
//
// Confluent hands Struct values to the JsonConverter and writes other
// values with Jackson's ObjectMapper. The two agree on everything but
// logical types at the top level, where Jackson writes a Date, Time or
// Timestamp as epoch milliseconds and a Decimal as BigDecimal.toString;
// Fjord does the same. Inside arrays and maps (Jackson's domain too)
// Fjord keeps the converter's encoding: days for a Date, and Decimals as
// json.decimal.format says.
type jsonFormat struct {
	s       *settings
	conv    *jsonconv.Converter // json.decimal.format
	numeric *jsonconv.Converter // NUMERIC decimals: Jackson's BigDecimal
	read    *jsonconv.Converter
}

func newJSON(s *settings) *jsonFormat {
	cfg := func(decimal string) *jsonconv.Converter {
		c := jsonconv.New()
		props := map[string]string{
			jsonconv.SchemasEnableConfig:    "false",
			jsonconv.SchemasCacheSizeConfig: strconv.Itoa(s.cacheSize),
			jsonconv.DecimalFormatConfig:    decimal,
		}
		if err := c.Configure(props, false); err != nil {
			// The values are valid by construction.
			panic(err)
		}
		return c
	}
	decimal := "BASE64"
	if s.decimalNumeric {
		decimal = "NUMERIC"
	}
	return &jsonFormat{s: s, conv: cfg(decimal), numeric: cfg("NUMERIC"), read: cfg("BASE64")}
}

func (f *jsonFormat) Extension() string {
	if f.s.gzip {
		return ".json" + gzipExt
	}
	return ".json"
}

func (f *jsonFormat) NewWriter(w io.Writer) (RecordWriter, error) {
	lw, err := newLineWriter(w, f.s)
	if err != nil {
		return nil, err
	}
	return &jsonWriter{f: f, lw: lw}, nil
}

type jsonWriter struct {
	f  *jsonFormat
	lw *lineWriter
}

func (w *jsonWriter) Write(s *connect.Schema, v any) error {
	if s == headersSchema {
		// Confluent envelopes the headers view in JSON files.
		s, v = envelopeHeaders(v)
	}
	start := len(w.lw.buf)
	b, err := w.f.appendValue(w.lw.buf, s, v)
	if err != nil {
		w.lw.buf = b[:start]
		return err
	}
	w.lw.buf = append(b, '\n')
	return w.lw.maybeFlush()
}

func (w *jsonWriter) Close() error { return w.lw.Close() }

// appendValue appends one record's JSON.
func (f *jsonFormat) appendValue(dst []byte, s *connect.Schema, v any) ([]byte, error) {
	if v == nil {
		return append(dst, "null"...), nil
	}
	if s != nil && s.Type != connect.StructType {
		switch s.Name {
		case connect.DateName, connect.TimeName, connect.TimestampName:
			if t, ok := v.(time.Time); ok {
				return strconv.AppendInt(dst, t.UnixMilli(), 10), nil
			}
		case connect.DecimalName:
			return f.numeric.AppendConnectData(dst, s, v)
		}
	}
	return f.conv.AppendConnectData(dst, s, v)
}

// maxLine bounds one JSON line when reading (a record of Kafka's
// default 1 MB limit is far below it).
const maxLine = 256 << 20

func (f *jsonFormat) NewReader(r io.ReaderAt, size int64) (RecordReader, error) {
	in, err := openStream(r, size, f.s.gzip, true)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	return &jsonReader{sc: sc, conv: f.read}, nil
}

// jsonReader reads JSON lines back schemaless, as a sink's JsonConverter
// with schemas.enable=false would: objects as map[string]any, integers
// as int64, other numbers as float64. Blank lines are skipped and a
// trailing "\r" (a Windows worker's separator) is ignored.
type jsonReader struct {
	sc   *bufio.Scanner
	conv *jsonconv.Converter
}

func (r *jsonReader) Next() (*connect.Schema, any, error) {
	for r.sc.Scan() {
		line := bytes.TrimSuffix(r.sc.Bytes(), []byte{'\r'})
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		return r.conv.ToConnectData("", nil, line)
	}
	if err := r.sc.Err(); err != nil {
		return nil, nil, err
	}
	return nil, nil, io.EOF
}
