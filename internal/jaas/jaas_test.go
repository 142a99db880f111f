package jaas

import (
	"errors"
	"testing"
)

func TestParseModule(t *testing.T) {
	lm, err := ParseModule(`org.apache.kafka.common.security.scram.ScramLoginModule REQUIRED
		username="al ice" password='p"a\'ss;=' tokenauth=true user_bob="a \"quoted\" pw"
		token=${file:/etc/kafka/secrets:tok} empty="";`)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"username": "al ice", "password": `p"a'ss;=`, "tokenauth": "true",
		"user_bob": `a "quoted" pw`, "token": "${file:/etc/kafka/secrets:tok}", "empty": ""}
	if lm.Class != "org.apache.kafka.common.security.scram.ScramLoginModule" || lm.Flag != "required" || len(lm.Options) != len(want) {
		t.Fatalf("%+v", lm)
	}
	for k, v := range want {
		if lm.Options[k] != v {
			t.Errorf("%s = %q, want %q", k, lm.Options[k], v)
		}
	}
	// A quoted ";" or "=" is a value, not punctuation.
	if lm, err := ParseModule(`X optional ";"="=";`); err != nil || lm.Options[";"] != "=" {
		t.Errorf("quoted punctuation: %+v %v", lm, err)
	}
	// Comments belong to files: in a line, // is part of a bare value.
	if lm, err := ParseModule(`X required url=http://h/x;`); err != nil || lm.Options["url"] != "http://h/x" {
		t.Errorf("slashes: %+v %v", lm, err)
	}
	for bad, want := range map[string]error{
		`X required username="a";Y required;`: ErrOneOnly,
		`X mandatory username="a";`:           ErrFlag,
		`X ;`:                                 ErrFlag,
		`X required username "a";`:            ErrOptions,
		`X required k=;`:                      ErrOptions,
		`X required a="b"`:                    ErrEnd,
		`;`:                                   ErrEnd,
		``:                                    ErrEnd,
		`X required username="a`:              nil,
		`X required username='a\'`:            nil,
	} {
		_, err := ParseModule(bad)
		if err == nil || (want != nil && !errors.Is(err, want)) {
			t.Errorf("%q: %v, want %v", bad, err, want)
		}
	}
}

func TestParseFile(t *testing.T) {
	f, err := ParseFile(`// comment
KafkaConnect {
  a.B required file="/x y/c.properties" debug=true;
  c.D Optional;
};
/* block
   comment */ KafkaServer { e.F sufficient user_admin="p;w" path=/a/b; };
Empty { };`)
	if err != nil {
		t.Fatal(err)
	}
	if m := f["KafkaConnect"]; len(m) != 2 || m[0].Class != "a.B" || m[0].Flag != "required" || m[0].Options["file"] != "/x y/c.properties" ||
		m[0].Options["debug"] != "true" || m[1].Class != "c.D" || m[1].Flag != "optional" || len(m[1].Options) != 0 {
		t.Errorf("KafkaConnect = %+v", m)
	}
	if m := f["KafkaServer"]; len(m) != 1 || m[0].Options["user_admin"] != "p;w" || m[0].Options["path"] != "/a/b" {
		t.Errorf("KafkaServer = %+v", m)
	}
	if m, ok := f["Empty"]; !ok || len(m) != 0 || len(f) != 3 {
		t.Errorf("sections = %+v", f)
	}
	for bad, want := range map[string]string{
		`KafkaConnect { x required file="a" `:   `section KafkaConnect, module x: expected key="value" options ending with ;`,
		`KafkaConnect { x required file="a"; }`: `expected ; after section KafkaConnect`,
		`KafkaConnect { x required file="a"; `:  `section KafkaConnect is not closed with };`,
		`KafkaConnect x required;`:              `expected { after KafkaConnect`,
		`KafkaConnect { x maybe; };`:            `section KafkaConnect, module x: the control flag after the class must be required, requisite, sufficient or optional`,
		`KafkaConnect { = };`:                   `section KafkaConnect: expected a login module class or }`,
		`{ };`:                                  `expected a section name, found "{"`,
		`A { b required; }; /* open`:            `unclosed /* comment`,
		`A { b required k='v; };`:               `unterminated '-quoted value`,
	} {
		_, err := ParseFile(bad)
		if err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %s", bad, err, want)
		}
	}
}
