package mm2

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// The expected configs below are worked out by hand from Kafka's
// MirrorMakerConfig.connectorBaseConfig and workerConfig (not produced by
// this package), so a change in the derivation shows as a diff here.

// TestGoldenHubAndSpoke: two spokes into one hub.
func TestGoldenHubAndSpoke(t *testing.T) {
	c, err := ReadFile("testdata/hub-and-spoke.properties")
	if err != nil {
		t.Fatal(err)
	}

	// Heartbeats are on by default, so every ordered pair is a flow (MM2
	// runs a herder for each); only a->hub and b->hub replicate.
	wantFlows := []string{"a->b", "a->hub", "b->a", "b->hub", "hub->a", "hub->b"}
	if got := flowNames(c.Flows()); !slices.Equal(got, wantFlows) {
		t.Fatalf("flows %v, want %v", got, wantFlows)
	}
	for _, f := range c.Flows() {
		if want := f.Target == "hub"; c.Enabled(f) != want {
			t.Errorf("%s enabled = %v, want %v", f, c.Enabled(f), want)
		}
	}

	aHub := Flow{"a", "hub"}
	// What every connector of a->hub shares.
	common := map[string]string{
		// Top-level keys that some mirror connector defines pass through
		// to all three ("color" does not).
		"replication.factor":                "3",
		"tasks.max":                         "4",
		"groups":                            ".*",
		"sync.group.offsets.enabled":        "true",
		"emit.checkpoints.interval.seconds": "10",
		// a's cluster properties: non-client keys under source.cluster.,
		// bootstrap.servers copied into each client's settings, and the
		// client keys under source.<client>.
		"source.cluster.bootstrap.servers":  "a1:9092",
		"source.producer.bootstrap.servers": "a1:9092",
		"source.consumer.bootstrap.servers": "a1:9092",
		"source.admin.bootstrap.servers":    "a1:9092",
		"source.consumer.max.poll.records":  "1000",
		"target.cluster.bootstrap.servers":  "hub1:9092, hub2:9092",
		"target.producer.bootstrap.servers": "hub1:9092, hub2:9092",
		"target.consumer.bootstrap.servers": "hub1:9092, hub2:9092",
		"target.admin.bootstrap.servers":    "hub1:9092, hub2:9092",
		"target.producer.compression.type":  "zstd",
		// Every key of the target cluster lands under target.cluster.,
		// worker settings included (MM2 filters nothing; connectors
		// ignore it).
		"target.cluster.offset.storage.replication.factor": "3",
		"source.cluster.alias":                             "a",
		"target.cluster.alias":                             "hub",
		// The flow's own keys, prefix removed.
		"enabled": "true",
		"topics":  "orders, payments",
	}
	for _, conn := range Connectors {
		want := maps.Clone(common)
		want["name"] = conn.Name
		want["connector.class"] = conn.Class
		diffMaps(t, aHub.String()+" "+conn.Name, c.ConnectorConfig(aHub, conn), want)
	}

	// The worker of a->hub runs on the hub.
	diffMaps(t, "a->hub worker", c.WorkerConfig(aHub), map[string]string{
		"bootstrap.servers":                 "hub1:9092, hub2:9092",
		"producer.bootstrap.servers":        "hub1:9092, hub2:9092",
		"consumer.bootstrap.servers":        "hub1:9092, hub2:9092",
		"admin.bootstrap.servers":           "hub1:9092, hub2:9092",
		"producer.compression.type":         "zstd",
		"offset.storage.replication.factor": "3",
		// workerConfig takes the top-level keys starting with "task"
		// (for task.shutdown.graceful.timeout.ms): tasks.max matches too.
		"tasks.max": "4",
		// One group per pair, named for the source, with its own
		// internal topics on the target cluster.
		"client.id":            "a->hub",
		"group.id":             "a-mm2",
		"offset.storage.topic": "mm2-offsets.a.internal",
		"status.storage.topic": "mm2-status.a.internal",
		"config.storage.topic": "mm2-configs.a.internal",
		"key.converter":        ByteArrayConverter,
		"value.converter":      ByteArrayConverter,
		"header.converter":     ByteArrayConverter,
	})

	// hub->a only emits heartbeats (into a, for a->hub to carry back):
	// its connectors exist with enabled = false.
	hubA := c.ConnectorConfig(Flow{"hub", "a"}, SourceConnector)
	if hubA["enabled"] != "false" || hubA["source.cluster.alias"] != "hub" || hubA["target.cluster.alias"] != "a" ||
		hubA["topics"] != "" || hubA["source.cluster.bootstrap.servers"] != "hub1:9092, hub2:9092" {
		t.Errorf("hub->a source connector: %v", hubA)
	}
	if g := c.WorkerConfig(Flow{"hub", "a"})["group.id"]; g != "hub-mm2" {
		t.Errorf("hub->a worker group %q, want hub-mm2", g)
	}
	// b->hub's group differs from a->hub's although both run on the hub.
	if g := c.WorkerConfig(Flow{"b", "hub"})["group.id"]; g != "b-mm2" {
		t.Errorf("b->hub worker group %q, want b-mm2", g)
	}
	if got := c.ConnectorConfig(Flow{"b", "hub"}, SourceConnector)["topics"]; got != "orders" {
		t.Errorf("b->hub topics %q", got)
	}
}

