package checkpoint

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/runtime"
	"github.com/fjordhq/fjord/mirror/filter"
	"github.com/fjordhq/fjord/mirror/mirrorconfig"
)

// retryBackoff spaces retries of background reads that failed.
const retryBackoff = time.Second

// Task is MirrorCheckpointTask. At start it loads the checkpoints it
// emitted before (to stay monotonic across restarts), then reads the
// offset-syncs topic into an OffsetSyncStore, from the beginning and
// continuously. Every emit.checkpoints.interval.seconds it fetches the
// assigned groups' committed offsets on the source, translates them and
// emits the new checkpoints to <source>.checkpoints.internal on the
// target. With sync.group.offsets.enabled it also writes the translated
// offsets to the target's groups that no consumer is using there.
type Task struct {
	cfg      *config
	log      *slog.Logger
	groups   []string
	topic    string // the checkpoints topic
	interval time.Duration
	metrics  *Metrics

	src     *kadm.Client
	closers []func()
	// cp is set once the checkpoint store is loaded; until then nothing
	// is emitted.
	cp atomic.Pointer[checkpointer]

	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu          sync.Mutex
	metricsKeys map[LatencyKey]bool
}

var (
	_ connect.SourceTask      = (*Task)(nil)
	_ connect.RecordCommitter = (*Task)(nil)
)

func (t *Task) Start(ctx context.Context, props map[string]string) error {
	cfg, err := parseConfig(props)
	if err != nil {
		return err
	}
	t.cfg = cfg
	t.groups = cfg.taskGroups()
	t.topic = cfg.checkpointsTopic()
	t.interval = cfg.emitCheckpointsInterval()
	t.metrics = DefaultMetrics
	t.metricsKeys = map[LatencyKey]bool{}
	t.log = slog.With("connector", cfg.ConnectorName(), "flow", cfg.SourceClusterAlias()+"->"+cfg.TargetClusterAlias(), "task", cfg.Get(mirrorconfig.TaskIndex))
	topics, err := filter.NewTopicFilter(props)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		t.closeClients()
		return err
	}
	src, closeSrc, err := mirrorconfig.Admin(props, mirrorconfig.Source)
	if err != nil {
		return fail(fmt.Errorf("source admin client: %w", err))
	}
	t.closers = append(t.closers, closeSrc)
	t.src = src
	dst, closeDst, err := mirrorconfig.Admin(props, mirrorconfig.Target)
	if err != nil {
		return fail(fmt.Errorf("target admin client: %w", err))
	}
	t.closers = append(t.closers, closeDst)
	syncReader, err := mirrorconfig.Client(props, cfg.offsetSyncsCluster(), runtime.ConsumerClient)
	if err != nil {
		return fail(fmt.Errorf("offset syncs consumer: %w", err))
	}
	t.closers = append(t.closers, syncReader.Close)
	// Read once at start, then closed by the loader.
	cpReader, err := mirrorconfig.Client(props, mirrorconfig.Target, runtime.ConsumerClient)
	if err != nil {
		return fail(fmt.Errorf("checkpoints consumer: %w", err))
	}

	bg, cancel := context.WithCancel(context.Background())
	t.cancel = cancel
	groupSet := map[string]bool{}
	for _, g := range t.groups {
		groupSet[g] = true
	}
	// Loading can take long, so it runs in the background: a task that
	// has not finished starting cannot be stopped.
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		store := newCheckpointStore()
		lctx, lcancel := context.WithTimeout(bg, cfg.AdminTimeout())
		loaded := store.load(lctx, cpReader, t.topic, groupSet, t.log)
		lcancel()
		cpReader.Close()
		if bg.Err() != nil {
			return
		}
		syncs := NewOffsetSyncStore(!loaded)
		t.cp.Store(&checkpointer{
			sourceAlias: cfg.SourceClusterAlias(), targetAlias: cfg.TargetClusterAlias(),
			policy: cfg.ReplicationPolicy(), topics: topics, syncs: syncs, store: store,
		})
		if d := cfg.syncGroupOffsetsInterval(); d >= 0 {
			t.wg.Add(1)
			go func() {
				defer t.wg.Done()
				t.syncGroupsLoop(bg, &groupSyncer{target: dst, store: store, log: t.log}, d)
			}()
		}
		followOffsetSyncs(bg, syncReader, cfg.offsetSyncsTopic(), syncs, t.log)
	}()
	t.log.Info("checkpointing consumer groups", "groups", t.groups)
	return nil
}

