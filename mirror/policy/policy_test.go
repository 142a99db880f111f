package policy

import "testing"

func mustNew(t *testing.T, props map[string]string) ReplicationPolicy {
	t.Helper()
	p, err := New(props)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNew(t *testing.T) {
	cases := []struct {
		props    map[string]string
		identity bool
		sep      string
		syncs    string
	}{
		{nil, false, ".", "mm2-offset-syncs.c.internal"},
		{map[string]string{ClassConfig: DefaultClass}, false, ".", "mm2-offset-syncs.c.internal"},
		{map[string]string{ClassConfig: "DefaultReplicationPolicy"}, false, ".", "mm2-offset-syncs.c.internal"},
		{map[string]string{ClassConfig: IdentityClass}, true, ".", "mm2-offset-syncs.c.internal"},
		{map[string]string{ClassConfig: " IdentityReplicationPolicy "}, true, ".", "mm2-offset-syncs.c.internal"},
		{map[string]string{SeparatorConfig: "__"}, false, "__", "mm2-offset-syncs__c__internal"},
		{map[string]string{SeparatorConfig: "__", InternalTopicSeparatorEnabledConfig: "false"}, false, "__", "mm2-offset-syncs.c.internal"},
		{map[string]string{SeparatorConfig: "__", InternalTopicSeparatorEnabledConfig: "TRUE"}, false, "__", "mm2-offset-syncs__c__internal"},
		// Boolean.parseBoolean: anything but "true" is false.
		{map[string]string{SeparatorConfig: "__", InternalTopicSeparatorEnabledConfig: "yes"}, false, "__", "mm2-offset-syncs.c.internal"},
		// The flag is only read with a custom separator (configure's nesting).
		{map[string]string{InternalTopicSeparatorEnabledConfig: "false"}, false, ".", "mm2-offset-syncs.c.internal"},
	}
	for _, c := range cases {
		p := mustNew(t, c.props)
		_, isIdentity := p.(*Identity)
		if isIdentity != c.identity {
			t.Errorf("%v: identity = %v", c.props, isIdentity)
		}
		if got := p.FormatRemoteTopic("a", "heartbeats"); got != "a"+c.sep+"heartbeats" {
			t.Errorf("%v: FormatRemoteTopic = %q", c.props, got)
		}
		if got := p.OffsetSyncsTopic("c"); got != c.syncs {
			t.Errorf("%v: OffsetSyncsTopic = %q, want %q", c.props, got, c.syncs)
		}
	}
	_, err := New(map[string]string{ClassConfig: "com.example.Mine"})
	want := "Invalid value com.example.Mine for configuration replication.policy.class: Class com.example.Mine could not be found."
	if err == nil || err.Error() != want {
		t.Errorf("unknown class: %v", err)
	}
}

func TestDefaultNames(t *testing.T) {
	p := NewDefault(".", true)
	cases := []struct {
		topic, source, upstream, original string
	}{
		{"orders", "", "", "orders"},
		{"a.orders", "a", "orders", "orders"},
		{"b.a.orders", "b", "a.orders", "orders"},
		{"us-west.heartbeats", "us-west", "heartbeats", "heartbeats"},
		// Java's Pattern.split drops trailing empty strings, so a name
		// ending in separators has fewer parts than separators.
		{"a.", "", "", "a."},
		{"a..", "", "", "a.."},
		{"a.b.", "a", "b.", "b."},
		{"a..b", "a", ".b", "b"},
		{"..", "", "", ".."},
		{"", "", "", ""},
		// A leading separator gives Java's source "" with an upstream.
		{".b", "", "b", "b"},
	}
	for _, c := range cases {
		if got := p.TopicSource(c.topic); got != c.source {
			t.Errorf("TopicSource(%q) = %q, want %q", c.topic, got, c.source)
		}
		if got := p.UpstreamTopic(c.topic); got != c.upstream {
			t.Errorf("UpstreamTopic(%q) = %q, want %q", c.topic, got, c.upstream)
		}
		if got := p.OriginalTopic(c.topic); got != c.original {
			t.Errorf("OriginalTopic(%q) = %q, want %q", c.topic, got, c.original)
		}
	}
	if got := p.FormatRemoteTopic("us-west", "orders"); got != "us-west.orders" {
		t.Errorf("FormatRemoteTopic = %q", got)
	}

	multi := NewDefault("__", true)
	if got := multi.FormatRemoteTopic("a", "x.y"); got != "a__x.y" {
		t.Errorf("FormatRemoteTopic = %q", got)
	}
	if s, u := multi.TopicSource("b__a__x.y"), multi.UpstreamTopic("b__a__x.y"); s != "b" || u != "a__x.y" {
		t.Errorf("multi-char separator: source %q upstream %q", s, u)
	}
	// The separator is literal, not a regex.
	if s := NewDefault("|", true).TopicSource("a|b"); s != "a" {
		t.Errorf("| separator: source %q", s)
	}
}

func TestInternalTopics(t *testing.T) {
	dot := NewDefault(".", true)
	under := NewDefault("_", true)
	underLegacy := NewDefault("_", false)
	cases := []struct {
		p                                  *Default
		topic                              string
		internal, mm2Internal, checkpoints bool
	}{
		{dot, "__consumer_offsets", true, false, false},
		{dot, ".hiddentopic", true, false, false},
		{dot, "mm2-offsets.CLUSTER.internal", true, true, false},
		{dot, "mm2-offsets-CLUSTER-internal", true, false, false},
		{dot, "mm2-offsets_CLUSTER_internal", false, false, false},
		{dot, "source1.checkpoints.internal", true, true, true},
		{dot, "checkpoints.internal", true, true, false},
		{dot, "checkpoints.internal!", false, false, false},
		{dot, "orders", false, false, false},
		{under, "a_checkpoints_internal", true, true, true},
		{under, "a.checkpoints.internal", true, false, false},
		{underLegacy, "a.checkpoints.internal", true, true, true},
		{underLegacy, "a_checkpoints_internal", false, false, false},
	}
	for _, c := range cases {
		if got := c.p.IsInternalTopic(c.topic); got != c.internal {
			t.Errorf("%q sep %q: IsInternalTopic = %v", c.topic, c.p.separator, got)
		}
		if got := c.p.IsMM2InternalTopic(c.topic); got != c.mm2Internal {
			t.Errorf("%q sep %q: IsMM2InternalTopic = %v", c.topic, c.p.separator, got)
		}
		if got := c.p.IsCheckpointsTopic(c.topic); got != c.checkpoints {
			t.Errorf("%q sep %q: IsCheckpointsTopic = %v", c.topic, c.p.separator, got)
		}
	}

	names := []struct {
		p                       *Default
		syncs, checkpoints, hbt string
	}{
		{dot, "mm2-offset-syncs.CLUSTER.internal", "CLUSTER.checkpoints.internal", "heartbeats"},
		{NewDefault("__", true), "mm2-offset-syncs__CLUSTER__internal", "CLUSTER__checkpoints__internal", "heartbeats"},
		{NewDefault("__", false), "mm2-offset-syncs.CLUSTER.internal", "CLUSTER.checkpoints.internal", "heartbeats"},
	}
	for _, n := range names {
		if got := n.p.OffsetSyncsTopic("CLUSTER"); got != n.syncs {
			t.Errorf("OffsetSyncsTopic = %q, want %q", got, n.syncs)
		}
		if got := n.p.CheckpointsTopic("CLUSTER"); got != n.checkpoints {
			t.Errorf("CheckpointsTopic = %q, want %q", got, n.checkpoints)
		}
		if got := n.p.HeartbeatsTopic(); got != n.hbt {
			t.Errorf("HeartbeatsTopic = %q", got)
		}
	}
}

func TestIsHeartbeatsTopic(t *testing.T) {
	p := NewDefault(".", true)
	for topic, want := range map[string]bool{
		"heartbeats": true, "source1.heartbeats": true, "source2.source1.heartbeats": true,
		"heartbeats!": false, "!heartbeats": false, "source1heartbeats": false, "source1-heartbeats": false,
	} {
		if got := p.IsHeartbeatsTopic(topic); got != want {
			t.Errorf("IsHeartbeatsTopic(%q) = %v", topic, got)
		}
	}
	// With "_" as separator, "us-west.heartbeats" is a local topic of its own.
	if NewDefault("_", true).IsHeartbeatsTopic("us-west.heartbeats") {
		t.Error(`"_" separator: us-west.heartbeats is not a heartbeats topic`)
	}
}

func TestIdentity(t *testing.T) {
	p := NewIdentity(".", true, "")
	withAlias := NewIdentity(".", true, "primary")
	cases := []struct {
		p                                   *Identity
		topic, remote, source, up, original string
	}{
		{p, "orders", "orders", "", "orders", "orders"},
		{p, "a.orders", "a.orders", "", "a.orders", "a.orders"},
		{withAlias, "orders", "orders", "primary", "orders", "orders"},
		// Heartbeats are named as by the default policy.
		{p, "heartbeats", "src.heartbeats", "", "", "heartbeats"},
		{p, "a.heartbeats", "src.a.heartbeats", "a", "heartbeats", "heartbeats"},
		{withAlias, "b.a.heartbeats", "src.b.a.heartbeats", "b", "a.heartbeats", "heartbeats"},
	}
	for _, c := range cases {
		if got := c.p.FormatRemoteTopic("src", c.topic); got != c.remote {
			t.Errorf("FormatRemoteTopic(%q) = %q, want %q", c.topic, got, c.remote)
		}
		if got := c.p.TopicSource(c.topic); got != c.source {
			t.Errorf("TopicSource(%q) = %q, want %q", c.topic, got, c.source)
		}
		if got := c.p.UpstreamTopic(c.topic); got != c.up {
			t.Errorf("UpstreamTopic(%q) = %q, want %q", c.topic, got, c.up)
		}
		if got := c.p.OriginalTopic(c.topic); got != c.original {
			t.Errorf("OriginalTopic(%q) = %q, want %q", c.topic, got, c.original)
		}
	}
	// The default methods dispatch to Identity's overrides.
	if !p.IsHeartbeatsTopic("x.heartbeats") || p.IsHeartbeatsTopic("orders") {
		t.Error("IsHeartbeatsTopic")
	}
	if !p.IsInternalTopic("a.checkpoints.internal") || p.IsInternalTopic("orders") {
		t.Error("IsInternalTopic")
	}
	if got := mustNew(t, map[string]string{ClassConfig: IdentityClass, SourceClusterAliasConfig: "a"}).TopicSource("t"); got != "a" {
		t.Errorf("New identity: TopicSource = %q", got)
	}
}

// The cases of MirrorSourceConnectorTest.testNoCycles and
// testIdentityReplication, flow source -> target.
func TestIsCycle(t *testing.T) {
	def := NewDefault(".", true)
	id := NewIdentity(".", true, "")
	idAliased := NewIdentity(".", true, "target")
	cases := []struct {
		p     ReplicationPolicy
		topic string
		cycle bool
	}{
		{def, "target.topic1", true},
		{def, "target.source.topic1", true},
		{def, "source.target.topic1", true},
		{def, "target.source.target.topic1", true},
		{def, "source.target.source.topic1", true},
		{def, "topic1", false},
		{def, "source.topic1", false},
		{def, "other.source.topic1", false},
		{def, ".b", false},
		{def, ".target.x", true},
		{id, "target.topic1", false},
		{id, "source.target.source.topic1", false},
		{id, "topic1", false},
		{id, "othersource.topic1", false},
		{id, "target.heartbeats", true},
		{id, "target.source.heartbeats", true},
		{id, "source.target.heartbeats", true},
		{id, "target.source.target.heartbeats", true},
		{id, "source.target.source.heartbeats", true},
		{id, "heartbeats", false},
		{id, "othersource.heartbeats", false},
		// source.cluster.alias equal to the target: everything is a cycle.
		{idAliased, "topic1", true},
	}
	for _, c := range cases {
		if got := IsCycle(c.p, c.topic, "target"); got != c.cycle {
			t.Errorf("%T IsCycle(%q) = %v, want %v", c.p, c.topic, got, c.cycle)
		}
	}
}

// A custom policy whose upstream names never settle must not hang IsCycle.
type spinning struct{ *Default }

func (spinning) UpstreamTopic(topic string) string { return topic + "x" }
func (spinning) TopicSource(string) string         { return "elsewhere" }

func TestIsCycleTerminates(t *testing.T) {
	if IsCycle(spinning{NewDefault(".", true)}, "t", "target") {
		t.Error("no hop names target")
	}
}
