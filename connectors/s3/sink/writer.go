package sink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connectors/s3/format"
	"github.com/fjordhq/fjord/connectors/s3/partitioner"
)

// objectOut is one object being written: its format writer and the spool
// that holds its bytes.
type objectOut struct {
	ext string
	sp  *spool
	w   format.RecordWriter
}

func newObjectOut(f format.Format, ext string, limit int64) (*objectOut, error) {
	sp := newSpool(limit)
	w, err := f.NewWriter(sp)
	if err != nil {
		sp.release()
		return nil, err
	}
	return &objectOut{ext: ext, sp: sp, w: w}, nil
}

// openFile is the file of one encoded partition of one Kafka partition,
// with its .keys and .headers side files when those are stored.
type openFile struct {
	encoded     string
	startOffset int64
	lastOffset  int64
	records     int64
	value       *objectOut
	keys        *objectOut
	headers     *objectOut
}

func (f *openFile) outs() []*objectOut {
	out := []*objectOut{f.value}
	if f.keys != nil {
		out = append(out, f.keys)
	}
	if f.headers != nil {
		out = append(out, f.headers)
	}
	return out
}

func (f *openFile) discard() {
	for _, o := range f.outs() {
		o.sp.release()
	}
}

// partitionWriter writes one Kafka partition's records into files and
// commits them together, as Confluent's TopicPartitionWriter: the files
// of all encoded partitions are committed at once (flush.size counts the
// Kafka partition's records, rotate.interval.ms its record time, a
// schema change or a tombstone switch commits everything), and the
// offset after the last committed record becomes committable once every
// object of the commit is in the bucket.
type partitionWriter struct {
	t  *Task
	tp connect.TopicPartition

	files map[string]*openFile
	order []string // encoded partitions in the order their files opened
	// schemas holds the current schema of each encoded partition with
	// records in the commit (a nil schema is an entry too).
	schemas map[string]*connect.Schema

	recordCount    int
	setStart       int64
	lastOffset     int64
	baseTS, curTS  int64
	haveBaseTS     bool
	haveCurTS      bool
	currentEncoded string
	nextSchedule   int64

	// recovered is set once the bucket was checked for objects written
	// after the committed offset (the first record tells where that is).
	recovered bool
	// nextOffset is the offset after the last record taken: records
	// below it (redelivered after a retriable error or a rewind) are
	// dropped, so nothing is written twice.
	nextOffset int64
}

func newPartitionWriter(t *Task, tp connect.TopicPartition, now time.Time) *partitionWriter {
	w := &partitionWriter{t: t, tp: tp, files: map[string]*openFile{}, schemas: map[string]*connect.Schema{},
		setStart: -1, nextOffset: -1}
	w.setNextScheduledRotation(now)
	return w
}

// errTombstone is behavior.on.null.values=fail's answer.
var errTombstone = errors.New("null valued records are not writeable with current behavior.on.null.values 'fail' setting: set behavior.on.null.values to ignore or write")

