package runtime

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/internal/inproc"
)

// ClientKind is which Kafka client a set of properties configures.
type ClientKind string

const (
	ProducerClient ClientKind = "producer"
	ConsumerClient ClientKind = "consumer"
	AdminClient    ClientKind = "admin"
)

// Connector-level client override prefixes (KIP-458).
const (
	ProducerOverridePrefix = "producer.override."
	ConsumerOverridePrefix = "consumer.override."
	AdminOverridePrefix    = "admin.override."
)

// ClientProps assembles a client's Kafka properties as Kafka's Worker
// does: the runtime's own settings first (base), then the worker's
// "producer."/"consumer."/"admin." prefixed properties, then the
// connector's overrides. Admin clients also inherit the worker's
// top-level properties, as Kafka's do for backward compatibility.
func (w *WorkerConfig) ClientProps(kind ClientKind, base, overrides map[string]string) map[string]string {
	props := map[string]string{"bootstrap.servers": strings.Join(w.BootstrapServers, ",")}
	if kind == AdminClient {
		for k, v := range w.Originals() {
			if _, known := clientKeys(AdminClient)[k]; known {
				props[k] = v
			}
		}
	}
	maps.Copy(props, base)
	maps.Copy(props, w.Config.OriginalsWithPrefix(string(kind)+"."))
	maps.Copy(props, overrides)
	return props
}

// ClientOpts returns franz-go options for the worker's own clients
// (internal topics, admin), from bootstrap.servers and the top-level
// client settings of worker.properties.
func (w *WorkerConfig) ClientOpts(log *slog.Logger) ([]kgo.Opt, error) {
	props := map[string]string{"bootstrap.servers": strings.Join(w.BootstrapServers, ",")}
	for k, v := range w.Originals() {
		if _, known := clientKeys(AdminClient)[k]; known {
			props[k] = v
		}
	}
	return KafkaClientOpts(AdminClient, props, log)
}

// clientKeys lists the keys Kafka defines for a client kind.
func clientKeys(kind ClientKind) map[string]bool {
	keys := map[string]bool{}
	for _, k := range kafkaDefs()[string(kind)] {
		keys[k.Name] = true
	}
	return keys
}

