package protocol

import (
	"strings"
	"testing"
)

// The parsing itself is tested in internal/jaas; this tests the broker's
// reading of it: PLAIN users, and errors that name the setting without
// showing a password.
func TestParseJAAS(t *testing.T) {
	j, err := ParseJAAS(`org.apache.kafka.common.security.plain.PlainLoginModule required
		username="admin" password="admin-secret" user_admin="admin-secret" user_alice="a \"quoted\" pw" user_="x";`)
	if err != nil {
		t.Fatal(err)
	}
	users := PlainUsersFromJAAS(j)
	if j.LoginModule != "org.apache.kafka.common.security.plain.PlainLoginModule" || j.Flag != "required" || j.Options["username"] != "admin" ||
		users["alice"] != `a "quoted" pw` || users["admin"] != "admin-secret" || len(users) != 2 {
		t.Fatalf("parsed %+v users %v", j, users)
	}
	for _, bad := range []string{`M required a="TOPSECRET"`, `M maybe a="TOPSECRET";`, `M required a "TOPSECRET";`, `M required a="TOPSECRET;`} {
		_, err := ParseJAAS(bad)
		if err == nil || !strings.HasPrefix(err.Error(), "sasl.jaas.config") || strings.Contains(err.Error(), "TOPSECRET") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
