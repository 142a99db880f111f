package clientsec

import (
	"strings"
	"testing"
)

// ParseJAAS takes text from configuration files and REST requests: it
// must never panic, and an error must never quote an option value.
func FuzzParseJAAS(f *testing.F) {
	for _, s := range []string{
		`org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";`,
		`X required a='b\'c' d=e;`, `X optional;`, `"`, `X required a=`, `;;;`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lm, err := ParseJAAS(s + ` password="FUZZSECRET";`)
		if err != nil && strings.Contains(err.Error(), "FUZZSECRET") {
			t.Fatalf("error quotes a value: %v", err)
		}
		if err == nil && lm.Options == nil {
			t.Fatal("nil options")
		}
	})
}
