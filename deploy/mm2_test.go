package deploy

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/fjordhq/fjord/connect/runtime"
	"github.com/fjordhq/fjord/mirror/filter"
	"github.com/fjordhq/fjord/mirror/mm2"
)

const mm2File = "deploy/config/mm2.properties"

// TestMM2Properties: mm2.properties as `fjord mirror` reads it — every
// flow's worker config and its three connectors' configs, derived as
// MirrorMaker 2 derives them, pass the worker's and the connectors'
// validation key by key; no top-level key is dropped on the way; the
// primary cluster is compose's, and the topic filter keeps Connect's
// and MirrorMaker's own topics home.
func TestMM2Properties(t *testing.T) {
	props := readProps(t, mm2File)
	cfg, problems := mm2Problems(props)
	for _, p := range problems {
		t.Errorf("mm2.properties: %s", p)
	}
	if cfg == nil || t.Failed() {
		return
	}
	enabled := map[string]bool{}
	for _, f := range cfg.Flows() {
		enabled[f.String()] = cfg.Enabled(f)
	}
	if want := map[string]bool{"primary->dr": true, "dr->primary": false}; !maps.Equal(enabled, want) {
		t.Errorf("flows %v, want %v (one way, heartbeats back)", enabled, want)
	}
	var brokers []string
	for _, b := range brokerServices {
		brokers = append(brokers, b+":9092")
	}
	if got, _ := cfg.Raw("primary.bootstrap.servers"); got != strings.Join(brokers, ",") {
		t.Errorf("primary.bootstrap.servers %q, want compose's brokers %s", got, strings.Join(brokers, ","))
	}

	src := cfg.ConnectorConfig(mm2.Flow{Source: "primary", Target: "dr"}, mm2.SourceConnector)
	tf, err := filter.NewTopicFilter(src)
	if err != nil {
		t.Fatal(err)
	}
	for topic, want := range map[string]bool{
		"inv.public.orders": true, "orders": true,
		"fjord-connect-configs": false, "fjord-connect-offsets": false, "fjord-connect-status": false,
		"mm2-offsets.dr.internal": false, "primary.checkpoints.internal": false, "mm2-offset-syncs.dr.internal": false,
		"__consumer_offsets": false, "orders.replica": false,
		// The file's \\. is the regex \. : with a single backslash the
		// properties reader drops it, and . matches any character.
		"ordersreplica": true,
	} {
		if got := tf.ShouldReplicateTopic(topic); got != want {
			t.Errorf("topic %s replicated: %v, want %v", topic, got, want)
		}
	}
}

