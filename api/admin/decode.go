package admin

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/linkedin/goavro/v2"
)

// Data is a decoded key, value or header value.
type data struct {
	Format string `json:"format"`
	// Value is a JSON value for json and avro (Avro's JSON encoding),
	// a string otherwise.
	Value    any    `json:"value"`
	SchemaID *int32 `json:"schema_id,omitempty"`
	Subject  string `json:"subject,omitempty"`
	Size     int    `json:"size"`
	// Error says why the format asked for could not be used (the bytes
	// are then shown as hex).
	Error string `json:"error,omitempty"`
}

// decodeFormats are the key_format/value_format query values.
var decodeFormats = map[string]bool{"auto": true, "json": true, "avro": true, "text": true, "hex": true, "base64": true}

// decoder decodes one request's messages. Registry schemas are cached
// for the process (an id names one schema forever in a registry); ids
// the registry could not give are remembered for this request only, so
// a page of 500 records does not ask 500 times for a missing schema.
type decoder struct {
	ctx      context.Context
	registry string
	http     *http.Client
	missing  map[int32]error
}

func (s *Server) newDecoder(ctx context.Context) *decoder {
	return &decoder{ctx: ctx, registry: strings.TrimSuffix(s.opts.RegistryURL, "/"), http: s.http, missing: map[int32]error{}}
}

// decode shows b in format: auto picks Avro for the Confluent wire
// format (magic byte 0, 4-byte schema id) when a registry is set, then
// JSON, then printable UTF-8 text, else hex. nil stays nil (a null key,
// value or header).
func (d *decoder) decode(b []byte, format string) *data {
	if b == nil {
		return nil
	}
	out := &data{Size: len(b)}
	switch format {
	case "", "auto":
		if d.registry != "" && isConfluentFramed(b) {
			if err := d.avro(b, out); err == nil {
				return out
			}
		}
		switch {
		case utf8.Valid(b) && json.Valid(b):
			out.Format, out.Value = "json", json.RawMessage(b)
		case isPrintable(b):
			out.Format, out.Value = "text", string(b)
		default:
			out.Format, out.Value = "hex", hex.EncodeToString(b)
		}
	case "avro":
		if err := d.avro(b, out); err != nil {
			out.Format, out.Value, out.Error = "hex", hex.EncodeToString(b), err.Error()
		}
	case "json":
		if utf8.Valid(b) && json.Valid(b) {
			out.Format, out.Value = "json", json.RawMessage(b)
		} else {
			out.Format, out.Value, out.Error = "hex", hex.EncodeToString(b), "not valid JSON"
		}
	case "text":
		// Asked for text: show it, invalid UTF-8 sequences replaced.
		out.Format, out.Value = "text", strings.ToValidUTF8(string(b), "\uFFFD")
	case "base64":
		out.Format, out.Value = "base64", base64.StdEncoding.EncodeToString(b)
	default:
		out.Format, out.Value = "hex", hex.EncodeToString(b)
	}
	return out
}

// isConfluentFramed reports whether b starts like a Confluent
// serializer's output: magic byte 0, then a 4-byte big-endian schema id.
func isConfluentFramed(b []byte) bool { return len(b) >= 5 && b[0] == 0 }

// isPrintable: valid UTF-8 with no control characters but tabs and
// line breaks.
func isPrintable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if !unicode.IsPrint(r) && !unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

// avro decodes a Confluent-framed Avro record into out.
func (d *decoder) avro(b []byte, out *data) error {
	if d.registry == "" {
		return errors.New("no schema registry is configured on this node to decode Avro")
	}
	if !isConfluentFramed(b) {
		return errors.New("not in the Confluent wire format (magic byte 0 and a 4-byte schema id)")
	}
	id := int32(binary.BigEndian.Uint32(b[1:5]))
	sc, err := d.schema(id)
	if err != nil {
		return err
	}
	native, rest, err := sc.codec.NativeFromBinary(b[5:])
	if err != nil {
		return fmt.Errorf("not Avro of schema %d: %w", id, err)
	}
	if len(rest) > 0 {
		return fmt.Errorf("not Avro of schema %d: %d bytes left after the record", id, len(rest))
	}
	text, err := sc.codec.TextualFromNative(nil, native)
	if err != nil {
		return fmt.Errorf("Avro record of schema %d has no JSON form: %w", id, err)
	}
	out.Format, out.Value, out.SchemaID, out.Subject = "avro", json.RawMessage(text), &id, sc.subject
	return nil
}

// avroSchema is a registry schema ready to decode.
type avroSchema struct {
	codec   *goavro.Codec
	subject string // the first subject that registered it, if known
}

// schemas caches parsed schemas by registry URL and id.
var schemas sync.Map // string → *avroSchema

func (d *decoder) schema(id int32) (*avroSchema, error) {
	key := d.registry + "#" + strconv.Itoa(int(id))
	if sc, ok := schemas.Load(key); ok {
		return sc.(*avroSchema), nil
	}
	if err, ok := d.missing[id]; ok {
		return nil, err
	}
	sc, err := d.fetchSchema(id)
	if err != nil {
		d.missing[id] = err
		return nil, err
	}
	schemas.Store(key, sc)
	return sc, nil
}

// fetchSchema reads schema id from the registry
// (GET /schemas/ids/{id}, then its subjects for display).
func (d *decoder) fetchSchema(id int32) (*avroSchema, error) {
	var s struct {
		Schema     string `json:"schema"`
		SchemaType string `json:"schemaType"`
	}
	if err := d.get(fmt.Sprintf("/schemas/ids/%d", id), &s); err != nil {
		return nil, fmt.Errorf("schema %d: %w", id, err)
	}
	if s.SchemaType != "" && s.SchemaType != "AVRO" {
		return nil, fmt.Errorf("schema %d is %s, not Avro", id, s.SchemaType)
	}
	codec, err := goavro.NewCodec(s.Schema)
	if err != nil {
		return nil, fmt.Errorf("schema %d from the registry does not parse: %w", id, err)
	}
	sc := &avroSchema{codec: codec}
	var subjects []string
	if err := d.get(fmt.Sprintf("/schemas/ids/%d/subjects", id), &subjects); err == nil && len(subjects) > 0 {
		sc.subject = subjects[0]
	}
	return sc, nil
}

// get reads a registry resource into v.
func (d *decoder) get(path string, v any) error {
	req, err := http.NewRequestWithContext(d.ctx, http.MethodGet, d.registry+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/vnd.schemaregistry.v1+json, application/json")
	resp, err := d.http.Do(req)
	if err != nil {
		return fmt.Errorf("schema registry %s unreachable: %w", d.registry, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("schema registry answered %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return json.Unmarshal(body, v)
}
