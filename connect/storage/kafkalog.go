package storage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// KafkaTopic says where a topic-backed store lives and how to create it.
type KafkaTopic struct {
	// Name is the topic; Property the worker property that named it (for
	// error messages: "offset.storage.topic").
	Name     string
	Property string
	// Partitions and ReplicationFactor are used when the topic is
	// created (-1: the broker's default).
	Partitions        int32
	ReplicationFactor int16
	// Create allows creating the topic when missing
	// (internal.topics.automatic.creation.enable).
	Create bool
	// Configs are extra topic configs for creation (the worker's
	// offset.storage.* / config.storage.* / status.storage.* topic
	// settings); cleanup.policy=compact is always set.
	Configs map[string]string
}

// KafkaOptions are what every topic-backed store needs to reach Kafka.
type KafkaOptions struct {
	// ClientOpts are the worker's client options (seed brokers, client id,
	// timeouts, TLS...). Producer and consumer settings the store needs
	// for correctness are added after them.
	ClientOpts []kgo.Opt
	Logger     *slog.Logger
	// ReadTimeout bounds the initial read to the end (default 2 min).
	ReadTimeout time.Duration
	// TopicTimeout bounds waiting for the topic to become usable when it
	// is missing or not led yet (default DefaultTopicTimeout, Kafka's 30 s).
	TopicTimeout time.Duration
}

// kafkaLog is a compacted topic read from the start into memory and kept
// current by a consumer goroutine (Kafka's KafkaBasedLog).
type kafkaLog struct {
	topic        KafkaTopic
	topicTimeout time.Duration
	purpose      string
	log          *slog.Logger
	cl           *kgo.Client
	adm          *kadm.Client
	consume      func(r *kgo.Record)
	created      bool // ensureTopic created the topic

	cancel context.CancelFunc
	done   chan struct{}

	mu        sync.Mutex
	positions map[int32]int64 // next offset to consume, per partition
	advanced  chan struct{}   // closed and replaced when positions move
}

