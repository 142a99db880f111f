package filter

import (
	"strings"
	"testing"

	"github.com/fjordhq/fjord/connect"
)

func TestTopicFilter(t *testing.T) {
	cases := []struct {
		name  string
		props map[string]string
		yes   []string
		no    []string
	}{
		{"defaults", nil,
			[]string{"orders", "a.orders", "internal", "orders-internal-x", "my.replica.x", "_one"},
			// .*[\-\.]internal, .*\.replica, __.*
			[]string{"connect-offsets-internal", "mm2-offset-syncs.a.internal", "a.checkpoints.internal", "x.replica", "__consumer_offsets"}},
		{"include list", map[string]string{TopicsConfig: "orders, pay.*"},
			[]string{"orders", "payments", "pay"},
			// Whole-name matches only, as Java's Matcher.matches.
			[]string{"orders2", "xorders", "a.orders", "repay", "__payments"}},
		{"exclude wins", map[string]string{TopicsConfig: "orders.*", TopicsExcludeConfig: "orders\\.tmp.*"},
			[]string{"orders", "orders.eu"},
			[]string{"orders.tmp", "orders.tmp1"}},
		{"blank include replicates nothing", map[string]string{TopicsConfig: ""},
			nil, []string{"orders", ""}},
		{"blank exclude excludes nothing", map[string]string{TopicsExcludeConfig: " "},
			[]string{"orders", "__consumer_offsets", "x.internal"}, nil},
		{"legacy blacklist", map[string]string{TopicsBlacklistConfig: "secret.*"},
			[]string{"orders", "__consumer_offsets"}, []string{"secret", "secrets"}},
		{"exclude beats blacklist", map[string]string{TopicsBlacklistConfig: "secret.*", TopicsExcludeConfig: "tmp"},
			[]string{"secret"}, []string{"tmp"}},
		{"alternation inside an item stays inside", map[string]string{TopicsConfig: "a|b, c"},
			[]string{"a", "b", "c"}, []string{"ab", "a|b"}},
		{"class by simple name", map[string]string{TopicFilterClassConfig: "DefaultTopicFilter"},
			[]string{"orders"}, nil},
	}
	for _, c := range cases {
		f, err := NewTopicFilter(c.props)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, topic := range c.yes {
			if !f.ShouldReplicateTopic(topic) {
				t.Errorf("%s: %q should be replicated", c.name, topic)
			}
		}
		for _, topic := range c.no {
			if f.ShouldReplicateTopic(topic) {
				t.Errorf("%s: %q should not be replicated", c.name, topic)
			}
		}
	}
}

func TestGroupFilter(t *testing.T) {
	cases := []struct {
		props map[string]string
		yes   []string
		no    []string
	}{
		{nil, []string{"billing", "my-console-consumer-1", "connect"},
			[]string{"console-consumer-1234", "connect-s3-sink", "__fjord"}},
		{map[string]string{GroupsConfig: "app-.*", GroupsExcludeConfig: "app-test"},
			[]string{"app-1", "app-tests"}, []string{"app-test", "billing", "connect-app-1"}},
		{map[string]string{GroupsBlacklistConfig: "legacy"}, []string{"connect-x", "x"}, []string{"legacy"}},
		{map[string]string{GroupsConfig: ""}, nil, []string{"app"}},
	}
	for _, c := range cases {
		f, err := NewGroupFilter(c.props)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range c.yes {
			if !f.ShouldReplicateGroup(g) {
				t.Errorf("%v: group %q should be replicated", c.props, g)
			}
		}
		for _, g := range c.no {
			if f.ShouldReplicateGroup(g) {
				t.Errorf("%v: group %q should not be replicated", c.props, g)
			}
		}
	}
}

