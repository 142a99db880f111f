package deploy

import (
	"maps"
	"strings"
	"testing"
)

// TestServerProperties: deploy/config/server.properties starts a broker as
// it is (node 1 of the three), with only keys Fjord acts on.
func TestServerProperties(t *testing.T) {
	props := readProps(t, "deploy/config/server.properties")
	cfg, problems := brokerProblems(props)
	for _, p := range problems {
		t.Errorf("server.properties: %s", p)
	}
	if t.Failed() {
		return
	}
	if cfg.NodeID != 1 || !cfg.Cluster.Broker || !cfg.Cluster.Controller {
		t.Errorf("node %d, broker %v, controller %v; want node 1, both roles", cfg.NodeID, cfg.Cluster.Broker, cfg.Cluster.Controller)
	}
	want := map[int32]string{1: "fjord-1:9093", 2: "fjord-2:9093", 3: "fjord-3:9093"}
	if !maps.Equal(cfg.Cluster.Voters, want) {
		t.Errorf("voters %v, want %v", cfg.Cluster.Voters, want)
	}
	if cfg.ListenAddr != ":9092" || cfg.Cluster.ControllerListenAddr != ":9093" {
		t.Errorf("listeners %q and controller %q, want :9092 and :9093", cfg.ListenAddr, cfg.Cluster.ControllerListenAddr)
	}
}

// TestConnectDistributedProperties: the worker file parses as `fjord
// connect` reads it, every key defined, and the three internal topics are
// replicated as the three-broker cluster allows.
func TestConnectDistributedProperties(t *testing.T) {
	props := readProps(t, "deploy/config/connect-distributed.properties")
	wc, problems := workerProblems(props)
	for _, p := range problems {
		t.Errorf("connect-distributed.properties: %s", p)
	}
	if t.Failed() {
		return
	}
	if wc.GroupID != "fjord-connect" {
		t.Errorf("group.id %q, want fjord-connect", wc.GroupID)
	}
	for name, rf := range map[string]int16{"config": wc.ConfigStorageReplicationFactor, "offset": wc.OffsetStorageReplicationFactor, "status": wc.StatusStorageReplicationFactor} {
		if rf != 3 {
			t.Errorf("%s.storage.replication.factor %d, want 3 (three brokers)", name, rf)
		}
	}
	if len(wc.Listeners) != 1 || wc.Listeners[0] != "http://0.0.0.0:8083" {
		t.Errorf("listeners %v, want http://0.0.0.0:8083 (the port compose and Kubernetes probe)", wc.Listeners)
	}
}

// TestMisspelledKeysAreCaught feeds each checker the files with one key
// misspelt (or a value broken) and requires the problem to be reported
// by name: the checkers are what make the other tests mean something.
func TestMisspelledKeysAreCaught(t *testing.T) {
	server := readProps(t, "deploy/config/server.properties")
	for _, c := range []struct{ key, value, want string }{
		{"log.retention.hour", "24", "log.retention.hour"},         // log.retention.hours
		{"num.partition", "3", "num.partition"},                    // num.partitions
		{"num.network.threads", "3", "does not act on"},            // Kafka's, ignored by Fjord
		{"min.insync.replicas", "zero", "min.insync.replicas"},     // not a number
		{"listeners", "PLAINTEXT//:9092", "listeners"},             // not a listener
		{"controller.quorum.voters", "1@fjord-1", "quorum.voters"}, // no port
	} {
		props := maps.Clone(server)
		props[c.key] = c.value
		if _, problems := brokerProblems(props); !mentions(problems, c.want) {
			t.Errorf("broker %s=%s: problems %q do not mention %q", c.key, c.value, problems, c.want)
		}
	}

	worker := readProps(t, "deploy/config/connect-distributed.properties")
	for _, c := range []struct{ key, value, want string }{
		{"offset.flush.interval", "10000", "offset.flush.interval"},                  // .ms missing
		{"value.converter.schema.enable", "true", "schema.enable"},                   // schemas.enable
		{"config.storage.replication.factor", "three", "config.storage.replication"}, // not a number
		{"status.storage.topic", "fjord-connect-configs", "status.storage.topic"},    // same as config's
	} {
		props := maps.Clone(worker)
		props[c.key] = c.value
		if _, problems := workerProblems(props); !mentions(problems, c.want) {
			t.Errorf("worker %s=%s: problems %q do not mention %q", c.key, c.value, problems, c.want)
		}
	}
}

func mentions(problems []string, s string) bool {
	for _, p := range problems {
		if strings.Contains(p, s) {
			return true
		}
	}
	return false
}
