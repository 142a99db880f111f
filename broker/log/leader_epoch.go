package log

import "fmt"

// AssignEpochStartOffset records that leader epoch starts at offset
// without appending anything: Kafka's maybeAssignEpochStartOffset, done
// when a replica becomes leader (at its log end offset). A follower whose
// log holds a later epoch than any record the new leader has — successive
// elections in a short time — then gets an answer to OffsetForLeaderEpoch
// that makes it truncate to the right offset. Epochs at or after offset
// with a number >= epoch are dropped, as on any new epoch.
func (l *Log) AssignEpochStartOffset(epoch int32, offset int64) error {
	if epoch < 0 || offset < 0 {
		return fmt.Errorf("%s: assign leader epoch %d at offset %d: negative", l.tp, epoch, offset)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usable(); err != nil {
		return err
	}
	if offset > l.leo.Load() {
		return fmt.Errorf("%s: assign leader epoch %d at offset %d past the log end %d: %w", l.tp, epoch, offset, l.leo.Load(), ErrInvalidOffsets)
	}
	return l.epochs.assign(epoch, offset)
}