// syncGroupsLoop writes translated offsets to the target's idle groups
// every interval, the first time after one interval.
func (t *Task) syncGroupsLoop(ctx context.Context, s *groupSyncer, every time.Duration) {
	tick := time.NewTicker(max(every, time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			sctx, cancel := context.WithTimeout(ctx, t.cfg.AdminTimeout())
			s.syncOnce(sctx)
			cancel()
		}
	}
}

// Poll waits emit.checkpoints.interval.seconds, then returns the new
// checkpoints of the assigned groups (none before the checkpoint store is
// loaded).
func (t *Task) Poll(ctx context.Context) ([]*connect.SourceRecord, error) {
	if t.interval < 0 || len(t.groups) == 0 {
		<-ctx.Done()
		return nil, nil
	}
	if !sleep(ctx, t.interval) {
		return nil, nil
	}
	cp := t.cp.Load()
	if cp == nil {
		return nil, nil
	}
	var out []*connect.SourceRecord
	for _, g := range t.groups {
		if ctx.Err() != nil {
			return nil, nil
		}
		out = append(out, t.recordsForGroup(ctx, cp, g)...)
	}
	return out, nil
}

// recordsForGroup is MM2's sourceRecordsForGroup: fetch the group's
// offsets on the source, keep the checkpoints worth emitting and record
// them in the store. A group whose offsets cannot be fetched is skipped
// this round.
func (t *Task) recordsForGroup(ctx context.Context, cp *checkpointer, group string) []*connect.SourceRecord {
	now := time.Now().UnixMilli()
	offsets, err := t.fetchGroupOffsets(ctx, group)
	if err != nil {
		if ctx.Err() == nil {
			t.log.Error("querying offsets for consumer group on the source", "group", group, "err", err)
		}
		return nil
	}
	cps := cp.checkpointsForGroup(group, offsets)
	cp.store.update(group, cps)
	out := make([]*connect.SourceRecord, 0, len(cps))
	for _, c := range cps {
		out = append(out, checkpointRecord(c, t.topic, now))
	}
	return out
}

func (t *Task) fetchGroupOffsets(ctx context.Context, group string) (map[connect.TopicPartition]committed, error) {
	fctx, cancel := context.WithTimeout(ctx, t.cfg.AdminTimeout())
	defer cancel()
	resp, err := t.src.FetchOffsets(fctx, group)
	if err != nil {
		return nil, err
	}
	out := map[connect.TopicPartition]committed{}
	resp.Each(func(o kadm.OffsetResponse) {
		// No committed offset (-1) or a partition-level error: nothing
		// to translate, as MM2 skips null OffsetAndMetadata.
		if o.Err != nil || o.At < 0 {
			return
		}
		out[connect.TopicPartition{Topic: o.Topic, Partition: o.Partition}] = committed{offset: o.At, metadata: o.Metadata}
	})
	return out, nil
}

// CommitRecord records checkpoint-latency-ms: how long after the offsets
// were fetched the checkpoint landed on the target.
func (t *Task) CommitRecord(r *connect.SourceRecord, md *connect.RecordMetadata) error {
	if md == nil || r.Timestamp < 0 {
		return nil
	}
	k := LatencyKey{Source: t.cfg.SourceClusterAlias(), Target: t.cfg.TargetClusterAlias()}
	k.Group, _ = r.SourcePartition[partitionGroupKey].(string)
	k.Topic, _ = r.SourcePartition[partitionTopicKey].(string)
	if p, ok := connect.OffsetLong(r.SourcePartition[partitionPartitionKey]); ok {
		k.Partition = int32(p)
	}
	t.metrics.RecordLatency(k, time.Now().UnixMilli()-r.Timestamp)
	t.mu.Lock()
	t.metricsKeys[k] = true
	t.mu.Unlock()
	return nil
}

func (t *Task) Commit(context.Context) error { return nil }

func (t *Task) Stop() error {
	if t.cancel != nil {
		t.cancel()
	}
	t.wg.Wait()
	t.closeClients()
	if t.metrics != nil {
		t.mu.Lock()
		keys := make([]LatencyKey, 0, len(t.metricsKeys))
		for k := range t.metricsKeys {
			keys = append(keys, k)
		}
		t.mu.Unlock()
		t.metrics.Forget(keys...)
	}
	return nil
}

func (t *Task) closeClients() {
	for _, f := range t.closers {
		f()
	}
	t.closers = nil
}

// sleep waits d or until ctx is done; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-tm.C:
		return true
	}
}