// startKafkaLog makes sure the topic exists and is compacted, starts
// consuming it from the beginning, and returns once everything that was
// in it has been passed to consume.
func startKafkaLog(ctx context.Context, opts KafkaOptions, topic KafkaTopic, purpose string, consume func(*kgo.Record)) (*kafkaLog, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	l := &kafkaLog{topic: topic, topicTimeout: opts.TopicTimeout, purpose: purpose, log: log.With("topic", topic.Name), consume: consume,
		positions: map[int32]int64{}, advanced: make(chan struct{})}
	// Metadata is cached for 5s by default; a topic just created would
	// look missing for that long.
	admCl, err := kgo.NewClient(append(append([]kgo.Opt{}, opts.ClientOpts...), kgo.MetadataMinAge(50*time.Millisecond))...)
	if err != nil {
		return nil, fmt.Errorf("%s topic %s: create admin client: %w", purpose, topic.Name, err)
	}
	l.adm = kadm.NewClient(admCl)
	partitions, err := l.ensureTopic(ctx)
	if err != nil {
		l.adm.Close()
		return nil, err
	}
	assign := map[int32]kgo.Offset{}
	for _, p := range partitions {
		assign[p] = kgo.NewOffset().AtStart()
		l.positions[p] = 0
	}
	clOpts := append([]kgo.Opt{}, opts.ClientOpts...)
	clOpts = append(clOpts,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic.Name: assign}),
		// Every worker must see writes in the same order and none may be
		// lost: acks=all, idempotent, Kafka's hash of the key.
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)),
		kgo.ProducerLinger(0),
		kgo.FetchMaxWait(500*time.Millisecond),
	)
	if l.cl, err = kgo.NewClient(clOpts...); err != nil {
		l.adm.Close()
		return nil, fmt.Errorf("%s topic %s: create client: %w", purpose, topic.Name, err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	l.cancel, l.done = cancel, make(chan struct{})
	go l.run(runCtx)
	rt := opts.ReadTimeout
	if rt <= 0 {
		rt = 2 * time.Minute
	}
	rctx, rcancel := context.WithTimeout(ctx, rt)
	defer rcancel()
	if err := l.readToEnd(rctx); err != nil {
		l.Close()
		return nil, fmt.Errorf("%s topic %s: read to the end: %w", purpose, topic.Name, err)
	}
	return l, nil
}

// ensureTopic makes sure the topic exists and is usable, creating it if
// missing and allowed, then checks it as Kafka's workers do: compacted
// only, and (config topic) one partition.
//
// Workers that start together race for their internal topics: one sees
// the topic missing and gets TOPIC_ALREADY_EXISTS when it creates it,
// another sees it before its partitions have leaders
// (UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE), and with creation
// disabled an operator (or another worker) may create it a moment later.
// Like Kafka's TopicAdmin.createTopicsWithRetry and KafkaBasedLog.start,
// this retries with a backoff (100 ms doubling to 1 s) until the topic is
// usable or TopicTimeout has passed, then fails with Kafka's message and
// the last problem seen.
func (l *kafkaLog) ensureTopic(ctx context.Context) ([]int32, error) {
	t := l.topic
	timeout := l.topicTimeout
	if timeout <= 0 {
		timeout = DefaultTopicTimeout
	}
	deadline := time.Now().Add(timeout)
	backoff := 100 * time.Millisecond
	shortened := false
	for {
		parts, retry, err := l.tryTopic(ctx)
		if !retry {
			return parts, err
		}
		if errors.Is(err, errCreated) && !shortened {
			// The topic we created shows in the metadata within a few
			// milliseconds: look for it again soon (5 ms, doubling)
			// rather than after 100 ms, which for three internal topics
			// was most of a worker's start-up.
			shortened = true
			backoff = 5 * time.Millisecond
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s topic %s: %w (last problem: %v)", l.purpose, t.Name, ctx.Err(), err)
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, fmt.Errorf("Could not look up partition metadata for %s topic %s in allotted period (%v). This could indicate a connectivity issue, unavailable topic partitions, or if this is your first use of the topic it may have taken too long to create. Last problem: %w",
				l.purpose, t.Name, timeout, err)
		}
		level := slog.LevelInfo
		if errors.Is(err, errCreated) {
			level = slog.LevelDebug // expected, and brief
		}
		l.log.Log(ctx, level, "internal topic not usable yet, retrying", "purpose", l.purpose, "err", err, "remaining", left.Round(time.Millisecond))
		wait := min(backoff, left)
		backoff = min(2*backoff, time.Second)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%s topic %s: %w (last problem: %v)", l.purpose, t.Name, ctx.Err(), err)
		case <-time.After(wait):
		}
	}
}

// errCreated is tryTopic's "retry" after creating the topic.
var errCreated = errors.New("created; waiting for its metadata")

// DefaultTopicTimeout is how long a store waits for its topic to become
// usable: Kafka's KafkaBasedLog.CREATE_TOPIC_TIMEOUT_NS.
const DefaultTopicTimeout = 30 * time.Second

// retriableTopicErr reports whether a topic's error may clear by itself
// (metadata propagating, leaders being elected, brokers starting).
func retriableTopicErr(err error) bool {
	return errors.Is(err, kerr.UnknownTopicOrPartition) || errors.Is(err, kerr.LeaderNotAvailable) ||
		errors.Is(err, kerr.NotLeaderForPartition) || errors.Is(err, kerr.InvalidReplicationFactor) ||
		errors.Is(err, kerr.TopicAlreadyExists) || kerr.IsRetriable(err)
}

