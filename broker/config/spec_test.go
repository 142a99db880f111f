package config

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fjordhq/fjord/internal/kafkaref"
)

// TestValuesAgainstKafka feeds the ~4900 (key, value) cases of
// internal/kafkaref's validation probe through our parsing and validators
// and expects Kafka's verdict: the same canonical value, or the same
// error message word for word.
func TestValuesAgainstKafka(t *testing.T) {
	cases, err := kafkaref.LoadValidationCases()
	if err != nil {
		t.Fatal(err)
	}
	var checked int
	for _, c := range cases {
		tab := brokerTable
		if c.Resource == "topic" {
			tab = topicTable
		}
		s, ok := tab.byName[c.Name]
		if !ok {
			t.Errorf("%s key %s: Kafka knows it, we do not", c.Resource, c.Name)
			continue
		}
		v, err := s.parse(c.Value)
		if s.Type == TypeClass && c.Value != "" && !c.OK {
			// Intentional: Kafka loads the class; we cannot, so any
			// non-empty class name is accepted.
			if err != nil {
				t.Errorf("%s=%q: class names are accepted, got %v", c.Name, c.Value, err)
			}
			continue
		}
		checked++
		switch {
		case c.OK && err != nil:
			t.Errorf("%s %s=%q: Kafka accepts it (%v), we say %v", c.Resource, c.Name, c.Value, deref(c.Canonical), err)
		case !c.OK && err == nil:
			t.Errorf("%s %s=%q: Kafka says %q, we accept it as %q", c.Resource, c.Name, c.Value, c.Error, canonical(s.Type, v))
		case !c.OK && err.Error() != c.Error:
			t.Errorf("%s %s=%q: message\n got %q\nwant %q", c.Resource, c.Name, c.Value, err.Error(), c.Error)
		case c.OK && s.Type != TypePassword && canonical(s.Type, v) != deref(c.Canonical):
			t.Errorf("%s %s=%q: canonical %q, Kafka %q", c.Resource, c.Name, c.Value, canonical(s.Type, v), deref(c.Canonical))
		}
	}
	if checked < 4000 {
		t.Fatalf("only %d cases checked; the probe file looks truncated", checked)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}

// TestSpecsMatchKafka checks the parts of the spec tables that are not
// simply copied by the generator.
func TestSpecsMatchKafka(t *testing.T) {
	defs, err := kafkaref.LoadConfigDefs()
	if err != nil {
		t.Fatal(err)
	}
	// Dynamic update modes: exactly Kafka's ALL_DYNAMIC_CONFIGS.
	var dynamic []string
	for _, s := range brokerTable.specs {
		if s.Update != ReadOnly {
			dynamic = append(dynamic, s.Name)
		}
	}
	if !sameSet(dynamic, defs.AllDynamic) {
		t.Errorf("dynamic broker keys differ from Kafka's:\n ours  %v\n kafka %v", dynamic, defs.AllDynamic)
	}
	// brokerSynonyms is Kafka's brokerConfigSynonyms.
	for _, k := range defs.Broker {
		if got := brokerSynonyms(k.Name); !slices.Equal(got, k.Synonyms) {
			t.Errorf("brokerSynonyms(%s) = %v, Kafka %v", k.Name, got, k.Synonyms)
		}
	}
	// Every topic synonym is a broker key, and the first is Kafka's primary.
	for _, s := range topicTable.specs {
		for _, syn := range s.Synonyms {
			if _, ok := brokerTable.byName[syn.Name]; !ok {
				t.Errorf("%s: synonym %s is not a broker key", s.Name, syn.Name)
			}
		}
		if p, ok := defs.TopicConfigSynonyms[s.Name]; ok && (len(s.Synonyms) == 0 || s.Synonyms[0].Name != p) {
			t.Errorf("%s: primary broker synonym %v, Kafka %s", s.Name, s.Synonyms, p)
		}
	}
	// Validators print as Kafka's do (CLASS keys aside: Kafka has none).
	for _, tab := range []struct {
		t    *table
		keys []kafkaref.ConfigKey
	}{{topicTable, defs.Topic}, {brokerTable, defs.Broker}} {
		for _, k := range tab.keys {
			s := tab.t.byName[k.Name]
			want := ""
			if k.Validator != nil {
				want = *k.Validator
			}
			got := ""
			if s.Validator != nil {
				got = s.Validator.String()
			}
			if s.Type != TypeClass && got != want {
				t.Errorf("%s validator %q, Kafka %q", k.Name, got, want)
			}
		}
	}
}

// TestNotes guards the hand-written side of the table: notes name real
// keys, every topic key has one, and every broker key the brief names is
// documented.
func TestNotes(t *testing.T) {
	for name := range topicNotes {
		if _, ok := topicTable.byName[name]; !ok {
			t.Errorf("topic note for unknown key %s", name)
		}
	}
	for _, s := range topicTable.specs {
		if _, ok := topicNotes[s.Name]; !ok {
			t.Errorf("topic key %s has no note", s.Name)
		}
	}
	for name := range brokerNotes {
		if _, ok := brokerTable.byName[name]; !ok {
			t.Errorf("broker note for unknown key %s", name)
		}
	}
	for _, name := range strings.Fields(`node.id broker.id process.roles controller.quorum.voters controller.listener.names
		listeners advertised.listeners listener.security.protocol.map log.dirs log.dir num.partitions
		default.replication.factor auto.create.topics.enable delete.topic.enable log.retention.hours
		log.retention.minutes log.retention.ms log.retention.bytes log.segment.bytes log.roll.ms log.roll.hours
		log.cleanup.policy message.max.bytes log.flush.interval.messages log.flush.interval.ms
		log.flush.scheduler.interval.ms log.index.interval.bytes log.index.size.max.bytes
		log.retention.check.interval.ms log.cleaner.enable log.cleaner.threads log.cleaner.backoff.ms
		log.cleaner.min.cleanable.ratio log.cleaner.delete.retention.ms log.cleaner.min.compaction.lag.ms
		log.cleaner.max.compaction.lag.ms log.message.timestamp.type num.recovery.threads.per.data.dir
		offsets.topic.num.partitions offsets.topic.replication.factor offsets.retention.minutes
		offsets.retention.check.interval.ms offset.metadata.max.bytes group.initial.rebalance.delay.ms
		group.min.session.timeout.ms group.max.session.timeout.ms group.max.size socket.request.max.bytes
		socket.send.buffer.bytes socket.receive.buffer.bytes num.network.threads num.io.threads
		min.insync.replicas compression.type producer.id.expiration.ms transactional.id.expiration.ms
		log.segment.delete.delay.ms unclean.leader.election.enable replica.lag.time.max.ms broker.rack`) {
		s, ok := BrokerSpec(name)
		if !ok {
			t.Errorf("%s is not a known broker key", name)
			continue
		}
		if _, ok := brokerNotes[name]; !ok {
			t.Errorf("%s has no note saying what Fjord does with it", name)
		}
		if !s.Used && !strings.Contains(s.Doc, "ignored") {
			t.Errorf("%s is not used and its doc does not say it is ignored: %q", name, s.Doc)
		}
	}
}

// TestGeneratedTableIsCurrent regenerates zz_kafka_specs.go in memory and
// compares, so a changed golden file cannot leave a stale table behind.
func TestGeneratedTableIsCurrent(t *testing.T) {
	out := filepath.Join(t.TempDir(), "specs.go")
	cmd := exec.Command("go", "run", "./internal/gen", "-o", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generator: %v\n%s", err, b)
	}
	got, _ := os.ReadFile(out)
	want, _ := os.ReadFile("zz_kafka_specs.go")
	if !bytes.Equal(got, want) {
		t.Fatal("zz_kafka_specs.go is stale: run go generate ./broker/config")
	}
}
