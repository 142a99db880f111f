package mirrorconfig

import (
	"maps"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect/runtime"
)

func TestClientProps(t *testing.T) {
	props := map[string]string{
		"name":                                   "mm",
		SourceClusterAlias:                       "a",
		TargetClusterAlias:                       "b",
		"source.cluster.bootstrap.servers":       "s:9092",
		"source.cluster.security.protocol":       "SSL",
		"source.cluster.ssl.truststore.location": "/ts",
		// Not a connection key: MM2 keeps it out of the clients.
		"source.cluster.client.id":           "dropped",
		"source.cluster.linger.ms":           "5",
		"target.cluster.bootstrap.servers":   "t:9092",
		"consumer.fetch.max.bytes":           "100",
		"consumer.max.poll.records":          "7",
		"source.consumer.fetch.max.bytes":    "200",
		"source.consumer.enable.auto.commit": "true",
		"target.consumer.isolation.level":    "read_committed",
		"producer.acks":                      "1",
		"target.producer.acks":               "all",
		"admin.request.timeout.ms":           "1000",
		"source.admin.client.id":             "mine",
	}
	cases := []struct {
		cluster string
		kind    runtime.ClientKind
		role    string
		want    map[string]string
	}{
		{Source, runtime.ConsumerClient, "", map[string]string{
			"bootstrap.servers": "s:9092", "security.protocol": "SSL", "ssl.truststore.location": "/ts",
			"fetch.max.bytes": "200", "max.poll.records": "7",
			"enable.auto.commit": "false", "auto.offset.reset": "earliest",
			"client.id": "a->b|mm",
		}},
		{Target, runtime.ConsumerClient, "offset-syncs-target-consumer", map[string]string{
			"bootstrap.servers": "t:9092", "fetch.max.bytes": "100", "max.poll.records": "7",
			"isolation.level": "read_committed", "enable.auto.commit": "false", "auto.offset.reset": "earliest",
			"client.id": "a->b|mm|offset-syncs-target-consumer",
		}},
		{Target, runtime.ProducerClient, "", map[string]string{
			"bootstrap.servers": "t:9092", "acks": "all", "client.id": "a->b|mm",
		}},
		{Source, runtime.ProducerClient, "offset-syncs-source-producer", map[string]string{
			"bootstrap.servers": "s:9092", "security.protocol": "SSL", "ssl.truststore.location": "/ts",
			"acks": "1", "client.id": "a->b|mm|offset-syncs-source-producer",
		}},
		{Source, runtime.AdminClient, "", map[string]string{
			"bootstrap.servers": "s:9092", "security.protocol": "SSL", "ssl.truststore.location": "/ts",
			"request.timeout.ms": "1000", "client.id": "mine|a->b|mm",
		}},
	}
	for _, c := range cases {
		got, err := ClientProps(props, c.cluster, c.kind, c.role)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got, c.want) {
			t.Errorf("%s %s:\n got %v\nwant %v", c.cluster, c.kind, got, c.want)
		}
	}

	// auto.offset.reset is only a default.
	got, _ := ClientProps(map[string]string{"source.consumer.auto.offset.reset": "latest"}, Source, runtime.ConsumerClient, "")
	if got["auto.offset.reset"] != "latest" {
		t.Errorf("auto.offset.reset override lost: %v", got)
	}
	if _, err := ClientProps(props, "middle", runtime.AdminClient, ""); err == nil {
		t.Error("unknown cluster accepted")
	}
	if _, err := Client(map[string]string{SourceClusterAlias: "a"}, Source, runtime.AdminClient); err == nil {
		t.Error("a client without bootstrap.servers must not be built")
	}
	if _, err := Client(map[string]string{"source.cluster.bootstrap.servers": "x:1", "source.cluster.security.protocol": "SASL_SSL"}, Source, runtime.AdminClient); err == nil {
		t.Error("unsupported security.protocol accepted")
	}
}

// enable.auto.commit=false reaches franz-go when the caller consumes in
// a group (franz-go autocommits by default, and refuses the option
// without a group).
func TestClientGroupDoesNotAutocommit(t *testing.T) {
	props := map[string]string{"source.cluster.bootstrap.servers": "127.0.0.1:1"}
	cl, err := Client(props, Source, runtime.ConsumerClient, kgo.ConsumerGroup("g"), kgo.ConsumeTopics("t"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if cl.OptValue(kgo.DisableAutoCommit) != true {
		t.Error("group consumer would autocommit")
	}
	if got := cl.OptValue(kgo.ClientID); got != "->target|" {
		t.Errorf("client id %v", got)
	}
	plain, err := Client(props, Source, runtime.ConsumerClient, kgo.ConsumeTopics("t"))
	if err != nil {
		t.Fatal(err)
	}
	plain.Close()
}
