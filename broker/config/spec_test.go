package config

import (
	"testing"

	"github.com/fjordhq/fjord/internal/kafkaref"
)

// TestValuesAgainstKafka feeds the ~4900 (key, value) cases of
// internal/kafkaref's validation probe through our parsing and validators
// and expects Kafka's verdict: the same canonical value, or the same
// error message word for word.
func TestValuesAgainstKafka(t *testing.T) {
	cases, err := kafkaref.LoadValidationCases()
	if err != nil {
		t.Fatal(err)
	}
	var checked int
	for _, c := range cases {
		tab := brokerTable
		if c.Resource == "topic" {
			tab = topicTable
		}
		s, ok := tab.byName[c.Name]
		if !ok {
			t.Errorf("%s key %s: Kafka knows it, we do not", c.Resource, c.Name)
			continue
		}
		v, err := s.parse(c.Value)
		if s.Type == TypeClass && c.Value != "" && !c.OK {
			// Intentional: Kafka loads the class; we cannot, so any
			// non-empty class name is accepted.
			if err != nil {
				t.Errorf("%s=%q: class names are accepted, got %v", c.Name, c.Value, err)
			}
			continue
		}
		checked++
		switch {
		case c.OK && err != nil:
			t.Errorf("%s %s=%q: Kafka accepts it (%v), we say %v", c.Resource, c.Name, c.Value, deref(c.Canonical), err)
		case !c.OK && err == nil:
			t.Errorf("%s %s=%q: Kafka says %q, we accept it as %q", c.Resource, c.Name, c.Value, c.Error, canonical(s.Type, v))
		case !c.OK && err.Error() != c.Error:
			t.Errorf("%s %s=%q: message\n got %q\nwant %q", c.Resource, c.Name, c.Value, err.Error(), c.Error)
		case c.OK && s.Type != TypePassword && canonical(s.Type, v) != deref(c.Canonical):
			t.Errorf("%s %s=%q: canonical %q, Kafka %q", c.Resource, c.Name, c.Value, canonical(s.Type, v), deref(c.Canonical))
		}
	}
	if checked < 4000 {
		t.Fatalf("only %d cases checked; the probe file looks truncated", checked)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}
