package broker_test

// The ACL and SCRAM APIs against Apache Kafka 4.4's answers
// (internal/kafkaref, scenarios "security" and "security-off"): the same
// requests, in the same order, must get the same answers. Kafka orders
// some lists by hash; they are compared as sets.

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/internal/kafkaref"
	"github.com/fjordhq/fjord/internal/testkit"
)

// normalizeAnswer turns a response into comparable JSON values: no
// throttle or tagged fields, lists of objects sorted.
func normalizeAnswer(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	var walk func(any) any
	walk = func(x any) any {
		switch x := x.(type) {
		case map[string]any:
			delete(x, "ThrottleMillis")
			delete(x, "UnknownTags")
			delete(x, "Version")
			for k, v := range x {
				x[k] = walk(v)
			}
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
			if len(x) > 0 {
				if _, ok := x[0].(map[string]any); ok {
					slices.SortFunc(x, func(a, b any) int {
						ja, _ := json.Marshal(a)
						jb, _ := json.Marshal(b)
						return slices.Compare(ja, jb)
					})
				}
			}
		}
		return x
	}
	return walk(x)
}

// replayKafka sends each capture's request to the broker at addr, in
// order, and compares the answers with Kafka's. adjust may change Fjord's
// answer where it knowingly differs.
func replayKafka(t *testing.T, addr string, names []string, adjust map[string]func(kmsg.Response)) {
	t.Helper()
	cl := testkit.Client(t, addr)
	for _, name := range names {
		c, err := kafkaref.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		req := kmsg.RequestForKey(c.Key)
		if err := c.DecodeRequest(req); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := req.ResponseKind()
		if err := c.DecodeResponse(want); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := cl.Request(testkit.Context(t, 10*time.Second), req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if f := adjust[name]; f != nil {
			f(got)
		}
		g, w := normalizeAnswer(t, got), normalizeAnswer(t, want)
		if !reflect.DeepEqual(g, w) {
			gj, _ := json.Marshal(g)
			wj, _ := json.Marshal(w)
			t.Errorf("%s (%s):\n got   %s\n Kafka %s", name, c.Note, gj, wj)
		}
	}
}

func TestSecurityAPIsMatchKafka(t *testing.T) {
	b := testkit.StartBroker(t, withAuthorizer)
	replayKafka(t, b.Addr, []string{
		"acl_create_filter_code", "scram_alter_upsert", "scram_alter_errors", "acl_create",
		"scram_describe", "scram_describe_all", "acl_describe_all", "acl_describe_match",
		"acl_describe_literal", "acl_delete",
	}, map[string]func(kmsg.Response){
		// Kafka answers without a message; Fjord says which code was refused.
		"acl_create_filter_code": func(r kmsg.Response) {
			for i := range r.(*kmsg.CreateACLsResponse).Results {
				r.(*kmsg.CreateACLsResponse).Results[i].ErrorMessage = nil
			}
		},
	})
}

func TestSecurityAPIsWithoutAuthorizerMatchKafka(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	replayKafka(t, b.Addr, []string{"acl_create_disabled", "acl_describe_disabled", "acl_delete_disabled", "scram_alter_no_authorizer"}, nil)
}
