package controller

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"

	"github.com/fjordhq/fjord/broker/metadata"
)

// fsm is the raft state machine of the controller quorum: every voter
// applies the committed command entries (JSON []metadata.Record) to an
// immutable Image, in log order, and publishes it. Image.Offset is the raft
// index of the last applied command.
//
// An entry whose records do not apply is skipped whole on every voter
// alike (the active controller validates before proposing, so this only
// guards against a bug); its index still advances Offset so that offsets
// stay comparable across voters and brokers.
type fsm struct {
	log      *slog.Logger
	onChange func(old, new *metadata.Image)

	image atomic.Pointer[metadata.Image]
	// snapOffset is the image offset captured by the newest snapshot
	// taken or restored: every command at or below the index a snapshot
	// compacted the log to has an offset <= snapOffset (see ReadLog).
	snapOffset atomic.Int64

	mu      sync.Mutex
	applied chan struct{} // closed and replaced on every publish
}

func newFSM(log *slog.Logger, onChange func(old, new *metadata.Image)) *fsm {
	f := &fsm{log: log, onChange: onChange, applied: make(chan struct{})}
	f.image.Store(metadata.Empty())
	f.snapOffset.Store(-1)
	return f
}

// decodeCommand decodes a raft command entry.
func decodeCommand(b []byte) ([]metadata.Record, error) {
	var recs []metadata.Record
	if err := json.Unmarshal(b, &recs); err != nil {
		return nil, fmt.Errorf("decode metadata entry: %w", err)
	}
	return recs, nil
}

func (f *fsm) Apply(l *raft.Log) any {
	old := f.image.Load()
	recs, err := decodeCommand(l.Data)
	var next *metadata.Image
	if err == nil {
		next, err = old.ApplyEntry(int64(l.Index), recs)
	}
	if err != nil {
		f.log.Error("metadata entry skipped", "index", l.Index, "err", err)
		next, _ = old.ApplyEntry(int64(l.Index), nil)
	}
	f.publish(old, next)
	return err
}

// publish stores img and wakes WaitApplied callers. Called only from
// raft's FSM goroutine (Apply, Restore), so OnChange sees images in order.
func (f *fsm) publish(old, img *metadata.Image) {
	f.image.Store(img)
	if f.onChange != nil {
		f.onChange(old, img)
	}
	f.mu.Lock()
	close(f.applied)
	f.applied = make(chan struct{})
	f.mu.Unlock()
}

// appliedCh returns a channel closed at the next publish.
func (f *fsm) appliedCh() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.applied
}

// fsmSnapshotData is the snapshot file: the records that rebuild the image.
type fsmSnapshotData struct {
	Version int               `json:"version"`
	Offset  int64             `json:"offset"`
	Records []metadata.Record `json:"records"`
}

func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	img := f.image.Load()
	if img.Offset > f.snapOffset.Load() {
		f.snapOffset.Store(img.Offset)
	}
	return &fsmSnapshot{img: img}, nil
}

func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	var d fsmSnapshotData
	if err := json.NewDecoder(rc).Decode(&d); err != nil {
		return fmt.Errorf("decode metadata snapshot: %w", err)
	}
	if d.Version != 1 {
		return fmt.Errorf("metadata snapshot version %d not supported", d.Version)
	}
	img, err := metadata.Empty().ApplyEntry(d.Offset, d.Records)
	if err != nil {
		return fmt.Errorf("restore metadata snapshot: %w", err)
	}
	if d.Offset > f.snapOffset.Load() {
		f.snapOffset.Store(d.Offset)
	}
	f.publish(f.image.Load(), img)
	return nil
}

// fsmSnapshot holds an immutable image; Persist may run concurrently
// with Apply because the image is never modified.
type fsmSnapshot struct{ img *metadata.Image }

func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	d := fsmSnapshotData{Version: 1, Offset: s.img.Offset, Records: snapshotRecords(s.img)}
	if err := json.NewEncoder(sink).Encode(&d); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *fsmSnapshot) Release() {}
