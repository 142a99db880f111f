package storage

import (
	"context"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect"
)

// KafkaOffsetStore keeps source offsets in offset.storage.topic (Kafka's
// KafkaOffsetBackingStore): keys ["connector",{partition}], values the
// offset's JSON, tombstones for deleted offsets. Reads first catch up with
// the topic, so a worker sees offsets another worker committed.
type KafkaOffsetStore struct {
	t   *offsetTable
	log *kafkaLog
}

var _ OffsetStore = (*KafkaOffsetStore)(nil)

// StartKafkaOffsetStore opens (creating if allowed) the offsets topic and
// reads it to the end.
func StartKafkaOffsetStore(ctx context.Context, opts KafkaOptions, topic KafkaTopic) (*KafkaOffsetStore, error) {
	s := &KafkaOffsetStore{t: newOffsetTable()}
	var err error
	s.log, err = startKafkaLog(ctx, opts, topic, "source connector offsets", func(r *kgo.Record) {
		if err := s.t.apply(r.Key, r.Value); err != nil {
			s.log.log.Error("skipping offset record", "partition", r.Partition, "offset", r.Offset, "err", err)
		}
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (s *KafkaOffsetStore) Get(ctx context.Context, connector string, partitions []map[string]any) ([]map[string]any, error) {
	if err := s.log.readToEnd(ctx); err != nil {
		return nil, fmt.Errorf("read offsets of connector %s: %w", connector, err)
	}
	return s.t.get(connector, partitions)
}

func (s *KafkaOffsetStore) All(ctx context.Context, connector string) ([]connect.SourcePartitionOffset, error) {
	if err := s.log.readToEnd(ctx); err != nil {
		return nil, fmt.Errorf("read offsets of connector %s: %w", connector, err)
	}
	return s.t.all(connector)
}

func (s *KafkaOffsetStore) Put(ctx context.Context, connector string, offsets []connect.SourcePartitionOffset) error {
	keys, values, err := encodeOffsets(connector, offsets)
	if err != nil {
		return err
	}
	rs := make([]configRecord, len(keys))
	for i := range keys {
		rs[i] = configRecord{string(keys[i]), values[i]}
	}
	if err := s.log.sendAll(ctx, rs); err != nil {
		return fmt.Errorf("commit offsets of connector %s: %w", connector, err)
	}
	// Acknowledged is durable; apply now so this worker's next read does
	// not wait for the consumer (it will apply the same bytes again).
	for i := range keys {
		_ = s.t.apply(keys[i], values[i])
	}
	return nil
}

func (s *KafkaOffsetStore) Close() error { s.log.Close(); return nil }

// KafkaConfigStore keeps configs in config.storage.topic (Kafka's
// KafkaConfigBackingStore). Writes return after they were read back, so
// Snapshot reflects them; the listener hears about every change, this
// worker's and others', on the consumer goroutine.
type KafkaConfigStore struct {
	state *configState
	log   *kafkaLog

	lmu     sync.Mutex
	l       ConfigListener
	started bool
}

var _ ConfigStore = (*KafkaConfigStore)(nil)

// StartKafkaConfigStore opens (creating if allowed) the config topic,
// which must have one partition, and reads it to the end. Changes read
// while starting are not reported: the snapshot has them.
func StartKafkaConfigStore(ctx context.Context, opts KafkaOptions, topic KafkaTopic) (*KafkaConfigStore, error) {
	if topic.Property == "" {
		topic.Property = "config.storage.topic"
	}
	topic.Partitions = 1
	s := &KafkaConfigStore{state: newConfigState(opts.Logger)}
	var err error
	s.log, err = startKafkaLog(ctx, opts, topic, "connector configurations", func(r *kgo.Record) {
		ev := s.state.apply(r.Offset, string(r.Key), r.Value)
		s.lmu.Lock()
		l, started := s.l, s.started
		s.lmu.Unlock()
		if started {
			notify(l, ev)
		}
	})
	if err != nil {
		return nil, err
	}
	s.lmu.Lock()
	s.started = true
	s.lmu.Unlock()
	return s, nil
}

func (s *KafkaConfigStore) write(ctx context.Context, rs []configRecord) error {
	if err := s.log.sendAll(ctx, rs); err != nil {
		return err
	}
	return s.log.readToEnd(ctx)
}

func (s *KafkaConfigStore) Snapshot() *ConfigSnapshot { return s.state.snapshot() }

// Refresh reads the topic to its end (Kafka's refresh), so the next
// Snapshot includes everything written before the call.
func (s *KafkaConfigStore) Refresh(ctx context.Context) error { return s.log.readToEnd(ctx) }

func (s *KafkaConfigStore) PutConnectorConfig(ctx context.Context, name string, config map[string]string, target *TargetState) error {
	return s.write(ctx, connectorConfigRecords(name, config, target))
}

func (s *KafkaConfigStore) RemoveConnectorConfig(ctx context.Context, name string) error {
	return s.write(ctx, removeConnectorRecords(name))
}

func (s *KafkaConfigStore) PutTaskConfigs(ctx context.Context, name string, tasks []map[string]string) error {
	return s.write(ctx, taskConfigRecords(name, tasks))
}

func (s *KafkaConfigStore) PutTargetState(ctx context.Context, name string, st TargetState) error {
	return s.write(ctx, []configRecord{{TargetStateKey(name), EncodeTargetState(st)}})
}

func (s *KafkaConfigStore) PutRestartRequest(ctx context.Context, r RestartRequest) error {
	return s.write(ctx, []configRecord{{RestartKey(r.Connector), EncodeRestart(r)}})
}

// PutSessionKey writes the distributed workers' session key.
func (s *KafkaConfigStore) PutSessionKey(ctx context.Context, k SessionKey) error {
	return s.write(ctx, []configRecord{{sessionKeyKey, EncodeSessionKey(k)}})
}

func (s *KafkaConfigStore) SetListener(l ConfigListener) {
	s.lmu.Lock()
	s.l = l
	s.lmu.Unlock()
}

func (s *KafkaConfigStore) Close() error { s.log.Close(); return nil }

// KafkaStatusStore keeps statuses in status.storage.topic (Kafka's
// KafkaStatusBackingStore). Writes return once acknowledged; they show in
// reads once consumed back, as in Kafka, except that the writer's own
// table is updated at once so this worker reads its own writes.
type KafkaStatusStore struct {
	t   *statusTable
	log *kafkaLog
	mu  sync.Mutex // orders PutSafe's check and write
}

var (
	_ StatusStore      = (*KafkaStatusStore)(nil)
	_ TopicStatusStore = (*KafkaStatusStore)(nil)
)

// StartKafkaStatusStore opens (creating if allowed) the status topic and
// reads it to the end.
func StartKafkaStatusStore(ctx context.Context, opts KafkaOptions, topic KafkaTopic) (*KafkaStatusStore, error) {
	if topic.Property == "" {
		topic.Property = "status.storage.topic"
	}
	s := &KafkaStatusStore{t: newStatusTable(opts.Logger)}
	var err error
	s.log, err = startKafkaLog(ctx, opts, topic, "connector and task statuses", func(r *kgo.Record) {
		s.t.apply(string(r.Key), r.Value)
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (s *KafkaStatusStore) Put(ctx context.Context, st Status) error {
	if err := s.log.send(ctx, StatusKey(st), EncodeStatus(st)); err != nil {
		return err
	}
	s.t.put(st)
	return nil
}

func (s *KafkaStatusStore) PutSafe(ctx context.Context, st Status) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.t.safe(st) {
		return nil
	}
	return s.Put(ctx, st)
}

func (s *KafkaStatusStore) Connector(name string) (Status, bool) { return s.t.connector(name) }
func (s *KafkaStatusStore) Task(id TaskID) (Status, bool)        { return s.t.task(id) }
func (s *KafkaStatusStore) Tasks(connector string) []Status      { return s.t.taskList(connector) }
func (s *KafkaStatusStore) Connectors() []string                 { return s.t.connectorNames() }

// Refresh reads the topic to its end.
func (s *KafkaStatusStore) Refresh(ctx context.Context) error { return s.log.readToEnd(ctx) }

func (s *KafkaStatusStore) PutTopic(ctx context.Context, ts TopicStatus) error {
	if err := s.log.send(ctx, TopicStatusKey(ts.Connector, ts.Topic), EncodeTopicStatus(ts)); err != nil {
		return err
	}
	s.t.putTopic(ts.Connector, ts.Topic, &ts)
	return nil
}

func (s *KafkaStatusStore) Topics(connector string) []TopicStatus { return s.t.topicList(connector) }

func (s *KafkaStatusStore) DeleteTopic(ctx context.Context, connector, topic string) error {
	if err := s.log.send(ctx, TopicStatusKey(connector, topic), nil); err != nil {
		return err
	}
	s.t.putTopic(connector, topic, nil)
	return nil
}

func (s *KafkaStatusStore) Close() error { s.log.Close(); return nil }
