package mirrorconfig

import (
	"fmt"
	"log/slog"
	"maps"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/runtime"
)

// Cluster names the two clusters of a flow in the client helpers.
const (
	Source = "source"
	Target = "target"
)

// Prefixes of the client settings in a mirror connector's config.
const (
	SourceClusterPrefix = "source.cluster."
	TargetClusterPrefix = "target.cluster."
	SourcePrefix        = "source."
	TargetPrefix        = "target."
)

// isClusterKey says whether a <cluster>.cluster.* key reaches the
// clients: MM2 keeps only MirrorClientConfig.CLIENT_CONFIG_DEF's names,
// bootstrap.servers, security.protocol and the client ssl.* and sasl.*
// settings. Other client settings go through the per-client prefixes, so
// that source.cluster.client.id, say, cannot leak into every client.
func isClusterKey(k string) bool {
	return k == "bootstrap.servers" || k == SecurityProtocol ||
		strings.HasPrefix(k, "ssl.") || strings.HasPrefix(k, "sasl.")
}

// ClientProps assembles the Kafka properties of one client of a flow as
// MM2's MirrorConnectorConfig does (sourceConsumerConfig,
// targetAdminConfig, ...), lowest precedence first:
//  1. <cluster>.cluster.* limited to connection and security keys;
//  2. the top-level <kind>.* settings (consumer.*, producer.*, admin.*);
//  3. <cluster>.<kind>.* (source.consumer.*, target.producer.*, ...).
//
// Consumers get enable.auto.commit=false and, unless set,
// auto.offset.reset=earliest. client.id is the user's (if any), then
// "<source>-><target>|<connector name>", then "|<role>" when role is set,
// joined by "|". cluster is Source or Target.
func ClientProps(props map[string]string, cluster string, kind runtime.ClientKind, role string) (map[string]string, error) {
	if cluster != Source && cluster != Target {
		return nil, fmt.Errorf("mirror client: cluster must be %q or %q, not %q", Source, Target, cluster)
	}
	switch kind {
	case runtime.ProducerClient, runtime.ConsumerClient, runtime.AdminClient:
	default:
		return nil, fmt.Errorf("mirror client: unknown client kind %q", kind)
	}
	out := map[string]string{}
	for k, v := range connect.WithPrefix(props, cluster+".cluster.") {
		if isClusterKey(k) {
			out[k] = v
		}
	}
	maps.Copy(out, connect.WithPrefix(props, string(kind)+"."))
	maps.Copy(out, connect.WithPrefix(props, cluster+"."+string(kind)+"."))
	if kind == runtime.ConsumerClient {
		out["enable.auto.commit"] = "false"
		if _, ok := out["auto.offset.reset"]; !ok {
			out["auto.offset.reset"] = "earliest"
		}
	}
	id := entityLabel(props)
	if role != "" {
		id += "|" + role
	}
	if user, ok := out["client.id"]; ok {
		id = user + "|" + id
	}
	out["client.id"] = id
	return out, nil
}

// Client builds a franz-go client for one side of the flow from
// ClientProps (no role); opts are applied last, so a caller can add
// topics to consume, a group, or its own kgo.ClientID.
func Client(props map[string]string, cluster string, kind runtime.ClientKind, opts ...kgo.Opt) (*kgo.Client, error) {
	cp, err := ClientProps(props, cluster, kind, "")
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(cp["bootstrap.servers"]) == "" {
		return nil, fmt.Errorf("mirror %s %s client: %sbootstrap.servers is not set", cluster, kind, cluster+".cluster.")
	}
	base, err := runtime.KafkaClientOpts(kind, cp, slog.Default().With("mirror", cluster))
	if err != nil {
		return nil, fmt.Errorf("mirror %s %s client: %w", cluster, kind, err)
	}
	cl, err := kgo.NewClient(append(base, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("mirror %s %s client: %w", cluster, kind, err)
	}
	// KafkaClientOpts leaves enable.auto.commit to the Connect runtime;
	// here nobody else reads it, and franz-go's group consumers commit by
	// default, so a caller that adds kgo.ConsumerGroup must not autocommit
	// behind MM2's back (enable.auto.commit is always false for mirror
	// consumers). franz-go rejects DisableAutoCommit without a group, and
	// the options cannot be inspected before a client exists, so the
	// client is rebuilt when it has a group (no connection is made yet).
	if kind == runtime.ConsumerClient && cl.OptValue(kgo.ConsumerGroup) != "" &&
		cl.OptValue(kgo.DisableAutoCommit) != true && cl.OptValue(kgo.AutoCommitMarks) != true {
		cl.Close()
		if cl, err = kgo.NewClient(append(append(base, opts...), kgo.DisableAutoCommit())...); err != nil {
			return nil, fmt.Errorf("mirror %s %s client: %w", cluster, kind, err)
		}
	}
	return cl, nil
}

// Admin builds an admin client for one side of the flow; close releases
// its connections.
func Admin(props map[string]string, cluster string) (adm *kadm.Client, close func(), err error) {
	cl, err := Client(props, cluster, runtime.AdminClient)
	if err != nil {
		return nil, nil, err
	}
	return kadm.NewClient(cl), cl.Close, nil
}
