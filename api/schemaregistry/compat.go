package schemaregistry

import (
	"fmt"
	"strings"

	"github.com/fjordhq/fjord/converters/avro/avsc"
)

// Compatibility levels, as Confluent's CompatibilityLevel.
const (
	None               = "NONE"
	Backward           = "BACKWARD"
	BackwardTransitive = "BACKWARD_TRANSITIVE"
	Forward            = "FORWARD"
	ForwardTransitive  = "FORWARD_TRANSITIVE"
	Full               = "FULL"
	FullTransitive     = "FULL_TRANSITIVE"
)

func validLevel(l string) bool {
	switch l {
	case None, Backward, BackwardTransitive, Forward, ForwardTransitive, Full, FullTransitive:
		return true
	}
	return false
}

// prior is an earlier version a new schema is checked against; its
// schema is parsed only when a check needs it.
type prior struct {
	version int
	text    string
}

// checkCompatibility returns Confluent's error messages for newSchema
// against the earlier versions (oldest first) under level; none when
// compatible. BACKWARD: the new schema reads data of the latest;
// FORWARD: the latest reads data of the new one; FULL: both; the
// transitive forms check every earlier version, newest first, and stop
// at the first that fails, as Confluent's validateAll does.
func checkCompatibility(level string, newSchema *avsc.Schema, previous []prior, parse func(string) (*avsc.Schema, error)) ([]string, error) {
	if level == None || len(previous) == 0 {
		return nil, nil
	}
	transitive := strings.HasSuffix(level, "_TRANSITIVE")
	base := strings.TrimSuffix(level, "_TRANSITIVE")
	var msgs []string
	for i := len(previous) - 1; i >= 0; i-- {
		old := previous[i]
		oldSchema, err := parse(old.text)
		if err != nil {
			return nil, err
		}
		switch base {
		case Backward:
			msgs = differences(avsc.Compatible(newSchema, oldSchema), "new", "old", old, true)
		case Forward:
			msgs = differences(avsc.Compatible(oldSchema, newSchema), "old", "new", old, true)
		case Full:
			msgs = differences(avsc.Compatible(oldSchema, newSchema), "old", "new", old, false)
			msgs = append(msgs, differences(avsc.Compatible(newSchema, oldSchema), "new", "old", old, true)...)
		}
		if len(msgs) > 0 || !transitive {
			break
		}
	}
	if len(msgs) > 0 {
		msgs = append(msgs, fmt.Sprintf("{validateFields: 'false', compatibility: '%s'}", level))
	}
	return msgs, nil
}

// maxSchemaForLogging caps the old schema quoted in a message, as
// Confluent's MAX_SCHEMA_SIZE_FOR_LOGGING.
const maxSchemaForLogging = 10 * 1024

// differences formats incompatibilities as Confluent's Difference, with
// its reader/writer wording, followed by the old version and schema.
func differences(in []avsc.Incompatibility, reader, writer string, old prior, appendSchema bool) []string {
	if len(in) == 0 {
		return nil
	}
	out := make([]string, 0, len(in)+2)
	for _, d := range in {
		var desc string
		switch d.Type {
		case avsc.FixedSizeMismatch:
			desc = fmt.Sprintf("The size of FIXED type field at path '%s' in the %s schema does not match with the %s schema", d.Location, reader, writer)
		case avsc.TypeMismatch:
			desc = fmt.Sprintf("The type (path '%s') of a field in the %s schema does not match with the %s schema", d.Location, reader, writer)
		case avsc.NameMismatch:
			desc = fmt.Sprintf("The name of the schema has changed (path '%s')", d.Location)
		case avsc.MissingEnumSymbols:
			desc = fmt.Sprintf("The %s schema is missing enum symbols '%s' at path '%s' in the %s schema", reader, d.Message, d.Location, writer)
		case avsc.MissingUnionBranch:
			desc = fmt.Sprintf("The %s schema is missing a type inside a union field at path '%s' in the %s schema", reader, d.Location, writer)
		case avsc.ReaderFieldMissingDefaultValue:
			desc = fmt.Sprintf("The field '%s' at path '%s' in the %s schema has no default value and is missing in the %s schema", d.Message, d.Location, reader, writer)
		}
		out = append(out, fmt.Sprintf("{errorType:'%s', description:'%s', additionalInfo:'%s'}", d.Type, desc, d.Message))
	}
	if appendSchema {
		out = append(out, fmt.Sprintf("{oldSchemaVersion: %d}", old.version))
		if len(old.text) <= maxSchemaForLogging {
			out = append(out, fmt.Sprintf("{oldSchema: '%s'}", old.text))
		} else {
			out = append(out, fmt.Sprintf("{oldSchema: <truncated> '%s...'}", old.text[:maxSchemaForLogging]))
		}
	}
	return out
}