// tryTopic is one attempt of ensureTopic: the partitions when the topic
// is usable, retry when it may become so, or a permanent error.
func (l *kafkaLog) tryTopic(ctx context.Context) (parts []int32, retry bool, err error) {
	t := l.topic
	details, err := l.adm.ListTopics(ctx, t.Name)
	if err != nil {
		// The brokers may not answer yet (starting, unreachable).
		return nil, true, fmt.Errorf("describe: %w", err)
	}
	td, ok := details[t.Name]
	if !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
		if l.created {
			// Ours, not in this broker's metadata yet: creating it
			// again would only answer TOPIC_ALREADY_EXISTS.
			return nil, true, errCreated
		}
		if !t.Create {
			return nil, true, fmt.Errorf("topic '%s' supplied via the '%s' property does not exist and internal.topics.automatic.creation.enable is false; create it (compacted) or enable creation", t.Name, t.Property)
		}
		cfg := map[string]*string{}
		for k, v := range t.Configs {
			cfg[k] = kadm.StringPtr(v)
		}
		cfg["cleanup.policy"] = kadm.StringPtr("compact")
		parts := t.Partitions
		if parts == 0 {
			parts = -1
		}
		rf := t.ReplicationFactor
		if rf == 0 {
			rf = -1
		}
		resp, err := l.adm.CreateTopic(ctx, parts, rf, cfg, t.Name)
		if err == nil {
			err = resp.Err
		}
		switch {
		case err == nil:
			l.created = true
			l.log.Info("created internal topic", "purpose", l.purpose, "partitions", parts, "replication_factor", rf)
			// Look again: metadata may lag the creation.
			return nil, true, errCreated
		case errors.Is(err, kerr.TopicAlreadyExists):
			// Another worker created it between our look and our create.
			l.log.Info("internal topic created concurrently by another client", "purpose", l.purpose)
			return nil, true, fmt.Errorf("create: %w", err)
		case retriableTopicErr(err):
			// INVALID_REPLICATION_FACTOR while brokers are still
			// registering, timeouts: Kafka retries these.
			return nil, true, fmt.Errorf("create (%d partitions, replication factor %d): %w", parts, rf, err)
		default:
			return nil, false, fmt.Errorf("create %s topic %s (%d partitions, replication factor %d): %w", l.purpose, t.Name, parts, rf, err)
		}
	}
	if td.Err != nil {
		if retriableTopicErr(td.Err) {
			return nil, true, td.Err
		}
		return nil, false, fmt.Errorf("%s topic %s: %w", l.purpose, t.Name, td.Err)
	}
	if len(td.Partitions) == 0 {
		return nil, true, errors.New("no partitions in the metadata yet")
	}
	for _, p := range td.Partitions.Sorted() {
		if p.Err != nil && retriableTopicErr(p.Err) || p.Err == nil && p.Leader < 0 {
			return nil, true, fmt.Errorf("partition %d has no leader yet (%v)", p.Partition, p.Err)
		}
	}
	if t.Property == "config.storage.topic" && len(td.Partitions) != 1 {
		return nil, false, fmt.Errorf("Topic '%s' supplied via the '%s' property is required to have a single partition in order to guarantee consistency of connector configurations, but found %d partitions.", t.Name, t.Property, len(td.Partitions))
	}
	rc, err := l.adm.DescribeTopicConfigs(ctx, t.Name)
	if err == nil {
		if c, err := rc.On(t.Name, nil); err == nil {
			for _, kv := range c.Configs {
				if kv.Key == "cleanup.policy" && kv.Value != nil && *kv.Value != "compact" {
					return nil, false, fmt.Errorf("Topic '%s' supplied via the '%s' property is required to have 'cleanup.policy=compact' to guarantee consistency and durability of %s, but found the topic currently has 'cleanup.policy=%s'. Continuing would likely result in eventually losing %s and problems restarting this Connect cluster in the future. Change the '%s' property in the Connect worker configurations to use a topic with 'cleanup.policy=compact'.",
						t.Name, t.Property, l.purpose, *kv.Value, l.purpose, t.Property)
				}
			}
		}
	} else {
		l.log.Warn("could not check the cleanup policy of the internal topic", "err", err)
	}
	return td.Partitions.Numbers(), false, nil
}

