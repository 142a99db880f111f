package protocol

import (
	"strings"
	"testing"
)

// Kafka's SslPrincipalMapperTest, case for case (clients/src/test/java/
// org/apache/kafka/common/security/ssl/SslPrincipalMapperTest.java), with
// the Java string literals unescaped once into Go raw strings.

func TestPrincipalMappingValidRules(t *testing.T) {
	for _, r := range []string{
		`DEFAULT`,
		`RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/`,
		`RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT`,
		`RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/`,
		`RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L`,
		`RULE:^cn=(.?),ou=(.?),dc=(.?),dc=(.?)$/$1@$2/U`,
		`RULE:^CN=([^,ADEFLTU,]+)(,.*|$)/$1/`,
		`RULE:^CN=([^,DEFAULT,]+)(,.*|$)/$1/`,
	} {
		if _, err := ParsePrincipalMappingRules(r); err != nil {
			t.Errorf("%s: %v", r, err)
		}
	}
}

func TestPrincipalMappingInvalidRules(t *testing.T) {
	for _, r := range []string{
		`default`,
		`DEFAUL`,
		`DEFAULT/L`,
		`DEFAULT/U`,
		`RULE:CN=(.*?),OU=ServiceUsers.*/$1`,
		`rule:^CN=(.*?),OU=ServiceUsers.*$/$1/`,
		`RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U`,
		`RULE:^CN=(.*?),OU=ServiceUsers.*$/L`,
		`RULE:^CN=(.*?),OU=ServiceUsers.*$/U`,
		`RULE:^CN=(.*?),OU=ServiceUsers.*$/LU`,
	} {
		if m, err := ParsePrincipalMappingRules(r); err == nil || !strings.HasPrefix(err.Error(), "Invalid rule: ") {
			t.Errorf("%s: accepted as %v (err %v)", r, m, err)
		}
	}
	// Kafka's message names the part left over.
	_, err := ParsePrincipalMappingRules(`DEFAULT/L`)
	if err == nil || err.Error() != "Invalid rule: `DEFAULT/L`, unmatched substring: `/L`" {
		t.Errorf("DEFAULT/L: %v", err)
	}
	// A pattern Go's regexp cannot compile is refused when parsed.
	if _, err := ParsePrincipalMappingRules(`RULE:^CN=(?=x)(.*)$/$1/`); err == nil || !strings.Contains(err.Error(), "Invalid rule") {
		t.Errorf("look-ahead pattern: %v", err)
	}
}

func TestPrincipalMapper(t *testing.T) {
	rules := strings.Join([]string{
		`RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L`,
		`RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L`,
		`RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U`,
		`RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U`,
		`DEFAULT`,
	}, ", ")
	m, err := ParsePrincipalMappingRules(rules)
	if err != nil {
		t.Fatal(err)
	}
	for dn, want := range map[string]string{
		"CN=Duke,OU=ServiceUsers,O=Org,C=US":        "duke",
		"CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US": "duke@sme",
		"cn=duke,ou=sme,dc=mycp,dc=com":             "DUKE@SME",
		"cN=duke,OU=JavaSoft,O=Sun Microsystems":    "DUKE",
		"OU=JavaSoft,O=Sun Microsystems,C=US":       "OU=JavaSoft,O=Sun Microsystems,C=US",
	} {
		if got, err := m.Name(dn); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", dn, got, err, want)
		}
	}
}

