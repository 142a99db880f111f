package jaas

import (
	"strings"
	"testing"
)

// FuzzJAAS: sasl.jaas.config and JAAS files come from configuration files
// and REST requests. Both parsers either accept or fail, never panic or
// hang; what they accept is well formed; and no sasl.jaas.config error
// quotes an option value.
func FuzzJAAS(f *testing.F) {
	for _, s := range []string{
		`org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";`,
		`org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="b c" user_a="x\"y";`,
		`X required a='b\'c' d=e;`, `X optional;`, `M required k=v k2='q';`, `M required k=;`,
		`"unterminated`, `"`, `X required a=`, `;;;`,
		`KafkaConnect { a.B required file="/x"; };`,
		`/* c */ A { b required d='e\'f'; g optional; }; // t`,
		`A { b`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if lm, err := ParseModule(s); err == nil {
			checkModule(t, s, lm)
		}
		if _, err := ParseModule(s + ` password="FUZZSECRET";`); err != nil && strings.Contains(err.Error(), "FUZZSECRET") {
			t.Fatalf("error quotes a value: %v", err)
		}
		if file, err := ParseFile(s); err == nil {
			for _, mods := range file {
				for _, lm := range mods {
					checkModule(t, s, lm)
				}
			}
		}
	})
}

func checkModule(t *testing.T, s string, lm LoginModule) {
	t.Helper()
	if lm.Class == "" && !strings.Contains(s, `""`) && !strings.Contains(s, `''`) {
		t.Fatalf("accepted %q with no class: %+v", s, lm)
	}
	if lm.Options == nil {
		t.Fatalf("accepted %q with nil options", s)
	}
	switch lm.Flag {
	case "required", "requisite", "sufficient", "optional":
	default:
		t.Fatalf("accepted %q with flag %q", s, lm.Flag)
	}
}