// TestGoldenActiveActive: east and west mirror each other with the
// identity policy, TLS everywhere but west.
func TestGoldenActiveActive(t *testing.T) {
	c, err := ReadFile("testdata/active-active.properties")
	if err != nil {
		t.Fatal(err)
	}
	if got := flowNames(c.Flows()); !slices.Equal(got, []string{"east->west", "west->east"}) {
		t.Fatalf("flows %v", got)
	}

	eastWest := Flow{"east", "west"}
	want := map[string]string{
		// Top-level connector keys, the security ones included (the
		// connectors define them too).
		"replication.policy.class":    "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
		"offset-syncs.topic.location": "target",
		"sync.topic.acls.enabled":     "false",
		"security.protocol":           "SSL",
		"ssl.truststore.location":     "/etc/mirror/ca.jks",
		"emit.heartbeats.enabled":     "false",
		// east inherits the top-level security settings: copied into the
		// cluster's keys and each client's.
		"source.cluster.bootstrap.servers":        "east1:9092",
		"source.cluster.security.protocol":        "SSL",
		"source.cluster.ssl.truststore.location":  "/etc/mirror/ca.jks",
		"source.producer.bootstrap.servers":       "east1:9092",
		"source.producer.security.protocol":       "SSL",
		"source.producer.ssl.truststore.location": "/etc/mirror/ca.jks",
		"source.consumer.bootstrap.servers":       "east1:9092",
		"source.consumer.security.protocol":       "SSL",
		"source.consumer.ssl.truststore.location": "/etc/mirror/ca.jks",
		"source.admin.bootstrap.servers":          "east1:9092",
		"source.admin.security.protocol":          "SSL",
		"source.admin.ssl.truststore.location":    "/etc/mirror/ca.jks",
		// west's own security.protocol wins over the top level's, for
		// the cluster and for every client; the truststore still comes
		// from the top level.
		"target.cluster.bootstrap.servers":        "west1:9092",
		"target.cluster.security.protocol":        "PLAINTEXT",
		"target.cluster.ssl.truststore.location":  "/etc/mirror/ca.jks",
		"target.producer.bootstrap.servers":       "west1:9092",
		"target.producer.security.protocol":       "PLAINTEXT",
		"target.producer.ssl.truststore.location": "/etc/mirror/ca.jks",
		"target.consumer.bootstrap.servers":       "west1:9092",
		"target.consumer.security.protocol":       "PLAINTEXT",
		"target.consumer.ssl.truststore.location": "/etc/mirror/ca.jks",
		"target.admin.bootstrap.servers":          "west1:9092",
		"target.admin.security.protocol":          "PLAINTEXT",
		"target.admin.ssl.truststore.location":    "/etc/mirror/ca.jks",
		"name":                                    "MirrorSourceConnector",
		"connector.class":                         SourceConnector.Class,
		"source.cluster.alias":                    "east",
		"target.cluster.alias":                    "west",
		"enabled":                                 "true",
		"topics":                                  "orders.*",
		// A per-flow connector client override passes through as is.
		"producer.override.linger.ms": "5",
	}
	diffMaps(t, "east->west source", c.ConnectorConfig(eastWest, SourceConnector), want)

	// The flow's key overrides the top level's.
	westEast := c.ConnectorConfig(Flow{"west", "east"}, HeartbeatConnector)
	if westEast["emit.heartbeats.enabled"] != "true" || westEast["source.cluster.security.protocol"] != "PLAINTEXT" ||
		westEast["target.cluster.security.protocol"] != "SSL" {
		t.Errorf("west->east heartbeat connector: %v", westEast)
	}
	if _, ok := westEast["producer.override.linger.ms"]; ok {
		t.Errorf("east->west's override leaked into west->east: %v", westEast)
	}

	diffMaps(t, "east->west worker", c.WorkerConfig(eastWest), map[string]string{
		"bootstrap.servers":                "west1:9092",
		"security.protocol":                "PLAINTEXT",
		"ssl.truststore.location":          "/etc/mirror/ca.jks",
		"producer.bootstrap.servers":       "west1:9092",
		"producer.security.protocol":       "PLAINTEXT",
		"producer.ssl.truststore.location": "/etc/mirror/ca.jks",
		"consumer.bootstrap.servers":       "west1:9092",
		"consumer.security.protocol":       "PLAINTEXT",
		"consumer.ssl.truststore.location": "/etc/mirror/ca.jks",
		"admin.bootstrap.servers":          "west1:9092",
		"admin.security.protocol":          "PLAINTEXT",
		"admin.ssl.truststore.location":    "/etc/mirror/ca.jks",
		// The worker needs the policy too (MM2 passes replication.policy*).
		"replication.policy.class": "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
		"client.id":                "east->west",
		"group.id":                 "east-mm2",
		"offset.storage.topic":     "mm2-offsets.east.internal",
		"status.storage.topic":     "mm2-status.east.internal",
		"config.storage.topic":     "mm2-configs.east.internal",
		"key.converter":            ByteArrayConverter,
		"value.converter":          ByteArrayConverter,
		"header.converter":         ByteArrayConverter,
	})
}

func flowNames(fs []Flow) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.String())
	}
	return out
}

// diffMaps fails t with every key that differs.
func diffMaps(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if g, ok := got[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("  missing %s = %q", k, want[k]))
		} else if g != want[k] {
			diffs = append(diffs, fmt.Sprintf("  %s = %q, want %q", k, g, want[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("  unexpected %s = %q", k, got[k]))
		}
	}
	if len(diffs) > 0 {
		t.Errorf("%s:\n%s", what, strings.Join(diffs, "\n"))
	}
}
