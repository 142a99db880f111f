package connectapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/fjordhq/fjord/connect/herder"
)

// maxBody bounds request bodies: connector configs are small, and a
// runaway client must not make the worker buffer gigabytes.
const maxBody = 16 << 20

// encode writes v as Kafka Connect (Jackson) does: no HTML escaping, no
// trailing newline.
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// writeJSON answers code with v as its JSON body.
func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := encode(v)
	if err != nil {
		code = http.StatusInternalServerError
		b, _ = encode(herder.Error{Code: code, Message: fmt.Sprintf("encode response: %v", err)})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(b)
}

// writeError answers with Kafka Connect's error body. Kafka sends 404 and
// 405 for unknown paths and methods without a Content-Type; everything
// else is application/json.
func writeError(w http.ResponseWriter, e *herder.Error) {
	code := e.Code
	if code == 0 {
		code = http.StatusInternalServerError
	}
	writeJSON(w, code, herder.Error{Code: code, Message: e.Message})
}

// errorOf turns a herder error into the REST error Kafka would answer:
// *herder.Error as it is, a timeout as Kafka's "Request timed out" (500),
// anything else 500 with its message.
func errorOf(err error) *herder.Error {
	var he *herder.Error
	switch {
	case errors.As(err, &he):
		return he
	case errors.Is(err, context.DeadlineExceeded):
		return herder.Errorf(http.StatusInternalServerError, "Request timed out")
	case errors.Is(err, context.Canceled):
		return herder.Errorf(http.StatusInternalServerError, "Request interrupted")
	}
	return herder.Errorf(http.StatusInternalServerError, "%s", err.Error())
}

// badRequest is a 400 for input the REST layer refuses itself. Kafka
// answers malformed JSON with 500 and Jackson's parser message; Fjord
// answers 400, as the input is the client's error, with a message that
// says what was wrong.
func badRequest(format string, args ...any) *herder.Error {
	return herder.Errorf(http.StatusBadRequest, format, args...)
}

// readBody reads the request body (bounded).
func readBody(r *http.Request) ([]byte, *herder.Error) {
	if r.Body == nil {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, badRequest("Cannot read request body: %v", err)
	}
	if len(b) > maxBody {
		return nil, herder.Errorf(http.StatusRequestEntityTooLarge, "Request body is larger than %d bytes", maxBody)
	}
	return b, nil
}

// requireJSON enforces Kafka's @Consumes(application/json): a body with
// another (or no) media type is refused with 415.
func requireJSON(r *http.Request) *herder.Error {
	ct := r.Header.Get("Content-Type")
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	if mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")) {
		return nil
	}
	return herder.Errorf(http.StatusUnsupportedMediaType, "HTTP 415 Unsupported Media Type")
}

// jsonSyntax describes a decoding error the way a user can act on.
func jsonSyntax(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "unexpected end of JSON input"
	case errors.As(err, &se):
		return fmt.Sprintf("%v (at byte %d)", se, se.Offset)
	case errors.As(err, &te):
		if te.Field != "" {
			return fmt.Sprintf("cannot use a JSON %s for %q (at byte %d)", te.Value, te.Field, te.Offset)
		}
		return fmt.Sprintf("cannot use a JSON %s here, expected %s (at byte %d)", te.Value, jsonKind(te.Type.Kind().String()), te.Offset)
	}
	return err.Error()
}

func jsonKind(goKind string) string {
	switch goKind {
	case "map", "struct":
		return "an object"
	case "slice", "array":
		return "an array"
	case "string":
		return "a string"
	}
	return goKind
}

// decodeStrict decodes one JSON value into v and refuses trailing data.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	// More() is false before a stray "}" or "]": read on to the end.
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}

// decodeConfig decodes a connector config object as Kafka (Jackson) reads
// a Map<String, String>: strings as they are, numbers and booleans as
// their JSON text ("tasks.max": 1 is "1"), nulls reported separately (the
// validation turns them into per-key errors). Objects and arrays are
// refused.
func decodeConfig(raw json.RawMessage) (cfg map[string]string, nulls []string, err error) {
	var m map[string]json.RawMessage
	if err := decodeStrict(raw, &m); err != nil {
		return nil, nil, err
	}
	if m == nil {
		return nil, nil, nil
	}
	cfg = make(map[string]string, len(m))
	for k, v := range m {
		s, isNull, err := configValue(v)
		if err != nil {
			return nil, nil, fmt.Errorf("value of %q: %w", k, err)
		}
		if isNull {
			nulls = append(nulls, k)
			continue
		}
		cfg[k] = s
	}
	return cfg, nulls, nil
}

// decodePatch decodes a PATCH config body: nulls delete keys.
func decodePatch(raw []byte) (map[string]*string, error) {
	var m map[string]json.RawMessage
	if err := decodeStrict(raw, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("expected a JSON object")
	}
	out := make(map[string]*string, len(m))
	for k, v := range m {
		s, isNull, err := configValue(v)
		if err != nil {
			return nil, fmt.Errorf("value of %q: %w", k, err)
		}
		if isNull {
			out[k] = nil
			continue
		}
		out[k] = &s
	}
	return out, nil
}

func configValue(v json.RawMessage) (s string, isNull bool, err error) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "", false, errors.New("missing value")
	}
	switch v[0] {
	case 'n':
		return "", true, nil
	case '"':
		if err := json.Unmarshal(v, &s); err != nil {
			return "", false, err
		}
		return s, false, nil
	case 't', 'f':
		return string(v), false, nil
	case '{':
		return "", false, errors.New("expected a string, got an object")
	case '[':
		return "", false, errors.New("expected a string, got an array")
	}
	// A number: its text, as Jackson coerces it.
	var n json.Number
	if err := json.Unmarshal(v, &n); err != nil {
		return "", false, err
	}
	return n.String(), false, nil
}
