package cli

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kgo"
)

// FormatJSON selects one JSON object per record instead of a template.
const FormatJSON = "json"

// nullText is how a null key, value or header value prints in templates:
// Kafka's console consumer prints "null", which keeps a tombstone visibly
// different from an empty value.
const nullText = "null"

// RecordFormatter renders records for `fjord consume`.
type RecordFormatter struct {
	json  bool
	parts []formatPart
}

type formatPart struct {
	literal []byte
	field   byte // 0 for a literal
}

// FormatHelp lists the template codes, for --help.
const FormatHelp = `kcat-style template: %t topic, %p partition, %o offset, %k key, %v value, ` +
	`%h headers (k=v,...), %T timestamp (ms), %K key length, %S value length, %% a percent sign; ` +
	`escapes \n \t \r \\. Null keys and values print as "null". Or "json": one object per record ` +
	`with topic, partition, offset, timestamp, key, value, headers (non-UTF-8 bytes go in key_base64/value_base64)`

// ParseFormat compiles a --format value: "json" or a kcat-style template.
func ParseFormat(format string) (*RecordFormatter, error) {
	if format == FormatJSON {
		return &RecordFormatter{json: true}, nil
	}
	f := &RecordFormatter{}
	var lit []byte
	flush := func() {
		if len(lit) > 0 {
			f.parts = append(f.parts, formatPart{literal: lit})
			lit = nil
		}
	}
	for i := 0; i < len(format); i++ {
		c := format[i]
		switch c {
		case '\\':
			if i+1 >= len(format) {
				lit = append(lit, c)
				continue
			}
			i++
			switch format[i] {
			case 'n':
				lit = append(lit, '\n')
			case 't':
				lit = append(lit, '\t')
			case 'r':
				lit = append(lit, '\r')
			case '\\':
				lit = append(lit, '\\')
			default:
				// Unknown escapes stay as typed, as in kcat.
				lit = append(lit, '\\', format[i])
			}
		case '%':
			if i+1 >= len(format) {
				return nil, fmt.Errorf("--format %q ends with a lone %%: use %%%% for a percent sign", format)
			}
			i++
			switch code := format[i]; code {
			case '%':
				lit = append(lit, '%')
			case 't', 'p', 'o', 'k', 'v', 'h', 'T', 'K', 'S':
				flush()
				f.parts = append(f.parts, formatPart{field: code})
			default:
				r, _ := utf8.DecodeRuneInString(format[i:])
				return nil, fmt.Errorf("--format: unknown code %%%c: known are %%t %%p %%o %%k %%v %%h %%T %%K %%S %%%%, or json", r)
			}
		default:
			lit = append(lit, c)
		}
	}
	flush()
	return f, nil
}

// Append renders r onto dst.
func (f *RecordFormatter) Append(dst []byte, r *kgo.Record) []byte {
	if f.json {
		return appendRecordJSON(dst, r)
	}
	for _, p := range f.parts {
		switch p.field {
		case 0:
			dst = append(dst, p.literal...)
		case 't':
			dst = append(dst, r.Topic...)
		case 'p':
			dst = strconv.AppendInt(dst, int64(r.Partition), 10)
		case 'o':
			dst = strconv.AppendInt(dst, r.Offset, 10)
		case 'k':
			dst = appendNullable(dst, r.Key)
		case 'v':
			dst = appendNullable(dst, r.Value)
		case 'h':
			for i, h := range r.Headers {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, h.Key...)
				dst = append(dst, '=')
				dst = appendNullable(dst, h.Value)
			}
		case 'T':
			dst = strconv.AppendInt(dst, r.Timestamp.UnixMilli(), 10)
		case 'K':
			dst = strconv.AppendInt(dst, nullableLen(r.Key), 10)
		case 'S':
			dst = strconv.AppendInt(dst, nullableLen(r.Value), 10)
		}
	}
	return dst
}

func appendNullable(dst, b []byte) []byte {
	if b == nil {
		return append(dst, nullText...)
	}
	return append(dst, b...)
}

// nullableLen is kcat's length: -1 for null.
func nullableLen(b []byte) int64 {
	if b == nil {
		return -1
	}
	return int64(len(b))
}

// jsonRecord is the shape of --format json; field names are the contract
// with scripts.
type jsonRecord struct {
	Topic         string       `json:"topic"`
	Partition     int32        `json:"partition"`
	Offset        int64        `json:"offset"`
	Timestamp     int64        `json:"timestamp"`
	TimestampType string       `json:"timestamp_type"`
	Key           *string      `json:"key"`
	KeyBase64     string       `json:"key_base64,omitempty"`
	Value         *string      `json:"value"`
	ValueBase64   string       `json:"value_base64,omitempty"`
	Headers       []jsonHeader `json:"headers"`
}

type jsonHeader struct {
	Key         string  `json:"key"`
	Value       *string `json:"value"`
	ValueBase64 string  `json:"value_base64,omitempty"`
}

// textOrBase64 keeps readable bytes readable: UTF-8 goes in the string
// field, anything else base64 in the companion field (string stays null).
func textOrBase64(b []byte) (*string, string) {
	if b == nil {
		return nil, ""
	}
	if utf8.Valid(b) {
		s := string(b)
		return &s, ""
	}
	return nil, base64.StdEncoding.EncodeToString(b)
}

func appendRecordJSON(dst []byte, r *kgo.Record) []byte {
	jr := jsonRecord{
		Topic: r.Topic, Partition: r.Partition, Offset: r.Offset,
		Timestamp: r.Timestamp.UnixMilli(), TimestampType: "CreateTime",
		Headers: make([]jsonHeader, 0, len(r.Headers)),
	}
	if r.Attrs.TimestampType() == 1 {
		jr.TimestampType = "LogAppendTime"
	}
	jr.Key, jr.KeyBase64 = textOrBase64(r.Key)
	jr.Value, jr.ValueBase64 = textOrBase64(r.Value)
	for _, h := range r.Headers {
		jh := jsonHeader{Key: h.Key}
		jh.Value, jh.ValueBase64 = textOrBase64(h.Value)
		jr.Headers = append(jr.Headers, jh)
	}
	buf := bytes.NewBuffer(dst)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(jr); err != nil {
		// Only strings and numbers are encoded; this cannot fail.
		panic(fmt.Sprintf("encode record: %v", err))
	}
	return buf.Bytes()
}