func TestPrincipalMappingRulesSplitting(t *testing.T) {
	for _, c := range []struct{ want, rules string }{
		{`[]`, ``},
		{`[DEFAULT]`, `DEFAULT`},
		{`[RULE:/]`, `RULE://`},
		{`[RULE:/.*]`, `RULE:/.*/`},
		{`[RULE:/.*/L]`, `RULE:/.*/L`},
		{`[RULE:/, DEFAULT]`, `RULE://,DEFAULT`},
		{`[RULE:/, DEFAULT]`, `  RULE:// ,  DEFAULT  `},
		{`[RULE:   /     , DEFAULT]`, `  RULE:   /     / ,  DEFAULT  `},
		{`[RULE:  /     /U, DEFAULT]`, `  RULE:  /     /U   ,DEFAULT  `},
		{`[RULE:([A-Z]*)/$1/U, RULE:([a-z]+)/$1, DEFAULT]`, `  RULE:([A-Z]*)/$1/U   ,RULE:([a-z]+)/$1/,   DEFAULT  `},
		// empty rules are ignored
		{`[]`, `,   , , ,      , , ,   `},
		{`[RULE:/, DEFAULT]`, `,,RULE://,,,DEFAULT,,`},
		{`[RULE: /   , DEFAULT]`, `,  , RULE: /   /    ,,,   DEFAULT, ,   `},
		{`[RULE:   /  /U, DEFAULT]`, `     ,  , RULE:   /  /U    ,,  ,DEFAULT, ,`},
		// escape sequences
		{`[RULE:\/\\\(\)\n\t/\/\/]`, `RULE:\/\\\(\)\n\t/\/\//`},
		{`[RULE:\**\/+/*/L, RULE:\/*\**/**]`, `RULE:\**\/+/*/L,RULE:\/*\**/**/`},
		// rules rule
		{`[RULE:,RULE:,/,RULE:,\//U, RULE:,/RULE:,, RULE:,RULE:,/L,RULE:,/L, RULE:, DEFAULT, /DEFAULT, DEFAULT]`,
			`RULE:,RULE:,/,RULE:,\//U,RULE:,/RULE:,/,RULE:,RULE:,/L,RULE:,/L,RULE:, DEFAULT, /DEFAULT/,DEFAULT`},
	} {
		m, err := ParsePrincipalMappingRules(c.rules)
		if err != nil {
			t.Errorf("%q: %v", c.rules, err)
			continue
		}
		if got, want := m.String(), "SslPrincipalMapper(rules = "+c.want+")"; got != want {
			t.Errorf("%q:\n got %s\nwant %s", c.rules, got, want)
		}
	}
}

func TestPrincipalMappingCommaWithWhitespace(t *testing.T) {
	m, err := ParsePrincipalMappingRules(`RULE:^CN=((\\, *|\w)+)(,.*|$)/$1/,DEFAULT`)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := m.Name(`CN=Tkac\, Adam,OU=ITZ,DC=geodis,DC=cz`); err != nil || got != `Tkac\, Adam` {
		t.Fatalf("%q, %v", got, err)
	}
}

// Beyond Kafka's test: no rule applying is an error (Kafka's
// NoMatchingRule, which fails the connection); replacements behave as
// Java's (escapes, $n beyond the groups kept literally); a nil mapper is
// DEFAULT.
func TestPrincipalMappingApply(t *testing.T) {
	m, _ := ParsePrincipalMappingRules(`RULE:^CN=([a-z]+),O=(.*)$/$2-$1/`)
	if _, err := m.Name("CN=Alice,O=x"); err == nil || !strings.HasPrefix(err.Error(), "No rules apply to CN=Alice,O=x, rules [RULE:^CN=([a-z]+),O=(.*)$/$2-$1]") {
		t.Errorf("no rule applies: %v", err)
	}
	for _, c := range []struct{ rules, dn, want string }{
		{`RULE:^CN=([a-z]+),O=(.*)$/$2-$1/`, "CN=bob,O=acme", "acme-bob"},
		{`RULE:^CN=([a-z]+)$/$1\$$9/`, "CN=bob", "bob$$9"},
		{`RULE:^CN=([a-z]+)$/$12/`, "CN=bob", "bob2"},
		{`RULE:^CN=(?P<user>[a-z]+)$/${user}@x/`, "CN=bob", "bob@x"},
		{`RULE:^CN=[a-z]+$/static/U`, "CN=bob", "STATIC"},
		{`RULE:CN=([a-z]+)/$1/,DEFAULT`, "OU=x,CN=bob", "OU=x,CN=bob"}, // matches part of the DN only: not applied
	} {
		m, err := ParsePrincipalMappingRules(c.rules)
		if err != nil {
			t.Fatalf("%s: %v", c.rules, err)
		}
		if got, err := m.Name(c.dn); err != nil || got != c.want {
			t.Errorf("%s on %s: %q, %v; want %q", c.rules, c.dn, got, err, c.want)
		}
	}
	var none *PrincipalMapper
	if got, err := none.Name("CN=x"); err != nil || got != "CN=x" {
		t.Errorf("nil mapper: %q, %v", got, err)
	}
}
