package transforms_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/plugins"
	_ "github.com/fjordhq/fjord/transforms"
	"github.com/fjordhq/fjord/transforms/transformtest"
)

// goldenLine is one line of testdata/golden/kafka.jsonl: what Kafka
// Connect 4.4's transformation did with one record (or its config).
type goldenLine struct {
	Case        string                    `json:"case"`
	Class       string                    `json:"class"`
	Config      map[string]string         `json:"config"`
	ConfigError *string                   `json:"configError"`
	Set         string                    `json:"set"`
	Index       int                       `json:"index"`
	Input       *transformtest.RecordJSON `json:"input"`
	Output      json.RawMessage           `json:"output"`
	Test        *bool                     `json:"test"`
	Error       *string                   `json:"error"`
}

// knownDifferences are the golden cases where Fjord deliberately says
// something else than Kafka, with the reason. Each must still fail (or
// succeed) where Kafka does; only the message may differ.
var knownDifferences = map[string]string{
	"insert-static-novalue": "Kafka prints InsertionSpec's Object.toString with its identity hash",
	"regex-bad":             "Go's regexp reports syntax errors in its own words",
	"n-ts-string-2digit":    "Java dates before the 1582 Gregorian cutover are Julian; Go's are proleptic Gregorian",
	"dbz-bad-mode":          "Debezium logs the reason and throws \"Unable to validate config.\"; Fjord says which value is wrong",
}

func TestGoldenKafka(t *testing.T) { runGoldenFile(t, "testdata/golden/kafka.jsonl", 300) }

// TestGoldenDebezium replays Debezium 3.6.1's ExtractNewRecordState.
func TestGoldenDebezium(t *testing.T) { runGoldenFile(t, "testdata/golden/debezium.jsonl", 60) }

func runGoldenFile(t *testing.T, path string, min int) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	lines := 0
	for sc.Scan() {
		var g goldenLine
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			t.Fatalf("line %d: %v", lines+1, err)
		}
		lines++
		name := g.Case
		if g.Input != nil {
			name += "/" + g.Set + "/" + string(rune('0'+g.Index))
		}
		t.Run(name, func(t *testing.T) { checkGolden(t, &g) })
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if lines < min {
		t.Fatalf("only %d golden lines in %s; regenerate with testdata/golden/generate.sh", lines, path)
	}
}

func checkGolden(t *testing.T, g *goldenLine) {
	p, ok := plugins.Lookup(g.Class)
	if !ok {
		t.Fatalf("no plugin %s", g.Class)
	}
	inst := p.New()
	var cerr error
	switch x := inst.(type) {
	case connect.Transformation:
		cerr = x.Configure(g.Config)
	case connect.Predicate:
		cerr = x.Configure(g.Config)
	}
	if g.ConfigError != nil {
		if cerr == nil {
			t.Fatalf("config %v accepted; Kafka: %s", g.Config, *g.ConfigError)
		}
		if _, known := knownDifferences[g.Case]; !known && firstMessage(cerr) != *g.ConfigError {
			t.Fatalf("config error\n got: %s\nwant: %s", firstMessage(cerr), *g.ConfigError)
		}
		return
	}
	if cerr != nil {
		t.Fatalf("config %v refused: %v", g.Config, cerr)
	}
	in, err := transformtest.DecodeRecord(g.Input)
	if err != nil {
		t.Fatalf("decode input: %v", err)
	}
	before, err := transformtest.EncodeRecord(in)
	if err != nil {
		t.Fatal(err)
	}
	if pred, ok := inst.(connect.Predicate); ok {
		if got := pred.Test(in); got != *g.Test {
			t.Fatalf("test = %v, Kafka %v", got, *g.Test)
		}
		return
	}
	out, err := inst.(connect.Transformation).Apply(in)
	after, _ := transformtest.EncodeRecord(in)
	if !sameJSON(t, before, after) {
		t.Errorf("input record modified:\nbefore %s\nafter  %s", mustJSON(before), mustJSON(after))
	}
	var got []byte
	if err == nil && out != nil {
		// The generator writes outputs with JsonConverter; a record it
		// cannot write is an error in the golden file, so one we cannot
		// write must be the same error.
		rj, encErr := transformtest.EncodeRecord(out)
		if encErr != nil {
			err = encErr
			if inner := errors.Unwrap(encErr); inner != nil {
				err = inner // drop EncodeRecord's "value: " context
			}
		} else {
			got = mustJSON(rj)
		}
	}
	if g.Error != nil {
		if err == nil {
			t.Fatalf("no error; Kafka: %s (output %s)", *g.Error, encode(t, out))
		}
		if _, known := knownDifferences[g.Case]; !known && err.Error() != *g.Error {
			t.Fatalf("error\n got: %s\nwant: %s", err, *g.Error)
		}
		return
	}
	if err != nil {
		t.Fatalf("error %v; Kafka output %s", err, g.Output)
	}
	if string(g.Output) == "null" || len(g.Output) == 0 {
		if out != nil {
			t.Fatalf("record kept; Kafka dropped it: %s", encode(t, out))
		}
		return
	}
	if out == nil {
		t.Fatalf("record dropped; Kafka: %s", g.Output)
	}
	if reason, known := knownDifferences[g.Case]; known {
		t.Logf("output not compared: %s", reason)
		return
	}
	eq, err := transformtest.JSONEqual(got, g.Output)
	if err != nil {
		t.Fatal(err)
	}
	if !eq {
		t.Fatalf("output differs\n got: %s\nwant: %s", got, g.Output)
	}
}

func firstMessage(err error) string {
	var ce *connect.ConfigError
	if errors.As(err, &ce) && len(ce.Problems) > 0 {
		return ce.Problems[0].Message
	}
	return err.Error()
}

func encode(t *testing.T, r *connect.Record) []byte {
	t.Helper()
	if r == nil {
		return []byte("null")
	}
	rj, err := transformtest.EncodeRecord(r)
	if err != nil {
		t.Fatalf("encode output: %v", err)
	}
	return mustJSON(rj)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func sameJSON(t *testing.T, a, b any) bool {
	eq, err := transformtest.JSONEqual(mustJSON(a), mustJSON(b))
	if err != nil {
		t.Fatal(err)
	}
	return eq
}
