package sink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/fjordhq/fjord/connect"
)

// Task is JdbcSinkTask for PostgreSQL. Put writes its records in one
// transaction before it returns, so every record a successful Put got is
// durable; PreCommit holds back only the partitions of a Put that failed
// and was not redone (the runtime gives up retrying when it stops).
type Task struct {
	s        *settings
	tctx     connect.SinkTaskContext
	reporter connect.ErrantRecordReporter
	w        *writer
	log      *slog.Logger

	remainingRetries int
	// failedFrom is, per partition, the first offset of a Put that failed
	// and has not succeeded since: nothing from there is durable.
	failedFrom map[connect.TopicPartition]int64
	// reported are the records given to the reporter during the current
	// Put's attempts (a retried Put does not report them twice).
	reported map[recordID]bool
}

type recordID struct {
	topic     string
	partition int32
	offset    int64
}

var (
	_ connect.SinkTask           = (*Task)(nil)
	_ connect.ContextualSinkTask = (*Task)(nil)
)

func (t *Task) Initialize(ctx connect.SinkTaskContext) { t.tctx = ctx }

func (t *Task) Start(ctx context.Context, props map[string]string) error {
	s, err := parseSettings(props)
	if err != nil {
		return fmt.Errorf("postgres sink task config: %w", err)
	}
	t.s = s
	t.log = slog.Default().With("connector", s.name, "plugin", "postgres-sink")
	t.w = newWriter(s, t.log)
	t.remainingRetries = s.maxRetries
	t.failedFrom = map[connect.TopicPartition]int64{}
	t.reported = map[recordID]bool{}
	if t.tctx != nil {
		t.reporter = t.tctx.ErrantRecordReporter()
	}
	t.log.Info("starting postgres sink task", "url", s.connectionURLShown, "insert.mode", s.insertMode, "pk.mode", s.pkMode)
	return nil
}

func (t *Task) Open(partitions []connect.TopicPartition) error { return nil }

// Put writes records in one transaction (Confluent's JdbcSinkTask.put):
// a lost connection or a transient server error is retried max.retries
// times, retry.backoff.ms apart (RetriableError, the runtime puts the
// same records again); a record the database refuses goes to the errant
// record reporter when there is one, else the task fails.
func (t *Task) Put(ctx context.Context, records []*connect.SinkRecord) error {
	if len(records) == 0 {
		return nil
	}
	mode := unrollNever
	if t.reporter != nil {
		mode = unrollOnDataError
	}
	err := t.w.write(ctx, records, t.report, mode)
	if err == nil {
		t.remainingRetries = t.s.maxRetries
		clear(t.reported)
		for _, r := range records {
			delete(t.failedFrom, origin(r))
		}
		return nil
	}
	t.noteFailed(records)
	var re *recordError
	switch {
	case errors.As(err, &re):
		return err // a bad record without a reporter (or past the tolerance)
	case ctx.Err() != nil:
		// The task is stopping: the records are not written and PreCommit
		// will not let their offsets be committed.
		t.w.reset()
		return &connect.RetriableError{Err: err}
	case transient(err) && t.remainingRetries > 0:
		t.remainingRetries--
		t.log.Warn("write failed; retrying", "records", len(records), "remainingRetries", t.remainingRetries, "err", err)
		t.w.reset()
		if t.tctx != nil {
			t.tctx.Timeout(t.s.retryBackoff)
		}
		return &connect.RetriableError{Err: err}
	case transient(err) && isServerError(err) && t.reporter != nil:
		// Retries exhausted on an error the server keeps giving (a missing
		// referenced row, say): report the records that cause it.
		t.w.reset()
		if err := t.w.write(ctx, records, t.report, unrollAlways); err != nil {
			return fmt.Errorf("postgres sink: %w", err)
		}
		t.remainingRetries = t.s.maxRetries
		for _, r := range records {
			delete(t.failedFrom, origin(r))
		}
		return nil
	}
	t.w.reset()
	if transient(err) {
		return fmt.Errorf("postgres sink: failing after %d retries: %w", t.s.maxRetries, err)
	}
	return fmt.Errorf("postgres sink: %w", err)
}

// origin is the partition a record was read from (before transforms).
func origin(r *connect.Record) connect.TopicPartition {
	if r.OriginalTopic != "" {
		return connect.TopicPartition{Topic: r.OriginalTopic, Partition: r.OriginalPartition}
	}
	return connect.TopicPartition{Topic: r.Topic, Partition: r.Partition}
}

func originOffset(r *connect.Record) int64 {
	if r.OriginalTopic != "" {
		return r.OriginalOffset
	}
	return r.Offset
}

func (t *Task) noteFailed(records []*connect.Record) {
	for _, r := range records {
		tp, o := origin(r), originOffset(r)
		if cur, ok := t.failedFrom[tp]; !ok || o < cur {
			t.failedFrom[tp] = o
		}
	}
}

// report sends a record to the errant record reporter once per Put.
func (t *Task) report(ctx context.Context, r *connect.Record, err error) error {
	if t.reporter == nil {
		return &recordError{err}
	}
	id := recordID{r.OriginalTopic, r.OriginalPartition, r.OriginalOffset}
	if t.reported[id] {
		return nil
	}
	t.log.Warn("record not written", "topic", r.Topic, "partition", r.Partition, "offset", r.Offset, "err", err)
	if rerr := t.reporter.Report(ctx, r, err); rerr != nil {
		return &recordError{rerr}
	}
	t.reported[id] = true
	return nil
}

// PreCommit lets every offset through except from a failed Put on.
func (t *Task) PreCommit(ctx context.Context, offsets map[connect.TopicPartition]int64) (map[connect.TopicPartition]int64, error) {
	for tp, o := range offsets {
		if f, ok := t.failedFrom[tp]; ok && f < o {
			offsets[tp] = f
		}
	}
	return offsets, nil
}

func (t *Task) Close(partitions []connect.TopicPartition) error {
	for _, tp := range partitions {
		delete(t.failedFrom, tp)
	}
	return nil
}

func (t *Task) Stop() error {
	if t.w != nil {
		t.w.close()
	}
	return nil
}
