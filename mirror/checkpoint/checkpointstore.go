package checkpoint

import (
	"context"
	"log/slog"
	"maps"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/mirror/records"
)

// checkpointStore is the last checkpoint emitted per group and remote
// partition (MM2's CheckpointStore): loaded once from the checkpoints
// topic at start so that a restarted task keeps its checkpoints
// monotonic, then kept in memory.
type checkpointStore struct {
	mu     sync.Mutex
	groups map[string]map[connect.TopicPartition]records.Checkpoint
	// initialized: the initial load has finished (successfully or not);
	// no checkpoint is emitted before, as it could rewind one emitted by
	// an earlier run.
	initialized bool
}

func newCheckpointStore() *checkpointStore {
	return &checkpointStore{groups: map[string]map[connect.TopicPartition]records.Checkpoint{}}
}

func (s *checkpointStore) isInitialized() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.initialized
}

// load reads the checkpoints topic to its end, keeping the latest
// checkpoint of each partition of the assigned groups. It reports whether
// the read succeeded; the store is initialized either way.
func (s *checkpointStore) load(ctx context.Context, cl *kgo.Client, topic string, groups map[string]bool, log *slog.Logger) bool {
	loaded := map[string]map[connect.TopicPartition]records.Checkpoint{}
	r := newPartitionReader(cl, topic, log)
	err := r.readToEnd(ctx, func(rec *kgo.Record) {
		cp, err := records.DecodeCheckpoint(rec.Key, rec.Value)
		if err != nil {
			log.Warn("ignoring an invalid checkpoint record", "topic", topic, "offset", rec.Offset, "err", err)
			return
		}
		if !groups[cp.ConsumerGroupID] {
			return
		}
		m := loaded[cp.ConsumerGroupID]
		if m == nil {
			m = map[connect.TopicPartition]records.Checkpoint{}
			loaded[cp.ConsumerGroupID] = m
		}
		m[connect.TopicPartition{Topic: cp.Topic, Partition: cp.Partition}] = cp
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	s.initialized = true
	if err != nil {
		log.Info("could not load the checkpoints topic; only offsets mirrored after the task started will be checkpointed",
			"topic", topic, "err", err)
		return false
	}
	s.groups = loaded
	return true
}

// isMoreRecent reports whether cp should be emitted against the last
// checkpoint of its partition, as MM2's checkpointIsMoreRecent: always
// after an upstream rewind of the group (a deliberate reset), otherwise
// only when the downstream offset advances, so that a store that lost a
// sync never moves a checkpoint back.
func (s *checkpointStore) isMoreRecent(cp records.Checkpoint) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	last, ok := s.groups[cp.ConsumerGroupID][connect.TopicPartition{Topic: cp.Topic, Partition: cp.Partition}]
	if !ok {
		return true
	}
	return cp.UpstreamOffset < last.UpstreamOffset || cp.DownstreamOffset > last.DownstreamOffset
}

// update records checkpoints about to be emitted.
func (s *checkpointStore) update(group string, cps map[connect.TopicPartition]records.Checkpoint) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.groups[group]
	if m == nil {
		m = map[connect.TopicPartition]records.Checkpoint{}
		s.groups[group] = m
	}
	maps.Copy(m, cps)
}

// get returns a copy of a group's checkpoints (nil if none).
func (s *checkpointStore) get(group string) map[connect.TopicPartition]records.Checkpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.groups[group]; ok {
		return maps.Clone(m)
	}
	return nil
}

// all returns a copy of every group's checkpoints (what the group offset
// sync writes to the target).
func (s *checkpointStore) all() map[string]map[connect.TopicPartition]records.Checkpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]map[connect.TopicPartition]records.Checkpoint, len(s.groups))
	for g, m := range s.groups {
		out[g] = maps.Clone(m)
	}
	return out
}
