package sink

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connectors/s3/format"
	"github.com/fjordhq/fjord/connectors/s3/partitioner"
	"github.com/fjordhq/fjord/connectors/s3/storage"
)

// uploadConcurrency is how many objects a task uploads at once (each a
// PUT, or a multipart upload with the upload manager's own part
// concurrency).
const uploadConcurrency = 4

// closeGrace is how long Close lets a revoked partition's uploads finish
// before canceling them.
const closeGrace = 30 * time.Second

// Task is one S3 sink task.
type Task struct {
	s     *settings
	ctx   connect.SinkTaskContext
	store *storage.Store
	part  partitioner.Partitioner
	zone  *time.Location
	up    *uploader

	writers map[connect.TopicPartition]*partitionWriter
	// resets are offsets recovery asked the runtime to move to.
	resets map[connect.TopicPartition]int64
}

var (
	_ connect.SinkTask           = (*Task)(nil)
	_ connect.ContextualSinkTask = (*Task)(nil)
)

func (t *Task) Initialize(ctx connect.SinkTaskContext) { t.ctx = ctx }

func (t *Task) Start(ctx context.Context, props map[string]string) error {
	s, err := parseSettings(props)
	if err != nil {
		return err
	}
	t.s = s
	if t.part, err = partitioner.New(props); err != nil {
		return err
	}
	t.zone = time.UTC
	if s.timezone != "" {
		if t.zone, err = partitioner.Zone(s.timezone); err != nil {
			return fmt.Errorf("%s: %w", TimezoneConfig, err)
		}
	}
	if t.store, err = storage.New(ctx, s.store); err != nil {
		return err
	}
	// Uploads may fall behind by this much before the task stops taking
	// records: enough to keep every upload slot busy with full parts.
	maxBuffered := max(8*s.partSize, 64<<20)
	t.up = newUploader(t, t.store, uploadConcurrency, maxBuffered)
	t.writers = map[connect.TopicPartition]*partitionWriter{}
	t.resets = map[connect.TopicPartition]int64{}
	slog.Info("starting S3 sink task", "connector", s.name, "bucket", s.store.Bucket, "format", props[FormatClassConfig],
		"flush.size", s.flushSize)
	return nil
}

func (t *Task) Open(partitions []connect.TopicPartition) error {
	now := time.Now()
	for _, tp := range partitions {
		if _, ok := t.writers[tp]; ok {
			continue
		}
		t.up.open(tp)
		t.writers[tp] = newPartitionWriter(t, tp, now)
	}
	return nil
}

func (t *Task) Put(ctx context.Context, records []*connect.SinkRecord) error {
	now := time.Now()
	if err := t.up.failing(); err != nil {
		// S3 is down or refusing: take nothing more until the files
		// already closed are up (they keep being retried). The runtime
		// gives this batch again and shows this error in the task's
		// RUNNING status meanwhile.
		if t.ctx != nil {
			t.ctx.Timeout(max(t.s.store.RetryBackoff, time.Second))
		}
		return &connect.RetriableError{Err: fmt.Errorf("S3 sink: uploads to S3 fail, so no more records are taken until they succeed (nothing is lost; the offsets stay uncommitted): %w", err)}
	}
	// A batch is mostly runs of one partition's records: look the
	// writer up only when the partition changes.
	var w *partitionWriter
	for i, r := range records {
		if w == nil || r.Partition != w.tp.Partition || r.Topic != w.tp.Topic {
			if w = t.writers[connect.TopicPartition{Topic: r.Topic, Partition: r.Partition}]; w == nil {
				return fmt.Errorf("S3 sink: record of %s-%d, a partition not assigned to this task", r.Topic, r.Partition)
			}
		}
		if i%64 == 0 {
			if over, _, _ := t.up.behind(); over && !t.up.waitBelow(ctx, 2*time.Second) {
				_, buffered, lastErr := t.up.behind()
				// The records taken so far stay taken; the runtime gives
				// the batch again and the writers skip what they have.
				backoff := max(t.s.store.RetryBackoff, time.Second)
				if t.ctx != nil {
					t.ctx.Timeout(backoff)
				}
				msg := fmt.Sprintf("S3 sink: %d MiB of closed files are waiting for S3", buffered>>20)
				if lastErr != nil {
					msg += "; last upload error: " + lastErr.Error()
				}
				return &connect.RetriableError{Err: fmt.Errorf("%s", msg)}
			}
		}
		if err := w.write(ctx, r, now); err != nil {
			return err
		}
	}
	for _, pw := range t.writers {
		if err := pw.idle(ctx, now); err != nil {
			return err
		}
	}
	return nil
}

// PreCommit commits, per partition, the offset after the last record
// whose every object is in the bucket — never more.
func (t *Task) PreCommit(ctx context.Context, offsets map[connect.TopicPartition]int64) (map[connect.TopicPartition]int64, error) {
	now := time.Now()
	for _, w := range t.writers {
		if err := w.idle(ctx, now); err != nil {
			return nil, err
		}
	}
	out := t.up.committable()
	for tp := range out {
		if _, ok := t.writers[tp]; !ok {
			delete(out, tp)
		}
	}
	return out, nil
}

func (t *Task) Close(partitions []connect.TopicPartition) error {
	for _, tp := range partitions {
		if w := t.writers[tp]; w != nil {
			w.discard()
			delete(t.writers, tp)
		}
		t.up.close(tp, closeGrace)
		delete(t.resets, tp)
	}
	return nil
}

func (t *Task) Stop() error {
	if t.up == nil {
		return nil
	}
	for tp, w := range t.writers {
		w.discard()
		t.up.close(tp, 0)
	}
	t.writers = nil
	return nil
}

func (t *Task) requestCommit() {
	if t.ctx != nil {
		t.ctx.RequestCommit()
	}
}

// reportCause shows err in the task's RUNNING status (nil clears it).
func (t *Task) reportCause(err error) {
	if r, ok := t.ctx.(connect.CauseReporter); ok {
		r.ReportCause(err)
	}
}

func (t *Task) resetOffset(tp connect.TopicPartition, off int64) {
	t.resets[tp] = off
	if t.ctx != nil {
		t.ctx.ResetOffsets(map[connect.TopicPartition]int64{tp: off})
	}
}

func (t *Task) errantReporter() connect.ErrantRecordReporter {
	if t.ctx == nil {
		return nil
	}
	return t.ctx.ErrantRecordReporter()
}

// extensions are the object name suffixes this task writes.
func (t *Task) extensions() []string {
	out := []string{t.s.valueFormat.Extension()}
	if t.s.keysFormat != nil {
		out = append(out, format.KeysExtension(t.s.keysFormat))
	}
	if t.s.headersFormat != nil {
		out = append(out, format.HeadersExtension(t.s.headersFormat))
	}
	return out
}
