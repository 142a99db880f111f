package broker_test

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
)

// Brokers replicate over a SASL_SSL inter-broker listener: followers dial
// the leader with TLS (the listener's truststore) and SASL PLAIN with the
// JAAS line's username/password. With min.insync.replicas=3 an acks=all
// produce succeeds only once both followers have fetched over it.
func TestInterBrokerSASLSSL(t *testing.T) {
	pki := newTestPKI(t)
	c := testkit.StartInProcCluster(t, 3, map[string]string{
		// The listener named PLAINTEXT by the cluster helper runs SASL_SSL.
		"listener.security.protocol.map":                 "PLAINTEXT:SASL_SSL,CONTROLLER:PLAINTEXT",
		"ssl.keystore.type":                              "PEM",
		"ssl.keystore.location":                          pki.Server,
		"ssl.truststore.type":                            "PEM",
		"ssl.truststore.location":                        pki.CA,
		"sasl.enabled.mechanisms":                        "PLAIN",
		"sasl.mechanism.inter.broker.protocol":           "PLAIN",
		"listener.name.plaintext.plain.sasl.jaas.config": plainJAAS,
		"min.insync.replicas":                            "3",
	})
	lc := listenerCases()[3] // SASL PLAIN
	lc.protocol = "SASL_SSL"
	ctx := testkit.Context(t, 90*time.Second)
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(strings.Split(c.Bootstrap(), ",")...), kgo.RequiredAcks(kgo.AllISRAcks())},
		lc.franzOpts(t, pki, "alice", "alice-secret")...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 3, 3, nil, "replicated"); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "replicated", Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatalf("acks=all produce %d with min.insync.replicas=3: %v", i, err)
		}
	}
	td, err := adm.ListTopics(ctx, "replicated")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range td["replicated"].Partitions {
		if len(p.ISR) != 3 {
			t.Fatalf("partition %d ISR %v, want all three replicas in sync over SASL_SSL", p.Partition, p.ISR)
		}
	}
}