// KafkaClientOpts maps Kafka client properties (Java client names) to
// franz-go options. Settings franz-go has no counterpart for are logged
// and ignored; settings that would change behaviour silently if ignored
// (security protocols Fjord cannot speak) are errors.
func KafkaClientOpts(kind ClientKind, props map[string]string, log *slog.Logger) ([]kgo.Opt, error) {
	if log == nil {
		log = slog.Default()
	}
	var opts []kgo.Opt
	var problems []string
	intOf := func(k string) (int64, bool) {
		v, ok := props[k]
		if !ok {
			return 0, false
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			problems = append(problems, fmt.Sprintf("Invalid value %s for configuration %s: Not a number of type LONG", v, k))
			return 0, false
		}
		return n, true
	}
	durOf := func(k string) (time.Duration, bool) {
		n, ok := intOf(k)
		return ms(n), ok
	}
	var ignored []string
	// TLS and SASL (clientsecurity.go).
	sec, secProblems := clientSecurityOpts(props)
	opts = append(opts, sec...)
	problems = append(problems, secProblems...)
	for _, k := range slices.Sorted(maps.Keys(props)) {
		v := strings.TrimSpace(props[k])
		if securityKeys[k] {
			continue
		}
		switch k {
		case "bootstrap.servers":
			var seeds []string
			for _, s := range strings.Split(v, ",") {
				if s = strings.TrimSpace(s); s != "" {
					// Kafka accepts listener-style addresses (SASL_SSL://host:port).
					if _, hostPort, ok := strings.Cut(s, "://"); ok {
						s = hostPort
					}
					seeds = append(seeds, s)
				}
			}
			opts = append(opts, kgo.SeedBrokers(seeds...))
		case "client.id":
			if v != "" {
				opts = append(opts, kgo.ClientID(v))
			}
		case "request.timeout.ms":
			if d, ok := durOf(k); ok {
				opts = append(opts, kgo.RequestTimeoutOverhead(d))
				if kind == ProducerClient {
					opts = append(opts, kgo.ProduceRequestTimeout(d))
				}
			}
		case "metadata.max.age.ms":
			if d, ok := durOf(k); ok {
				opts = append(opts, kgo.MetadataMaxAge(d))
			}
		case "retry.backoff.ms":
			if d, ok := durOf(k); ok {
				opts = append(opts, kgo.RetryBackoffFn(func(int) time.Duration { return d }))
			}
		case "connections.max.idle.ms":
			if d, ok := durOf(k); ok {
				opts = append(opts, kgo.ConnIdleTimeout(d))
			}
		case "socket.connection.setup.timeout.ms":
			if d, ok := durOf(k); ok {
				opts = append(opts, kgo.DialTimeout(d))
			}
		// Producer.
		case "acks":
			if kind != ProducerClient {
				continue
			}
			switch v {
			case "all", "-1":
				opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
			case "1":
				opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
			case "0":
				opts = append(opts, kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite())
			default:
				problems = append(problems, fmt.Sprintf("Invalid value %s for configuration acks: String must be one of: all, -1, 0, 1", v))
			}
		case "enable.idempotence":
			if kind == ProducerClient && strings.EqualFold(v, "false") {
				opts = append(opts, kgo.DisableIdempotentWrite())
			}
		case "linger.ms":
			if d, ok := durOf(k); ok && kind == ProducerClient {
				opts = append(opts, kgo.ProducerLinger(d))
			}
		case "max.request.size":
			if n, ok := intOf(k); ok && kind == ProducerClient {
				opts = append(opts, kgo.ProducerBatchMaxBytes(int32(n)))
			}
		case "batch.size":
			// franz-go fills a batch while the previous one is in flight,
			// up to max.request.size; there is no target size to set.
			if kind == ProducerClient {
				ignored = append(ignored, k)
			}
		case "buffer.memory":
			if n, ok := intOf(k); ok && kind == ProducerClient {
				opts = append(opts, kgo.MaxBufferedBytes(int(n)))
			}
		case "compression.type":
			if kind != ProducerClient {
				continue
			}
			switch strings.ToLower(v) {
			case "none":
				opts = append(opts, kgo.ProducerBatchCompression(kgo.NoCompression()))
			case "gzip":
				opts = append(opts, kgo.ProducerBatchCompression(kgo.GzipCompression()))
			case "snappy":
				opts = append(opts, kgo.ProducerBatchCompression(kgo.SnappyCompression()))
			case "lz4":
				opts = append(opts, kgo.ProducerBatchCompression(kgo.Lz4Compression()))
			case "zstd":
				opts = append(opts, kgo.ProducerBatchCompression(kgo.ZstdCompression()))
			default:
				problems = append(problems, fmt.Sprintf("Invalid value %s for configuration compression.type: String must be one of: none, gzip, snappy, lz4, zstd", v))
			}
		case "delivery.timeout.ms":
			if d, ok := durOf(k); ok && kind == ProducerClient {
				opts = append(opts, kgo.RecordDeliveryTimeout(d))
			}
		case "retries":
			if n, ok := intOf(k); ok && kind == ProducerClient {
				opts = append(opts, kgo.RecordRetries(int(n)))
			}
		case "max.in.flight.requests.per.connection":
			if n, ok := intOf(k); ok && kind == ProducerClient && n > 0 {
				opts = append(opts, kgo.MaxProduceRequestsInflightPerBroker(int(n)))
			}
		// Consumer.
		case "fetch.max.bytes":
			if n, ok := intOf(k); ok && kind == ConsumerClient {
				opts = append(opts, kgo.FetchMaxBytes(int32(n)))
			}
		case "fetch.min.bytes":
			if n, ok := intOf(k); ok && kind == ConsumerClient {
				opts = append(opts, kgo.FetchMinBytes(int32(n)))
			}
		case "fetch.max.wait.ms":
			if d, ok := durOf(k); ok && kind == ConsumerClient {
				opts = append(opts, kgo.FetchMaxWait(d))
			}
		case "max.partition.fetch.bytes":
			if n, ok := intOf(k); ok && kind == ConsumerClient {
				opts = append(opts, kgo.FetchMaxPartitionBytes(int32(n)))
			}
		case "auto.offset.reset":
			if kind != ConsumerClient {
				continue
			}
			switch strings.ToLower(v) {
			case "earliest":
				opts = append(opts, kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			case "latest":
				opts = append(opts, kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()))
			case "none":
				opts = append(opts, kgo.ConsumeResetOffset(kgo.NoResetOffset()))
			default:
				problems = append(problems, fmt.Sprintf("Invalid value %s for configuration auto.offset.reset: String must be one of: latest, earliest, none", v))
			}
		case "isolation.level":
			if kind == ConsumerClient && strings.EqualFold(v, "read_committed") {
				opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
			}
		case "session.timeout.ms":
			if d, ok := durOf(k); ok && kind == ConsumerClient {
				opts = append(opts, kgo.SessionTimeout(d))
			}
		case "heartbeat.interval.ms":
			if d, ok := durOf(k); ok && kind == ConsumerClient {
				opts = append(opts, kgo.HeartbeatInterval(d))
			}
		case "max.poll.interval.ms":
			if d, ok := durOf(k); ok && kind == ConsumerClient {
				opts = append(opts, kgo.RebalanceTimeout(d))
			}
		case "group.instance.id":
			if kind == ConsumerClient && v != "" {
				opts = append(opts, kgo.InstanceID(v))
			}
		case "partition.assignment.strategy":
			if kind != ConsumerClient {
				continue
			}
			bs, err := balancers(v)
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			opts = append(opts, kgo.Balancers(bs...))
		// Read by the runtime itself (ConsumerSettings), or meaningless
		// for franz-go (serializers are bytes; Connect commits itself).
		case "group.id", "max.poll.records", "enable.auto.commit", "auto.commit.interval.ms",
			"key.serializer", "value.serializer", "key.deserializer", "value.deserializer",
			"max.block.ms", "client.dns.lookup", "send.buffer.bytes", "receive.buffer.bytes",
			"reconnect.backoff.ms", "reconnect.backoff.max.ms", "retry.backoff.max.ms",
			"metric.reporters", "metrics.num.samples", "metrics.sample.window.ms", "metrics.recording.level",
			"default.api.timeout.ms", "socket.connection.setup.timeout.max.ms", "check.crcs",
			"allow.auto.create.topics", "partitioner.class", "partitioner.ignore.keys",
			"partitioner.adaptive.partitioning.enable", "partitioner.availability.timeout.ms",
			"interceptor.classes", "exclude.internal.topics", "client.rack", "metadata.max.idle.ms",
			"auto.include.jmx.reporter", "enable.metrics.push", "group.protocol", "group.remote.assignor",
			"metadata.recovery.strategy", "metadata.recovery.rebootstrap.trigger.ms", "bootstrap.resolve.timeout.ms":
		default:
			if k == "config.providers" || strings.HasPrefix(k, "config.providers.") {
				continue // resolved by the runtime before any client sees a value
			}
			if strings.HasPrefix(k, "ssl.") || strings.HasPrefix(k, "sasl.") {
				ignored = append(ignored, k)
				continue
			}
			if _, known := clientKeys(kind)[k]; known {
				ignored = append(ignored, k)
			}
			// Unknown keys are ignored silently, as Kafka's clients only
			// warn about them (connector configs carry many).
		}
	}
	if len(ignored) > 0 {
		log.Warn("Kafka client settings without a franz-go counterpart are ignored", "client", string(kind), "keys", ignored)
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s client config: %s", kind, strings.Join(problems, "; "))
	}
	if kind != ConsumerClient && inproc.Active() && !usesTLS(props) {
		// In a process that also runs the broker (fjord dev), producers
		// and admin clients reach it without a socket; other addresses
		// are dialed over TCP as usual. With TLS the client dials itself
		// (kgo takes one or the other). Consumers stay on TCP, where the
		// broker sends fetched records with sendfile: through the pipe
		// it must read them into memory first, and the sink benchmark
		// lost 12% that way.
		opts = append(opts, kgo.Dialer(inproc.Dial))
	}
	return opts, nil
}