// mm2Problems derives what `fjord mirror` runs from an mm2.properties
// and checks it: each flow's worker config (workerProblems) and its
// connectors' configs (connectorProblems, offline: the mirror connectors
// validate without reaching the clusters), and that every top-level key
// reaches one of them or is MirrorMaker's own — MM2 silently drops the
// others.
func mm2Problems(props map[string]string) (*mm2.Config, []string) {
	cfg, err := mm2.Parse(props)
	if err != nil {
		return nil, []string{err.Error()}
	}
	var problems []string
	reached := map[string]bool{}
	for _, f := range cfg.Flows() {
		// MM2 gives every connector of a flow the keys any of them defines
		// (MirrorMakerConfig.allConfigNames), and the worker the keys of
		// some prefixes ("task" takes tasks.max): a key is meaningful if
		// one of the three connectors or the worker defines it.
		configs := map[string]map[string]string{}
		defined := map[string]bool{}
		wp := clientKeysChecked(cfg.WorkerConfig(f), &problems, "worker of "+f.String())
		wc, err := runtime.ParseWorkerConfig(wp, runtime.Distributed)
		if err != nil {
			problems = append(problems, fmt.Sprintf("worker of %s: %v", f, err))
			continue
		}
		for _, conn := range mm2.Connectors {
			cc := clientKeysChecked(cfg.ConnectorConfig(f, conn), &problems, conn.Name+" of "+f.String())
			configs[conn.Name] = cc
			ps, d := validateConnector(wc, cc)
			for _, p := range ps {
				problems = append(problems, fmt.Sprintf("%s of %s: %s", conn.Name, f, p))
			}
			maps.Copy(defined, d)
		}
		for _, conn := range mm2.Connectors {
			cc := configs[conn.Name]
			for _, k := range slices.Sorted(maps.Keys(cc)) {
				reached[k] = true
				if p := undefinedKeyProblem(cc, k, defined); p != "" {
					problems = append(problems, fmt.Sprintf("%s of %s: %s", conn.Name, f, p))
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(wp)) {
			reached[k] = true
			if p := workerKeyProblem(wp, k); p != "" && !defined[k] {
				problems = append(problems, fmt.Sprintf("worker of %s: %s", f, p))
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(props)) {
		switch {
		case k == mm2.ClustersConfig || k == mm2.EnableInternalRestConfig:
		case clusterKey(cfg, k) != "":
			// <alias>.<key>: reaches the flows through ClusterProps,
			// checked there.
		case flowKey(cfg, k) != "":
			rest := flowKey(cfg, k)
			if !reached[rest] {
				problems = append(problems, fmt.Sprintf("%s: %s reaches no connector of the flow", k, rest))
			}
		case !reached[k]:
			problems = append(problems, fmt.Sprintf("%s: MirrorMaker 2 passes this key to no worker or connector (a typo?)", k))
		}
	}
	return cfg, problems
}

// clusterClientKeys are the Kafka client settings MM2 copies from a
// cluster's keys into its clients (producer., consumer., admin.,
// source.cluster., ...) that these tests accept; Fjord's runtime checks
// them when it builds the clients, which needs the clusters.
var clusterClientKeys = map[string]bool{"bootstrap.servers": true}

// clientKeysChecked returns props without the client settings derived
// from a cluster's keys, after checking each is one of clusterClientKeys.
func clientKeysChecked(props map[string]string, problems *[]string, who string) map[string]string {
	out := maps.Clone(props)
	for k := range props {
		for _, prefix := range []string{"producer.", "consumer.", "admin.", "source.cluster.", "target.cluster.",
			"source.producer.", "source.consumer.", "source.admin.", "target.producer.", "target.consumer.", "target.admin."} {
			rest, ok := strings.CutPrefix(k, prefix)
			if !ok {
				continue
			}
			if strings.HasSuffix(prefix, "cluster.") && strings.Contains(rest, ".") && (strings.HasPrefix(rest, "producer.") || strings.HasPrefix(rest, "consumer.") || strings.HasPrefix(rest, "admin.")) {
				continue
			}
			if k == "source.cluster.alias" || k == "target.cluster.alias" {
				continue
			}
			if !clusterClientKeys[rest] {
				*problems = append(*problems, fmt.Sprintf("%s: %s: client setting %q is not checked by these tests", who, k, rest))
			}
			delete(out, k)
			break
		}
	}
	return out
}

// clusterKey is the key without its "<alias>." prefix, "" if k has none.
func clusterKey(cfg *mm2.Config, k string) string {
	for _, a := range cfg.Clusters() {
		if rest, ok := strings.CutPrefix(k, a+"."); ok {
			return rest
		}
	}
	return ""
}

// flowKey is the key without its "<source>-><target>." prefix.
func flowKey(cfg *mm2.Config, k string) string {
	for _, f := range cfg.Flows() {
		if rest, ok := strings.CutPrefix(k, f.String()+"."); ok {
			return rest
		}
	}
	return ""
}

// TestMisspelledMM2KeysAreCaught: a misspelt top-level, flow or
// connector key, or a bad value, is reported by name.
func TestMisspelledMM2KeysAreCaught(t *testing.T) {
	base := readProps(t, mm2File)
	for _, c := range []struct{ key, value, want string }{
		{"replication.factr", "3", "replication.factr"},
		{"primary->dr.topic", "orders", "topic"},
		{"sync.group.offsets.enabled", "yes", "sync.group.offsets.enabled"},
		{"tasks.max", "0", "tasks.max"},
		{"emit.checkpoint.interval.seconds", "10", "emit.checkpoint.interval.seconds"},
		{"offset.storage.replication.factor", "three", "offset.storage.replication.factor"},
	} {
		props := maps.Clone(base)
		props[c.key] = c.value
		if _, problems := mm2Problems(props); !mentions(problems, c.want) {
			t.Errorf("%s=%s: problems %q do not mention %q", c.key, c.value, problems, c.want)
		}
	}
}
