package clientsec

import (
	"strings"
	"testing"
)

// The parsing itself is tested in internal/jaas; these test how a
// client's sasl.jaas.config becomes its SASL mechanism.
func TestClientSASLFromJAAS(t *testing.T) {
	m, err := clientSASL(map[string]string{"sasl.mechanism": "SCRAM-SHA-512",
		"sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username="al ice" password='p"a\'ss;=';`})
	if err != nil || m.Name() != "SCRAM-SHA-512" {
		t.Fatalf("SCRAM: %v %v", m, err)
	}
	for jaasLine, want := range map[string]string{
		`X required username="a";Y required password="TOPSECRET";`: "exactly one login module",
		`X mandatory username="a" password="TOPSECRET";`:           "control flag",
		`X required username "a" password="TOPSECRET";`:            "options must be key=value",
		`X required password="TOPSECRET`:                           "unterminated",
		`X required password="TOPSECRET"`:                          "must end with ';'",
	} {
		_, err := clientSASL(map[string]string{"sasl.mechanism": "PLAIN", "sasl.jaas.config": jaasLine})
		if err == nil || !strings.HasPrefix(err.Error(), "sasl.jaas.config is not a valid JAAS login module line (") ||
			!strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "TOPSECRET") {
			t.Errorf("%q: %v (want %q, no password)", jaasLine, err, want)
		}
	}
}