// usesTLS reports whether props make the client dial with TLS.
func usesTLS(props map[string]string) bool {
	p := strings.ToUpper(strings.TrimSpace(props["security.protocol"]))
	return p == "SSL" || p == "SASL_SSL"
}

// balancers maps Kafka assignor class names to franz-go balancers.
func balancers(list string) ([]kgo.GroupBalancer, error) {
	var out []kgo.GroupBalancer
	for _, c := range strings.Split(list, ",") {
		c = strings.TrimSpace(c)
		name := c[strings.LastIndexByte(c, '.')+1:]
		switch name {
		case "RangeAssignor", "range":
			out = append(out, kgo.RangeBalancer())
		case "RoundRobinAssignor", "roundrobin":
			out = append(out, kgo.RoundRobinBalancer())
		case "StickyAssignor", "sticky":
			out = append(out, kgo.StickyBalancer())
		case "CooperativeStickyAssignor", "cooperative-sticky":
			out = append(out, kgo.CooperativeStickyBalancer())
		case "":
		default:
			return nil, fmt.Errorf("partition.assignment.strategy %s is not supported (RangeAssignor, RoundRobinAssignor, StickyAssignor, CooperativeStickyAssignor are)", c)
		}
	}
	return out, nil
}

// Client override policies (KIP-458): which connector overrides are
// allowed.
var principalOverrides = []string{"sasl.jaas.config", "sasl.mechanism", "security.protocol"}

// checkOverrides returns one ConfigValue per override with an error for
// those the policy forbids (Kafka's ConnectorClientConfigOverridePolicy).
func checkOverrides(policy string, overrides map[string]string) []connect.ConfigValue {
	var out []connect.ConfigValue
	for _, k := range slices.Sorted(maps.Keys(overrides)) {
		cv := connect.ConfigValue{Name: k, Value: overrides[k], Visible: true}
		allowed := policy == "All" || (policy == "Principal" && slices.Contains(principalOverrides, k))
		if !allowed {
			cv.Errors = append(cv.Errors, fmt.Sprintf("The '%s' policy does not allow '%s' to be overridden in the connector configuration.", policy, k))
		}
		out = append(out, cv)
	}
	return out
}