// write takes one record (in offset order). It returns false when the
// record was not taken because uploads are behind (back-pressure).
func (w *partitionWriter) write(ctx context.Context, r *connect.SinkRecord, now time.Time) error {
	if !w.recovered {
		resume, err := w.t.recover(ctx, w.tp, r.Offset)
		if err != nil {
			return err
		}
		w.recovered = true
		w.nextOffset = resume
		if resume > r.Offset {
			slog.Info("S3 sink: objects after the committed offset are already complete in the bucket; resuming after them",
				"connector", w.t.s.name, "topic", w.tp.Topic, "partition", w.tp.Partition, "from", r.Offset, "resume", resume)
			w.t.resetOffset(w.tp, resume)
		}
	}
	if r.Offset < w.nextOffset {
		return nil
	}
	s := w.t.s
	encoded := ""
	if r.Value == nil {
		switch s.nullValues {
		case nullIgnore:
			w.nextOffset = r.Offset + 1
			return nil
		case nullWrite:
			encoded = s.tombstonePartition
		default:
			if rep := w.t.errantReporter(); rep != nil {
				if err := rep.Report(ctx, r, errTombstone); err != nil {
					return err
				}
				w.nextOffset = r.Offset + 1
				return nil
			}
			return fmt.Errorf("record %s-%d@%d: %w", r.Topic, r.Partition, r.Offset, errTombstone)
		}
	}
	if tb, ok := w.t.part.(partitioner.TimeBased); ok && encoded == "" {
		ts, err := tb.Timestamp(r, now)
		if err != nil {
			return w.badRecord(ctx, r, err)
		}
		w.curTS, w.haveCurTS = ts, true
	}
	if encoded == "" {
		var err error
		if encoded, err = w.t.part.Encode(r, now); err != nil {
			return w.badRecord(ctx, r, err)
		}
	}
	// The record goes through Confluent's checks in order; any of them
	// commits the open files first, after which the record is taken
	// into fresh ones.
	for attempt := 0; ; attempt++ {
		if attempt > 2 {
			return fmt.Errorf("record %s-%d@%d: the S3 sink could not place it after committing its files (internal error)", r.Topic, r.Partition, r.Offset)
		}
		// The commit set's first record sets the base of
		// rotate.interval.ms, also when a commit just happened for this
		// record (Confluent's baseRecordTimestamp).
		if w.haveCurTS && !w.haveBaseTS {
			w.baseTS, w.haveBaseTS = w.curTS, true
		}
		cur, had := w.schemas[encoded]
		if had && (cur == nil) != (r.ValueSchema == nil) {
			if err := w.commit(ctx, "tombstone switch"); err != nil {
				return err
			}
			continue
		}
		if !had || cur == nil || r.ValueSchema == nil {
			w.schemas[encoded] = r.ValueSchema
			cur = r.ValueSchema
		}
		if w.rotateOnTime(encoded, now) {
			w.setNextScheduledRotation(now)
			if err := w.commit(ctx, "time"); err != nil {
				return err
			}
			continue
		}
		change, err := shouldChangeSchema(s.compat, r.ValueSchema, cur)
		if err != nil {
			return w.badRecord(ctx, r, err)
		}
		if change && w.recordCount > 0 {
			if err := w.commit(ctx, "schema change"); err != nil {
				return err
			}
			w.schemas[encoded] = r.ValueSchema
			continue
		}
		value := r.Value
		vs := r.ValueSchema
		if cur != nil && r.ValueSchema != nil && cur != r.ValueSchema && s.compat != "NONE" {
			if value, err = project(r.ValueSchema, cur, r.Value); err != nil {
				return w.badRecord(ctx, r, err)
			}
			vs = cur
		}
		if err := w.append(r, encoded, vs, value); err != nil {
			return err
		}
		break
	}
	w.nextOffset = r.Offset + 1
	if w.recordCount >= s.flushSize {
		return w.commit(ctx, "flush.size")
	}
	return nil
}

// badRecord sends a record that cannot be placed to the dead letter
// queue when errors are tolerated, else fails the task.
func (w *partitionWriter) badRecord(ctx context.Context, r *connect.SinkRecord, err error) error {
	if rep := w.t.errantReporter(); rep != nil {
		if rerr := rep.Report(ctx, r, err); rerr != nil {
			return rerr
		}
		w.nextOffset = r.Offset + 1
		return nil
	}
	return fmt.Errorf("record %s-%d@%d: %w", r.Topic, r.Partition, r.Offset, err)
}

func (w *partitionWriter) append(r *connect.SinkRecord, encoded string, vs *connect.Schema, value any) error {
	f := w.files[encoded]
	if f == nil {
		var err error
		if f, err = w.openFile(encoded, r.Offset); err != nil {
			return err
		}
	}
	if err := f.value.w.Write(vs, value); err != nil {
		return w.writeFailed(r, err)
	}
	if f.keys != nil {
		if err := f.keys.w.Write(r.KeySchema, r.Key); err != nil {
			return w.writeFailed(r, fmt.Errorf("key: %w", err))
		}
	}
	if f.headers != nil {
		hs, hv := format.HeadersView(r.Headers)
		if err := f.headers.w.Write(hs, hv); err != nil {
			return w.writeFailed(r, fmt.Errorf("headers: %w", err))
		}
	}
	f.lastOffset = r.Offset
	f.records++
	w.recordCount++
	w.lastOffset = r.Offset
	if w.setStart < 0 {
		w.setStart = r.Offset
	}
	w.currentEncoded = encoded
	return nil
}

// writeFailed: a record the format cannot encode after part of it may be
// in the file. The file cannot be trusted any more, so the task fails
// (Confluent fails too); the records replay from the committed offset.
func (w *partitionWriter) writeFailed(r *connect.SinkRecord, err error) error {
	w.discard()
	return fmt.Errorf("record %s-%d@%d could not be written with %s: %w", r.Topic, r.Partition, r.Offset, w.t.s.props[FormatClassConfig], err)
}

