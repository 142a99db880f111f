package log

import (
	"errors"
	"fmt"
	"io"

	"github.com/fjordhq/fjord/broker/batch"
)

// errFound stops a record walk.
var errFound = errors.New("found")

// OffsetForTimestamp answers ListOffsets for a timestamp: the first record
// (looking inside batches, decompressing if needed) whose timestamp is >=
// ts and offset >= the log start offset. As in Kafka only the first
// segment whose max timestamp reaches ts is searched; ok is false if no
// record qualifies.
func (l *Log) OffsetForTimestamp(ts int64) (offset, timestamp int64, ok bool, err error) {
	lso := l.lso.Load()
	for _, s := range l.segments() {
		if maxTs, _ := s.maxTimestamp(); maxTs < ts {
			continue
		}
		offset, timestamp, ok, err = s.findOffsetByTimestamp(ts, lso)
		if err != nil {
			err = fmt.Errorf("%s: offset for timestamp %d: %w", l.tp, ts, err)
		}
		return offset, timestamp, ok, err
	}
	return -1, -1, false, nil
}

func (s *segment) findOffsetByTimestamp(ts, startOffset int64) (int64, int64, bool, error) {
	if err := s.ensureLoaded(); err != nil {
		return 0, 0, false, err
	}
	s.mu.RLock()
	_, tsOff := s.tidx.lookup(ts)
	pos := s.idx.lookup(max(tsOff, startOffset))
	s.mu.RUnlock()
	limit := s.size.Load()
	r := newHeaderReader(s.f)
	defer r.release()
	var buf []byte
	var d batch.Decoder
	for pos < limit {
		h, err := r.at(pos, limit)
		if err != nil {
			return 0, 0, false, err
		}
		n := int64(batch.Size(h))
		if h.MaxTimestamp() >= ts && h.LastOffset() >= startOffset {
			if buf, err = readBatchAt(s, buf, pos, n); err != nil {
				return 0, 0, false, err
			}
			var fo, ft int64
			err := d.Records(batch.Batch(buf), func(rec *batch.Record) error {
				if rec.Timestamp >= ts && rec.Offset >= startOffset {
					fo, ft = rec.Offset, rec.Timestamp
					return errFound
				}
				return nil
			})
			if errors.Is(err, errFound) {
				return fo, ft, true, nil
			}
			if err != nil {
				return 0, 0, false, err
			}
		}
		pos += n
	}
	return -1, -1, false, nil
}

func readBatchAt(s *segment, buf []byte, pos, n int64) ([]byte, error) {
	if int64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := s.f.ReadAt(buf, pos); err != nil {
		return buf, fmt.Errorf("read batch at %d of %s: %w", pos, s.f.Name(), errOr(err, io.ErrUnexpectedEOF))
	}
	return buf, nil
}

// MaxTimestamp answers ListOffsets MAX_TIMESTAMP (-3): the largest
// timestamp in the log and the offset of the first record carrying it
// (Kafka 3.8+ looks inside the batch). (-1, -1) for a log without
// timestamps.
func (l *Log) MaxTimestamp() (ts, offset int64) {
	var best *segment
	bestTs, bestOff := int64(-1), int64(-1)
	for _, s := range l.segments() {
		if t, o := s.maxTimestamp(); t > bestTs {
			best, bestTs, bestOff = s, t, o
		}
	}
	if best == nil {
		return -1, -1
	}
	if off, ok := best.offsetOfMaxTimestamp(bestTs, bestOff); ok {
		return bestTs, off
	}
	return bestTs, bestOff
}

// offsetOfMaxTimestamp finds the first record with timestamp ts in the
// batch holding lastOffset (the time index records batch last offsets).
func (s *segment) offsetOfMaxTimestamp(ts, lastOffset int64) (int64, bool) {
	if err := s.ensureLoaded(); err != nil {
		return 0, false
	}
	s.mu.RLock()
	pos := s.idx.lookup(lastOffset)
	s.mu.RUnlock()
	limit := s.size.Load()
	r := newHeaderReader(s.f)
	defer r.release()
	for pos < limit {
		h, err := r.at(pos, limit)
		if err != nil {
			return 0, false
		}
		n := int64(batch.Size(h))
		if h.MaxTimestamp() == ts {
			buf, err := readBatchAt(s, nil, pos, n)
			if err != nil {
				return 0, false
			}
			found := int64(-1)
			err = batch.Batch(buf).Records(func(rec *batch.Record) error {
				if rec.Timestamp == ts {
					found = rec.Offset
					return errFound
				}
				return nil
			})
			if errors.Is(err, errFound) {
				return found, true
			}
			return h.LastOffset(), true
		}
		pos += n
	}
	return 0, false
}
