package transforms_test

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/transforms"
	"github.com/fjordhq/fjord/transforms/transformtest"
)

func problems(t *testing.T, err error) map[string]string {
	t.Helper()
	var ce *connect.ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("want *connect.ConfigError, got %T %v", err, err)
	}
	out := map[string]string{}
	for _, p := range ce.Problems {
		out[p.Key] = p.Message
	}
	return out
}

func TestBuildChainAppliesInOrderWithPredicates(t *testing.T) {
	chain, err := transforms.BuildChain(map[string]string{
		"transforms":                          "dropTombstones,route,tag",
		"transforms.dropTombstones.type":      "org.apache.kafka.connect.transforms.Filter",
		"transforms.dropTombstones.predicate": "isTombstone",
		"transforms.route.type":               "RegexRouter",
		"transforms.route.regex":              "(.*)s",
		"transforms.route.replacement":        "$1-v2",
		"transforms.route.predicate":          "users",
		"transforms.route.negate":             "true",
		"transforms.tag.type":                 "InsertHeader",
		"transforms.tag.header":               "via",
		"transforms.tag.value.literal":        "fjord",
		"predicates":                          "isTombstone,users",
		"predicates.isTombstone.type":         "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone",
		"predicates.users.type":               "TopicNameMatches",
		"predicates.users.pattern":            "users",
	})
	if err != nil {
		t.Fatal(err)
	}
	defer chain.Close()
	if len(chain.Stages) != 3 || chain.Stages[0].PredicateAlias != "isTombstone" || !chain.Stages[1].Negate || chain.Stages[2].Predicate != nil {
		t.Fatalf("stages: %+v", chain.Stages)
	}
	if chain.Stages[1].Class != "org.apache.kafka.connect.transforms.RegexRouter" {
		t.Fatalf("class %s", chain.Stages[1].Class)
	}
	corpus := transformtest.Corpus()
	// users (schema'd): not a tombstone, topic matches users so the
	// negated router skips it, header added.
	out, err := chain.Apply(corpus[0])
	if err != nil || out == nil || out.Topic != "users" {
		t.Fatalf("users: %v %v", out, err)
	}
	if h, ok := out.Headers.Last("via"); !ok || h.Value != "fjord" {
		t.Fatalf("header: %+v", out.Headers)
	}
	// orders: routed.
	if out, err = chain.Apply(corpus[1]); err != nil || out.Topic != "order-v2" {
		t.Fatalf("orders: %v %v", out, err)
	}
	// tombstone: dropped by the filter, later stages not run.
	if out, err = chain.Apply(corpus[5]); err != nil || out != nil {
		t.Fatalf("tombstone: %v %v", out, err)
	}
	// nil chain is the identity.
	var none *transforms.Chain
	if out, _ := none.Apply(corpus[0]); out != corpus[0] {
		t.Fatal("nil chain changed the record")
	}
}

func TestBuildChainEmpty(t *testing.T) {
	chain, err := transforms.BuildChain(map[string]string{"name": "x", "transforms": ""})
	if err != nil || len(chain.Stages) != 0 {
		t.Fatalf("%v %v", chain, err)
	}
	r := transformtest.Corpus()[0]
	if out, err := chain.Apply(r); err != nil || out != r {
		t.Fatalf("empty chain: %v %v", out, err)
	}
}

// TestBuildChainErrors checks the messages Kafka Connect 4.4's
// ConnectorConfig.enrich(...).validate(...) gives for the same config
// (captured by hand with a probe against the 4.4 jars).
func TestBuildChainErrors(t *testing.T) {
	_, err := transforms.BuildChain(map[string]string{
		"transforms":          "a,b,c,d,e",
		"transforms.b.type":   "com.example.Nope",
		"transforms.c.type":   "org.apache.kafka.connect.transforms.predicates.HasHeaderKey",
		"transforms.d.type":   "Cast$Value",
		"transforms.d.spec":   "x:bytes",
		"transforms.e.type":   "Filter",
		"transforms.e.negate": "true",
		"predicates":          "p,q",
		"predicates.p.type":   "HasHeaderKey",
	})
	got := problems(t, err)
	want := map[string]string{
		"transforms.a.type": `Missing required configuration "transforms.a.type" which has no default value.`,
		"transforms.b.type": "Invalid value com.example.Nope for configuration transforms.b.type: Class com.example.Nope could not be found.",
		"transforms.c.type": "Class class org.apache.kafka.connect.transforms.predicates.HasHeaderKey does not implement the Transformation interface",
		"transforms.d.spec": "Cast transformation does not support casting to BYTES; supported types are [INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]",
		"transforms.e.type": "Config 'transforms.e.negate' was provided but there is no config 'transforms.e.predicate' defining a predicate to be negated.",
		"predicates.p.name": `Missing required configuration "predicates.p.name" which has no default value.`,
		"predicates.q.type": `Missing required configuration "predicates.q.type" which has no default value.`,
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s:\n got %q\nwant %q", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("problems: %v", got)
	}

	_, err = transforms.BuildChain(map[string]string{"transforms": "a,a", "transforms.a.type": "Filter"})
	if msg := problems(t, err)["transforms"]; msg != "Invalid value [a, a] for configuration transforms: Duplicate alias provided." {
		t.Errorf("duplicate: %q", msg)
	}
	_, err = transforms.BuildChain(map[string]string{"transforms": "a", "transforms.a.type": "Filter", "transforms.a.predicate": "ghost"})
	if msg := problems(t, err)["transforms.a.predicate"]; !strings.Contains(msg, "predicate 'ghost' is not defined") {
		t.Errorf("undefined predicate: %q", msg)
	}
}

