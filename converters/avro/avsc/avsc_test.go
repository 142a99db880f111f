package avsc

import (
	"encoding/json"
	"os"
	"slices"
	"testing"
)

// golden.json holds Apache Avro Java 1.12.0's answers for cases.json
// (testdata/javagen/gen.sh regenerates it): Schema.toString of each
// schema and checkReaderWriterCompatibility of each reader/writer pair.
type golden struct {
	Schemas []struct {
		In    string `json:"in"`
		Out   string `json:"out"`
		Error string `json:"error"`
	} `json:"schemas"`
	Compat []struct {
		Name              string `json:"name"`
		Reader            string `json:"reader"`
		Writer            string `json:"writer"`
		Incompatibilities []struct {
			Type     string `json:"type"`
			Location string `json:"location"`
			Message  string `json:"message"`
		} `json:"incompatibilities"`
	} `json:"compat"`
}

func loadGolden(t *testing.T) golden {
	t.Helper()
	b, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Schemas) == 0 || len(g.Compat) == 0 {
		t.Fatal("golden.json has no cases")
	}
	return g
}

func TestStringMatchesJavaToString(t *testing.T) {
	for _, c := range loadGolden(t).Schemas {
		s, err := Parse(c.In)
		if c.Error != "" {
			if err == nil {
				t.Errorf("Parse(%s) = %s, want an error (Java: %s)", c.In, s, c.Error)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%s): %v", c.In, err)
			continue
		}
		if got := s.String(); got != c.Out {
			t.Errorf("Parse(%s).String()\n got %s\nwant %s", c.In, got, c.Out)
		}
		// The canonical text parses back to itself.
		again, err := Parse(c.Out)
		if err != nil || again.String() != c.Out {
			t.Errorf("reparse of %s: %v, %v", c.Out, again, err)
		}
	}
}

func TestCompatibleMatchesJava(t *testing.T) {
	for _, c := range loadGolden(t).Compat {
		t.Run(c.Name, func(t *testing.T) {
			r, err := Parse(c.Reader)
			if err != nil {
				t.Fatal(err)
			}
			w, err := Parse(c.Writer)
			if err != nil {
				t.Fatal(err)
			}
			var got, want []Incompatibility
			got = Compatible(r, w)
			for _, i := range c.Incompatibilities {
				want = append(want, Incompatibility{Type: IncompatibilityType(i.Type), Location: i.Location, Message: i.Message})
			}
			if !slices.Equal(got, want) {
				t.Errorf("Compatible(reader, writer)\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestCanonicalForm(t *testing.T) {
	s, err := Parse(`{"type":"record","name":"User","namespace":"com.acme","doc":"x","fields":[
		{"name":"id","type":"long","default":1,"doc":"d"},
		{"name":"tags","type":{"type":"array","items":"string"}},
		{"name":"self","type":["null","User"]},
		{"name":"e","type":{"type":"enum","name":"E","symbols":["A"]}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"com.acme.User","type":"record","fields":[{"name":"id","type":"long"},{"name":"tags","type":{"type":"array","items":"string"}},{"name":"self","type":["null","com.acme.User"]},{"name":"e","type":{"name":"com.acme.E","type":"enum","symbols":["A"]}}]}`
	if got := s.Canonical(); got != want {
		t.Errorf("Canonical()\n got %s\nwant %s", got, want)
	}
}

func TestJavaDouble(t *testing.T) {
	for in, want := range map[float64]string{
		1: "1.0", 1.5: "1.5", 1e10: "1.0E10", 0.0001: "1.0E-4", 123456.75: "123456.75", 1e7: "1.0E7", -2.5e-7: "-2.5E-7", 0.001: "0.001",
	} {
		if got := javaDouble(in); got != want {
			t.Errorf("javaDouble(%v) = %s, want %s", in, got, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`"string"`, `{"type":"record","name":"R","fields":[{"name":"a","type":["null","R"]}]}`, `[1,`, `{"type":"enum","name":"E","symbols":["A"],"default":"A"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := Parse(text)
		if err != nil {
			return
		}
		out := s.String()
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("canonical %s of %q does not parse: %v", out, text, err)
		}
		if again.String() != out {
			t.Fatalf("canonical form not stable: %s then %s", out, again.String())
		}
		_ = s.Canonical()
		_ = Compatible(s, again)
	})
}
