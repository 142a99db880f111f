package controller

// MetadataFollower keeps a broker's metadata image current by fetching the
// metadata log from the active controller, as a KRaft observer does
// (Fetch of __cluster_metadata-0, FetchSnapshot when the leader says the
// wanted offset is only in a snapshot).
//
// Every entry is applied exactly once and in order: a fetched entry is
// applied only if its offset is the image's offset + 1 (older ones are
// skipped, a gap discards the answer and fetches again). A record that
// does not apply means this image has diverged from the controller's,
// which should never happen; the follower then installs a fresh snapshot
// rather than serve a wrong image.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/metadata"
)

// FollowerOptions configures a MetadataFollower.
type FollowerOptions struct {
	Client *ControllerClient
	Logger *slog.Logger
	// OnChange is called with each newly published image, in order, from
	// the follower's goroutine (it must not block for long: fetching
	// waits for it).
	OnChange func(old, new *metadata.Image)
	// MaxWait is the fetch long-poll wait (Kafka's fetch.max.wait for the
	// metadata log, 500 ms by default).
	MaxWait time.Duration
	// MaxBytes caps one fetch's records (default 8 MiB).
	MaxBytes int32
}

// MetadataFollower follows the metadata log; see the file comment.
type MetadataFollower struct {
	opts   FollowerOptions
	log    *slog.Logger
	image  atomic.Pointer[metadata.Image]
	cancel context.CancelFunc
	done   chan struct{}
	// snapshots counts installed snapshots (tests, logs).
	snapshots atomic.Int64

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every publish
}

// StartMetadataFollower starts following from an empty image.
func StartMetadataFollower(opts FollowerOptions) *MetadataFollower {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxWait <= 0 {
		opts.MaxWait = 500 * time.Millisecond
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = 8 << 20
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &MetadataFollower{opts: opts, log: opts.Logger, cancel: cancel, done: make(chan struct{}), changed: make(chan struct{})}
	f.image.Store(metadata.Empty())
	go f.run(ctx)
	return f
}

// Image is the latest applied image.
func (f *MetadataFollower) Image() *metadata.Image { return f.image.Load() }

// WaitOffset returns once the image's offset is at least off, or ctx's
// error (also ErrClientClosed-like context.Canceled after Close).
func (f *MetadataFollower) WaitOffset(ctx context.Context, off int64) error {
	for {
		f.mu.Lock()
		ch := f.changed
		f.mu.Unlock()
		if f.Image().Offset >= off {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-f.done:
			return errFollowerClosed
		case <-ch:
		}
	}
}

var errFollowerClosed = errors.New("metadata follower closed")

// Close stops following and waits for the fetch loop to end.
func (f *MetadataFollower) Close() {
	f.cancel()
	<-f.done
}

// attempt bounds one fetch on one controller beyond the long-poll wait:
// a silent controller must not hold metadata up for a whole
// RequestTimeout when another has taken over.
func (f *MetadataFollower) attempt() time.Duration {
	return min(f.opts.Client.opts.RequestTimeout, 5*time.Second)
}

func (f *MetadataFollower) publish(img *metadata.Image) {
	old := f.image.Swap(img)
	if f.opts.OnChange != nil {
		f.opts.OnChange(old, img)
	}
	f.mu.Lock()
	close(f.changed)
	f.changed = make(chan struct{})
	f.mu.Unlock()
}

func (f *MetadataFollower) run(ctx context.Context) {
	defer close(f.done)
	backoff := retryBackoffMin
	for ctx.Err() == nil {
		err := f.fetchOnce(ctx)
		if err == nil {
			backoff = retryBackoffMin
			continue
		}
		if ctx.Err() != nil {
			return
		}
		f.log.Warn("metadata fetch failed; retrying", "err", err, "offset", f.Image().Offset)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, retryBackoffMax)
	}
}

// fetchOnce fetches and applies once: records, or a snapshot when the
// controller names one.
func (f *MetadataFollower) fetchOnce(ctx context.Context) error {
	img := f.Image()
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(clientVersions[kmsg.Fetch])
	req.ReplicaID = f.opts.Client.NodeID()
	req.ReplicaState.ID = f.opts.Client.NodeID()
	req.ReplicaState.Epoch = -1
	if id := f.opts.Client.opts.ClusterID; id != "" {
		req.ClusterID = &id
	}
	req.MaxWaitMillis = int32(f.opts.MaxWait / time.Millisecond)
	req.MinBytes = 1
	req.MaxBytes = f.opts.MaxBytes
	req.SessionEpoch = -1 // no fetch session (KRaft does not use them)
	t := kmsg.NewFetchRequestTopic()
	t.Topic, t.TopicID = MetadataTopic, MetadataTopicID
	p := kmsg.NewFetchRequestTopicPartition()
	p.Partition = 0
	p.CurrentLeaderEpoch = -1
	p.FetchOffset = img.Offset + 1
	p.LastFetchedEpoch = -1
	p.LogStartOffset = -1
	p.PartitionMaxBytes = f.opts.MaxBytes
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)

	resp, err := f.opts.Client.do(ctx, laneFetch, req, f.attempt())
	if err != nil {
		return err
	}
	fr := resp.(*kmsg.FetchResponse)
	if fr.ErrorCode != 0 {
		return codeError(fr.ErrorCode, nil)
	}
	if len(fr.Topics) != 1 || len(fr.Topics[0].Partitions) != 1 {
		return errors.New("malformed metadata fetch answer")
	}
	rp := fr.Topics[0].Partitions[0]
	if e := codeError(rp.ErrorCode, nil); e != nil {
		return e
	}
	if rp.SnapshotID.EndOffset >= 0 {
		return f.installSnapshot(ctx, rp.SnapshotID.EndOffset, rp.SnapshotID.Epoch)
	}
	entries, err := decodeEntries(rp.RecordBatches)
	if err != nil {
		return err
	}
	return f.applyEntries(ctx, img, entries)
}

