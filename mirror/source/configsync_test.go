package source

import (
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/mirror/filter"
)

func testConnector(t *testing.T, props map[string]string) *Connector {
	t.Helper()
	cf, err := filter.NewConfigPropertyFilter(props)
	if err != nil {
		t.Fatal(err)
	}
	return &Connector{cfgs: cf}
}

func entry(name, value string, src kmsg.ConfigSource) configEntry {
	return configEntry{name: name, value: &value, source: src}
}

func names(es []configEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.name)
	}
	return out
}

var sourceConfigs = []configEntry{
	entry("retention.ms", "1000", kmsg.ConfigSourceDynamicTopicConfig),
	entry("cleanup.policy", "delete", kmsg.ConfigSourceDefaultConfig),
	entry("min.insync.replicas", "2", kmsg.ConfigSourceDynamicTopicConfig), // excluded by default
	entry("segment.bytes", "1024", kmsg.ConfigSourceStaticBrokerConfig),
	{name: "secret", sensitive: true, source: kmsg.ConfigSourceDynamicTopicConfig},
	{name: "ro", value: new(string), readOnly: true, source: kmsg.ConfigSourceDynamicTopicConfig},
	entry("max.message.bytes", "2048", kmsg.ConfigSourceDynamicBrokerConfig),
}

func TestTargetConfig(t *testing.T) {
	c := testConnector(t, map[string]string{})
	if got, want := names(c.targetConfig(sourceConfigs, false)), []string{"retention.ms", "max.message.bytes"}; !reflect.DeepEqual(got, want) {
		t.Errorf("creation configs %v, want %v", got, want)
	}
	if got, want := names(c.targetConfig(sourceConfigs, true)), []string{"retention.ms", "cleanup.policy", "max.message.bytes"}; !reflect.DeepEqual(got, want) {
		t.Errorf("sync configs %v, want %v", got, want)
	}
	c = testConnector(t, map[string]string{"use.defaults.from": "source", "config.properties.exclude": "retention.*"})
	if got, want := names(c.targetConfig(sourceConfigs, false)), []string{"cleanup.policy", "min.insync.replicas", "max.message.bytes"}; !reflect.DeepEqual(got, want) {
		t.Errorf("creation configs with source defaults %v, want %v", got, want)
	}
}

func TestAlterOps(t *testing.T) {
	c := testConnector(t, map[string]string{})
	desired := c.targetConfig(sourceConfigs, true)
	current := []configEntry{
		entry("retention.ms", "5000", kmsg.ConfigSourceDynamicTopicConfig),
		entry("cleanup.policy", "compact", kmsg.ConfigSourceDynamicTopicConfig), // an override where the source has the default
		entry("max.message.bytes", "2048", kmsg.ConfigSourceDefaultConfig),      // already the same value
	}
	want := []alterOp{{name: "retention.ms", value: "1000"}, {name: "cleanup.policy", delete: true}}
	if got := c.alterOps(desired, current); !reflect.DeepEqual(got, want) {
		t.Errorf("ops %+v, want %+v", got, want)
	}
	// In step: nothing to write.
	current = []configEntry{
		entry("retention.ms", "1000", kmsg.ConfigSourceDynamicTopicConfig),
		entry("cleanup.policy", "delete", kmsg.ConfigSourceDefaultConfig),
		entry("max.message.bytes", "2048", kmsg.ConfigSourceDynamicTopicConfig),
	}
	if got := c.alterOps(desired, current); len(got) != 0 {
		t.Errorf("ops for a topic in step: %+v", got)
	}
	// use.defaults.from=source SETs the source's default values.
	c = testConnector(t, map[string]string{"use.defaults.from": "source"})
	current[1] = entry("cleanup.policy", "compact", kmsg.ConfigSourceDefaultConfig)
	want = []alterOp{{name: "cleanup.policy", value: "delete"}}
	if got := c.alterOps(c.targetConfig(sourceConfigs, true), current); !reflect.DeepEqual(got, want) {
		t.Errorf("ops with source defaults %+v, want %+v", got, want)
	}
}

// For identity-named topics only what changed since the last sync goes.
func TestChangedSince(t *testing.T) {
	c := testConnector(t, map[string]string{})
	before := c.targetConfig(sourceConfigs, true)
	last := c.fingerprint(before)
	after := append([]configEntry(nil), sourceConfigs...)
	after[0] = entry("retention.ms", "2000", kmsg.ConfigSourceDynamicTopicConfig)
	after[1] = entry("cleanup.policy", "compact", kmsg.ConfigSourceDynamicTopicConfig)
	now := c.targetConfig(after, true)
	if got, want := names(changedSince(last, c.fingerprint(now), now)), []string{"retention.ms", "cleanup.policy"}; !reflect.DeepEqual(got, want) {
		t.Errorf("changed %v, want %v", got, want)
	}
	if got := changedSince(last, last, before); len(got) != 0 {
		t.Errorf("unchanged config gave %v", names(got))
	}
	// Back to the default: a change too (a DELETE on the target).
	back := c.targetConfig(sourceConfigs, true)
	if got, want := names(changedSince(c.fingerprint(now), c.fingerprint(back), back)), []string{"retention.ms", "cleanup.policy"}; !reflect.DeepEqual(got, want) {
		t.Errorf("changed back %v, want %v", got, want)
	}
}