func TestConfigPropertyFilter(t *testing.T) {
	f, err := NewConfigPropertyFilter(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"follower.replication.throttled.replicas", "leader.replication.throttled.replicas",
		"message.timestamp.difference.max.ms", "message.timestamp.type", "unclean.leader.election.enable", "min.insync.replicas"} {
		if f.ShouldReplicateConfigProperty(p) {
			t.Errorf("default: %s must not be replicated", p)
		}
	}
	// The escaped dots are literal: a look-alike name is not excluded.
	for _, p := range []string{"cleanup.policy", "retention.ms", "min_insync_replicas", "min.insync.replicas.x"} {
		if !f.ShouldReplicateConfigProperty(p) {
			t.Errorf("default: %s must be replicated", p)
		}
	}
	if f.ShouldReplicateSourceDefault("retention.ms") {
		t.Error("use.defaults.from defaults to target")
	}

	f, err = NewConfigPropertyFilter(map[string]string{ConfigPropertiesExcludeConfig: "retention\\..*", UseDefaultsFromConfig: "source"})
	if err != nil {
		t.Fatal(err)
	}
	if f.ShouldReplicateConfigProperty("retention.ms") || !f.ShouldReplicateConfigProperty("min.insync.replicas") {
		t.Error("custom exclude list replaces the default")
	}
	if !f.ShouldReplicateSourceDefault("cleanup.policy") {
		t.Error("use.defaults.from=source")
	}
	// MM2 compares with equals("source"): other spellings mean target.
	f, _ = NewConfigPropertyFilter(map[string]string{UseDefaultsFromConfig: "Source"})
	if f.ShouldReplicateSourceDefault("x") {
		t.Error(`"Source" is not "source"`)
	}
	f, _ = NewConfigPropertyFilter(map[string]string{ConfigPropertiesBlacklistConfig: "segment\\.bytes"})
	if f.ShouldReplicateConfigProperty("segment.bytes") || !f.ShouldReplicateConfigProperty("min.insync.replicas") {
		t.Error("config.properties.blacklist is config.properties.exclude's alias")
	}
}

func TestFilterErrors(t *testing.T) {
	cases := []struct {
		build func() error
		want  string
	}{
		{func() error {
			_, err := NewTopicFilter(map[string]string{TopicsConfig: "orders, (unclosed"})
			return err
		},
			"Invalid value orders|(unclosed for configuration topics: "},
		// RE2 has no look-ahead: an error, not a silently different match.
		{func() error {
			_, err := NewTopicFilter(map[string]string{TopicsExcludeConfig: "(?!keep).*"})
			return err
		},
			"configuration topics.exclude"},
		{func() error { _, err := NewGroupFilter(map[string]string{GroupsConfig: "["}); return err },
			"configuration groups"},
		{func() error {
			_, err := NewConfigPropertyFilter(map[string]string{ConfigPropertiesExcludeConfig: "*a"})
			return err
		}, "configuration config.properties.exclude"},
		{func() error {
			_, err := NewTopicFilter(map[string]string{TopicFilterClassConfig: "com.example.Mine"})
			return err
		},
			"Invalid value com.example.Mine for configuration topic.filter.class: Class com.example.Mine could not be found."},
		{func() error { _, err := NewGroupFilter(map[string]string{GroupFilterClassConfig: "x.Y"}); return err },
			"Class x.Y could not be found."},
		{func() error {
			_, err := NewConfigPropertyFilter(map[string]string{ConfigPropertyFilterClassConfig: "x.Z"})
			return err
		}, "Class x.Z could not be found."},
	}
	for i, c := range cases {
		err := c.build()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("case %d: error %v, want %q", i, err, c.want)
		}
	}
}

func TestDefineKeys(t *testing.T) {
	d := DefineConfigPropertyKeys(DefineGroupKeys(DefineTopicKeys(connect.NewConfigDef())))
	c, err := d.Parse(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.List(TopicsExcludeConfig), "|"); got != `.*[\-\.]internal|.*\.replica|__.*` {
		t.Errorf("topics.exclude default %q", got)
	}
	if got := strings.Join(c.List(GroupsExcludeConfig), "|"); got != "console-consumer-.*|connect-.*|__.*" {
		t.Errorf("groups.exclude default %q", got)
	}
	if got := len(c.List(ConfigPropertiesExcludeConfig)); got != 6 {
		t.Errorf("config.properties.exclude default has %d items", got)
	}
	if c.String(UseDefaultsFromConfig) != "target" || c.String(TopicFilterClassConfig) != DefaultTopicFilterClass {
		t.Error("string defaults")
	}
	if !c.IsNull(TopicsBlacklistConfig) {
		t.Error("topics.blacklist has no default")
	}
	_, err = d.Parse(map[string]string{GroupsConfig: "ok, (bad", TopicFilterClassConfig: "x.Y"})
	if err == nil || !strings.Contains(err.Error(), "Invalid value ok,(bad for configuration groups: Not a valid list of regular expressions") ||
		!strings.Contains(err.Error(), "Class x.Y could not be found.") {
		t.Errorf("validation: %v", err)
	}
}
