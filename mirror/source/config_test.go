package source

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
)

func baseProps() map[string]string {
	return map[string]string{
		"name": "m", "source.cluster.alias": "a", "target.cluster.alias": "b",
		"source.cluster.bootstrap.servers": "127.0.0.1:1", "target.cluster.bootstrap.servers": "127.0.0.1:2",
	}
}

func TestSettingsDefaults(t *testing.T) {
	s, err := parseSettings(baseProps())
	if err != nil {
		t.Fatal(err)
	}
	if s.refreshInterval != 10*time.Minute || s.syncConfigsInterval != 10*time.Minute || s.pollTimeout != time.Second ||
		s.replicationFactor != 2 || s.offsetSyncsRF != 3 || s.offsetLagMax != 100 || !s.emitOffsetSyncs ||
		!s.heartbeatsReplication || s.adminTimeout != time.Minute || !s.enabled {
		t.Errorf("MM2 defaults not applied: %+v", s)
	}
	if got := s.offsetSyncsTopic(); got != "mm2-offset-syncs.b.internal" {
		t.Errorf("offset-syncs topic %q", got)
	}
	p := baseProps()
	p["offset-syncs.topic.location"] = "target"
	p["refresh.topics.enabled"] = "false"
	p["sync.topic.configs.interval.seconds"] = "5"
	s, err = parseSettings(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.offsetSyncsTopic(); got != "mm2-offset-syncs.a.internal" {
		t.Errorf("offset-syncs topic on the target %q", got)
	}
	if s.refreshInterval >= 0 || s.syncConfigsInterval != 5*time.Second {
		t.Errorf("intervals %v %v", s.refreshInterval, s.syncConfigsInterval)
	}
	delete(p, "source.cluster.alias")
	if _, err := parseSettings(p); err == nil || !strings.Contains(err.Error(), "source.cluster.alias") {
		t.Errorf("missing source.cluster.alias: %v", err)
	}
}

func errorsOf(values []connect.ConfigValue, name string) []string {
	for _, v := range values {
		if v.Name == name {
			return v.Errors
		}
	}
	return nil
}

func TestValidate(t *testing.T) {
	c := &Connector{}
	p := baseProps()
	for _, v := range c.Validate(p) {
		if len(v.Errors) > 0 {
			t.Errorf("valid config: %s: %v", v.Name, v.Errors)
		}
	}
	p["exactly.once.support"] = "required"
	if errs := errorsOf(c.Validate(p), "exactly.once.support"); len(errs) != 1 || !strings.Contains(errs[0], "read_committed") {
		t.Errorf("exactly-once without read_committed: %v", errs)
	}
	if c.ExactlyOnceSupport(p) != connect.ExactlyOnceUnsupported {
		t.Error("exactly-once support without read_committed")
	}
	p["source.consumer.isolation.level"] = "read_committed"
	if errs := errorsOf(c.Validate(p), "exactly.once.support"); len(errs) != 0 {
		t.Errorf("exactly-once with read_committed: %v", errs)
	}
	if c.ExactlyOnceSupport(p) != connect.ExactlyOnceSupported {
		t.Error("no exactly-once support with read_committed")
	}
	p["emit.offset-syncs.enabled"] = "false"
	p["offset-syncs.topic.replication.factor"] = "1"
	if errs := errorsOf(c.Validate(p), "emit.offset-syncs.enabled"); len(errs) != 1 || !strings.Contains(errs[0], "can't setup offset-syncs") {
		t.Errorf("offset-syncs settings with offset syncs off: %v", errs)
	}
	p = baseProps()
	p["replication.factor"] = "0"
	p["offset-syncs.topic.location"] = "elsewhere"
	v := c.Validate(p)
	if len(errorsOf(v, "replication.factor")) == 0 || len(errorsOf(v, "offset-syncs.topic.location")) == 0 {
		t.Errorf("bad values accepted: %v", v)
	}
	// MM2's source keys are all there for the validate endpoint.
	var keys []string
	for _, k := range ConfigDef().Keys() {
		keys = append(keys, k.Name)
	}
	for _, k := range []string{"topics", "topics.exclude", "config.properties.exclude", "refresh.topics.interval.seconds",
		"sync.topic.configs.enabled", "sync.topic.acls.enabled", "offset.lag.max", "emit.offset-syncs.enabled",
		"offset-syncs.topic.location", "heartbeats.replication.enabled", "source.cluster.alias", "replication.policy.class"} {
		if !slices.Contains(keys, k) {
			t.Errorf("ConfigDef lacks %s", k)
		}
	}
}