func (l *kafkaLog) run(ctx context.Context) {
	defer close(l.done)
	for {
		fs := l.cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return
		}
		fs.EachError(func(t string, p int32, err error) {
			l.log.Warn("reading internal topic", "partition", p, "err", err)
		})
		moved := false
		fs.EachRecord(func(r *kgo.Record) {
			l.consume(r)
			l.mu.Lock()
			l.positions[r.Partition] = r.Offset + 1
			l.mu.Unlock()
			moved = true
		})
		if moved {
			l.mu.Lock()
			close(l.advanced)
			l.advanced = make(chan struct{})
			l.mu.Unlock()
		}
	}
}

// readToEnd returns once every record written before the call has been
// consumed (Kafka's KafkaBasedLog.readToEnd).
func (l *kafkaLog) readToEnd(ctx context.Context) error {
	ends, err := l.endOffsets(ctx)
	if err != nil {
		return err
	}
	for {
		l.mu.Lock()
		behind := false
		ends.Each(func(o kadm.ListedOffset) {
			if l.positions[o.Partition] < o.Offset {
				behind = true
			}
		})
		ch := l.advanced
		l.mu.Unlock()
		if !behind {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-l.done:
			return errors.New("log closed")
		case <-ch:
		}
	}
}

// endOffsets lists the topic's end offsets, retrying while partitions
// move or are not led yet (Kafka's TopicAdmin.retryEndOffsets) until ctx
// ends.
func (l *kafkaLog) endOffsets(ctx context.Context) (kadm.ListedOffsets, error) {
	backoff := 50 * time.Millisecond
	for {
		ends, err := l.adm.ListEndOffsets(ctx, l.topic.Name)
		if err == nil {
			err = ends.Error()
		}
		if err == nil {
			return ends, nil
		}
		// Kafka errors that will not clear (authorization...) fail at
		// once; others, and connection problems, are retried.
		var ke *kerr.Error
		if errors.As(err, &ke) && !retriableTopicErr(err) || ctx.Err() != nil {
			return nil, fmt.Errorf("list end offsets: %w", err)
		}
		l.log.Debug("listing end offsets, retrying", "err", err)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("list end offsets: %w (last problem: %v)", ctx.Err(), err)
		case <-l.done:
			return nil, errors.New("log closed")
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

// send writes one record and returns when the brokers acknowledged it.
func (l *kafkaLog) send(ctx context.Context, key string, value []byte) error {
	r := &kgo.Record{Topic: l.topic.Name, Key: []byte(key), Value: value}
	if err := l.cl.ProduceSync(ctx, r).FirstErr(); err != nil {
		return fmt.Errorf("write %s to %s topic %s: %w", key, l.purpose, l.topic.Name, err)
	}
	return nil
}

// sendAll writes records in order and returns when all are acknowledged.
func (l *kafkaLog) sendAll(ctx context.Context, rs []configRecord) error {
	krs := make([]*kgo.Record, len(rs))
	for i, r := range rs {
		krs[i] = &kgo.Record{Topic: l.topic.Name, Key: []byte(r.key), Value: r.value}
	}
	if err := l.cl.ProduceSync(ctx, krs...).FirstErr(); err != nil {
		return fmt.Errorf("write to %s topic %s: %w", l.purpose, l.topic.Name, err)
	}
	return nil
}

// sendAsync writes a record and calls done (may be nil) with the result.
func (l *kafkaLog) sendAsync(key string, value []byte, done func(error)) {
	r := &kgo.Record{Topic: l.topic.Name, Key: []byte(key), Value: value}
	l.cl.Produce(context.Background(), r, func(_ *kgo.Record, err error) {
		if err != nil {
			l.log.Warn("write to internal topic failed", "key", key, "err", err)
		}
		if done != nil {
			done(err)
		}
	})
}

// flush waits for asynchronous writes.
func (l *kafkaLog) flush(ctx context.Context) error { return l.cl.Flush(ctx) }

// Close stops consuming and closes the clients; pending asynchronous
// writes get a few seconds to finish.
func (l *kafkaLog) Close() {
	if l.cl != nil {
		fctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = l.cl.Flush(fctx)
		cancel()
	}
	if l.cancel != nil {
		l.cancel()
		<-l.done
	}
	if l.cl != nil {
		l.cl.Close()
	}
	l.adm.Close()
}