func TestChainErrorNamesStage(t *testing.T) {
	chain, err := transforms.BuildChain(map[string]string{
		"transforms": "x", "transforms.x.type": "ExtractField$Value", "transforms.x.field": "nope",
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = chain.Apply(transformtest.Corpus()[0])
	var se *transforms.StageError
	var ue *transforms.UnknownFieldError
	if !errors.As(err, &se) || se.Alias != "x" || !errors.As(err, &ue) {
		t.Fatalf("error %T %v", err, err)
	}
	_, err = chain.Apply(transformtest.Corpus()[3]) // INT64 value: DataException
	var de *connect.DataError
	if !errors.As(err, &de) {
		t.Fatalf("want DataError, got %v", err)
	}
}

func TestChainConfigDef(t *testing.T) {
	def := transforms.ChainConfigDef(map[string]string{
		"transforms": "route,bad", "transforms.route.type": "RegexRouter", "transforms.bad.type": "Nope",
		"predicates": "p", "predicates.p.type": "TopicNameMatches",
	})
	for _, k := range []string{"transforms", "predicates", "transforms.route.type", "transforms.route.regex",
		"transforms.route.replacement", "transforms.route.predicate", "transforms.route.negate", "transforms.bad.type",
		"predicates.p.type", "predicates.p.pattern"} {
		if def.Key(k) == nil {
			t.Errorf("key %s missing", k)
		}
	}
	if g := def.Key("transforms.route.regex").Group; g != "Transforms: route" {
		t.Errorf("group %q", g)
	}
	vals := def.Validate(map[string]string{
		"transforms": "route,bad", "transforms.route.type": "RegexRouter", "transforms.bad.type": "Nope",
		"predicates": "p", "predicates.p.type": "TopicNameMatches",
	})
	errs := map[string][]string{}
	for _, v := range vals {
		errs[v.Name] = v.Errors
	}
	if len(errs["transforms.route.regex"]) != 1 || len(errs["predicates.p.pattern"]) != 1 || len(errs["transforms.bad.type"]) != 1 {
		t.Errorf("validate errors: %v", errs)
	}
	if len(errs["transforms.route.type"]) != 0 {
		t.Errorf("valid type flagged: %v", errs["transforms.route.type"])
	}
}

// TestBuildChainMatchesKafkaValidation replays testdata/golden/chain.jsonl:
// the errors Kafka Connect 4.4's connector validation reports for
// transforms/predicates configs must be BuildChain's problems.
func TestBuildChainMatchesKafkaValidation(t *testing.T) {
	data, err := os.ReadFile("testdata/golden/chain.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) < 5 {
		t.Fatalf("only %d chain cases", len(lines))
	}
	for i, line := range lines {
		var c struct {
			Props  map[string]string   `json:"props"`
			Errors map[string][]string `json:"errors"`
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatal(err)
		}
		// The validate endpoint's view (ChainConfigDef) must agree too.
		for _, v := range transforms.ChainConfigDef(c.Props).Validate(c.Props) {
			want := c.Errors[v.Name]
			if len(want) != len(v.Errors) || (len(want) > 0 && want[0] != v.Errors[0]) {
				t.Errorf("case %d: ChainConfigDef %s: %q, want %q", i, v.Name, v.Errors, want)
			}
		}
		chain, err := transforms.BuildChain(c.Props)
		if len(c.Errors) == 0 {
			if err != nil {
				t.Errorf("case %d: Kafka accepts, BuildChain: %v", i, err)
			} else {
				chain.Close()
			}
			continue
		}
		got := problems(t, err)
		for k, msgs := range c.Errors {
			if got[k] != msgs[0] {
				t.Errorf("case %d %s:\n got %q\nwant %q", i, k, got[k], msgs[0])
			}
		}
		for k, m := range got {
			if _, ok := c.Errors[k]; !ok {
				t.Errorf("case %d: extra problem %s: %s", i, k, m)
			}
		}
	}
}