func (w *partitionWriter) openFile(encoded string, offset int64) (*openFile, error) {
	s := w.t.s
	f := &openFile{encoded: encoded, startOffset: offset}
	var err error
	if f.value, err = newObjectOut(s.valueFormat, s.valueFormat.Extension(), s.partSize); err != nil {
		return nil, err
	}
	if s.keysFormat != nil {
		if f.keys, err = newObjectOut(s.keysFormat, format.KeysExtension(s.keysFormat), s.partSize); err != nil {
			f.discard()
			return nil, err
		}
	}
	if s.headersFormat != nil {
		if f.headers, err = newObjectOut(s.headersFormat, format.HeadersExtension(s.headersFormat), s.partSize); err != nil {
			f.discard()
			return nil, err
		}
	}
	w.files[encoded] = f
	w.order = append(w.order, encoded)
	return f, nil
}

// rotateOnTime is Confluent's rotateOnTime: record time past
// rotate.interval.ms since the first record of the commit, or another
// encoded partition (with rotate.interval.ms), or the wall clock past
// the next scheduled rotation.
func (w *partitionWriter) rotateOnTime(encoded string, now time.Time) bool {
	if w.recordCount <= 0 {
		return false
	}
	s := w.t.s
	if s.rotateInterval > 0 && w.haveBaseTS && w.haveCurTS {
		if w.curTS-w.baseTS >= s.rotateInterval {
			return true
		}
		if s.rotateOnPartChange && encoded != w.currentEncoded {
			return true
		}
	}
	return s.rotateSchedule > 0 && now.UnixMilli() >= w.nextSchedule
}

// setNextScheduledRotation is Confluent's getNextTimeAdjustedByDay: the
// next multiple of rotate.schedule.interval.ms counted from the start of
// the day in the configured timezone.
func (w *partitionWriter) setNextScheduledRotation(now time.Time) {
	s := w.t.s
	if s.rotateSchedule <= 0 {
		return
	}
	loc := w.t.zone
	local := now.In(loc)
	day := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, loc).UnixMilli()
	ms := now.UnixMilli()
	w.nextSchedule = day + ((ms-day)/s.rotateSchedule+1)*s.rotateSchedule
}

// idle runs when no record arrived: a scheduled rotation still commits.
func (w *partitionWriter) idle(ctx context.Context, now time.Time) error {
	if w.recordCount == 0 {
		if w.t.s.rotateSchedule > 0 && now.UnixMilli() >= w.nextSchedule {
			w.setNextScheduledRotation(now)
		}
		return nil
	}
	if w.rotateOnTime(w.currentEncoded, now) {
		w.setNextScheduledRotation(now)
		return w.commit(ctx, "scheduled")
	}
	return nil
}

// commit closes every open file and hands them, as one commit, to the
// uploader.
func (w *partitionWriter) commit(ctx context.Context, why string) error {
	if w.recordCount == 0 {
		return nil
	}
	s := w.t.s
	set := &commitSet{tp: w.tp, start: w.setStart, end: w.lastOffset + 1, records: int64(w.recordCount)}
	for _, enc := range w.order {
		f := w.files[enc]
		for _, o := range f.outs() {
			if err := o.w.Close(); err != nil {
				w.discard()
				return fmt.Errorf("closing %s file of %s-%d at %d: %w", o.ext, w.tp.Topic, w.tp.Partition, f.startOffset, err)
			}
			set.objects = append(set.objects, &pendingObject{
				key:   s.layout.Key(w.tp.Topic, f.encoded, w.tp.Partition, f.startOffset, o.ext),
				sp:    o.sp,
				start: f.startOffset, end: f.lastOffset + 1, records: f.records,
			})
		}
	}
	slog.Debug("S3 sink: committing files", "connector", s.name, "topic", w.tp.Topic, "partition", w.tp.Partition,
		"files", len(w.order), "records", w.recordCount, "offsets", fmt.Sprintf("%d-%d", set.start, set.end-1), "why", why)
	w.files = map[string]*openFile{}
	w.order = w.order[:0]
	clear(w.schemas)
	w.recordCount = 0
	w.setStart = -1
	w.haveBaseTS = false
	return w.t.up.submit(ctx, set)
}

// discard drops the open files (on close, or when a file broke): their
// records were not committed and are read again from the committed
// offset.
func (w *partitionWriter) discard() {
	for _, f := range w.files {
		f.discard()
	}
	w.files = map[string]*openFile{}
	w.order = w.order[:0]
	clear(w.schemas)
	w.recordCount = 0
	w.setStart = -1
	w.haveBaseTS = false
}