// applyEntries applies the contiguous run of entries that follows img and
// publishes the result once.
func (f *MetadataFollower) applyEntries(ctx context.Context, img *metadata.Image, entries []LogEntry) error {
	n := img
	for _, e := range entries {
		if e.Offset <= n.Offset {
			continue // already applied (an answer overlapping the last)
		}
		if e.Offset != n.Offset+1 && !(n.Offset == -1 && e.Offset == 1) {
			// Raft's first index is 1, so an empty image accepts 1 as
			// next; any other gap is refetched from where we are.
			if n != img {
				f.publish(n)
			}
			return fmt.Errorf("metadata log gap: have offset %d, got entry %d", n.Offset, e.Offset)
		}
		next, err := n.ApplyEntry(e.Offset, e.Records)
		if err != nil {
			if n != img {
				f.publish(n)
			}
			f.log.Error("metadata entry does not apply; installing a snapshot", "offset", e.Offset, "err", err)
			return f.installSnapshot(ctx, -1, -1)
		}
		n = next
	}
	if n != img {
		f.publish(n)
	}
	return nil
}

// installSnapshot fetches the controller's snapshot (chunk by chunk) and
// publishes the image it describes.
func (f *MetadataFollower) installSnapshot(ctx context.Context, endOffset int64, epoch int32) error {
	var data []byte
	var size int64 = -1
	for attempt := 0; attempt < 1000; attempt++ {
		req := kmsg.NewPtrFetchSnapshotRequest()
		req.SetVersion(clientVersions[kmsg.FetchSnapshot])
		req.ReplicaID = f.opts.Client.NodeID()
		req.MaxBytes = f.opts.MaxBytes
		if id := f.opts.Client.opts.ClusterID; id != "" {
			req.ClusterID = &id
		}
		t := kmsg.NewFetchSnapshotRequestTopic()
		t.Topic = MetadataTopic
		p := kmsg.NewFetchSnapshotRequestTopicPartition()
		p.Partition = 0
		p.CurrentLeaderEpoch = -1
		p.SnapshotID.EndOffset, p.SnapshotID.Epoch = endOffset, epoch
		p.Position = int64(len(data))
		t.Partitions = append(t.Partitions, p)
		req.Topics = append(req.Topics, t)
		resp, err := f.opts.Client.do(ctx, laneFetch, req, f.attempt())
		if err != nil {
			return err
		}
		sr := resp.(*kmsg.FetchSnapshotResponse)
		if e := codeError(sr.ErrorCode, nil); e != nil {
			return e
		}
		if len(sr.Topics) != 1 || len(sr.Topics[0].Partitions) != 1 {
			return errors.New("malformed FetchSnapshot answer")
		}
		rp := sr.Topics[0].Partitions[0]
		if e := codeError(rp.ErrorCode, nil); e != nil {
			return fmt.Errorf("fetch snapshot: %w", e)
		}
		if len(data) == 0 {
			// Position 0 gets a new snapshot; the rest must continue it.
			endOffset, epoch, size = rp.SnapshotID.EndOffset, rp.SnapshotID.Epoch, rp.Size
		} else if rp.SnapshotID.EndOffset != endOffset || rp.Size != size {
			return errors.New("fetch snapshot: the snapshot changed while fetching it")
		}
		if rp.Position != int64(len(data)) {
			return fmt.Errorf("fetch snapshot: asked position %d, got %d", len(data), rp.Position)
		}
		if len(rp.Bytes) == 0 && int64(len(data)) < size {
			return errors.New("fetch snapshot: empty chunk")
		}
		data = append(data, rp.Bytes...)
		if int64(len(data)) >= size {
			break
		}
	}
	if int64(len(data)) != size {
		return fmt.Errorf("fetch snapshot: got %d of %d bytes", len(data), size)
	}
	img, err := decodeSnapshot(data, endOffset)
	if err != nil {
		return fmt.Errorf("fetch snapshot: %w", err)
	}
	if cur := f.Image().Offset; img.Offset < cur {
		// Never go backwards: an older snapshot than what we have is of
		// no use (a new controller that has not caught up yet).
		return fmt.Errorf("fetch snapshot: controller's snapshot at %d is behind our image at %d", img.Offset, cur)
	}
	f.log.Info("installed metadata snapshot", "offset", img.Offset)
	f.snapshots.Add(1)
	f.publish(img)
	return nil
}
