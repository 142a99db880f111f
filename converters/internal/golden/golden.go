// Package golden reads the cases.jsonl golden files
// converters/testdata/kafkagen/SimpleGolden.java writes from Kafka's
// StringConverter, ByteArrayConverter and number converters.
package golden

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
)

// Case is one conversion Kafka made: op "from" (Schema and Value dumps
// in, Output bytes out) or "to" (Input bytes in, Schema and Value dumps
// out), or the Error it raised.
type Case struct {
	Class  string            `json:"class"`
	Config map[string]string `json:"config"`
	Op     string            `json:"op"`
	Name   string            `json:"name"`
	Schema string            `json:"schema"`
	Value  string            `json:"value"`
	Input  *string           `json:"input"`
	Output *string           `json:"output"`
	Error  string            `json:"error"`
}

// InputBytes decodes Input (nil stays nil).
func (c Case) InputBytes() []byte { return decode(c.Input) }

// OutputBytes decodes Output (nil stays nil).
func (c Case) OutputBytes() []byte { return decode(c.Output) }

func decode(s *string) []byte {
	if s == nil {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(*s)
	if err != nil {
		panic(err)
	}
	return b
}

// Read reads a cases.jsonl file.
func Read(path string) ([]Case, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Case
	for i, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var c Case
		if err := json.Unmarshal(line, &c); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, i+1, err)
		}
		out = append(out, c)
	}
	return out, nil
}
