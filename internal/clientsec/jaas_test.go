package clientsec

import "testing"

func TestParseJAAS(t *testing.T) {
	lm, err := ParseJAAS(`org.apache.kafka.common.security.scram.ScramLoginModule required
		username="al ice" password='p"a\'ss;=' tokenauth=true;`)
	if err != nil {
		t.Fatal(err)
	}
	if lm.Class != "org.apache.kafka.common.security.scram.ScramLoginModule" || lm.Flag != "required" ||
		lm.Options["username"] != "al ice" || lm.Options["password"] != `p"a'ss;=` || lm.Options["tokenauth"] != "true" {
		t.Fatalf("%+v", lm)
	}
	for _, bad := range []string{
		`X required username="a";Y required;`,
		`X mandatory username="a";`,
		`X required username "a";`,
		`X required username="a`,
	} {
		if _, err := ParseJAAS(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
