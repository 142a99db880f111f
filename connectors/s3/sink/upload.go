package sink

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connectors/s3/storage"
)

// Object metadata the sink writes on every object: which commit it
// belongs to, so a task taking over a partition can tell a complete
// commit (keep it, resume after it) from a partial one (delete it, write
// it again).
const (
	metaCommit  = "fjord-commit"  // "<first offset>-<offset after last>-<objects in the commit>"
	metaOffsets = "fjord-offsets" // "<first offset>-<offset after last>-<records>" of this object
)

func commitTag(start, end int64, objects int) string {
	return strconv.FormatInt(start, 10) + "-" + strconv.FormatInt(end, 10) + "-" + strconv.Itoa(objects)
}

func parseCommitTag(s string) (start, end int64, objects int, ok bool) {
	parts := strings.Split(s, "-")
	if len(parts) != 3 {
		return 0, 0, 0, false
	}
	var err1, err2, err3 error
	start, err1 = strconv.ParseInt(parts[0], 10, 64)
	end, err2 = strconv.ParseInt(parts[1], 10, 64)
	objects, err3 = strconv.Atoi(parts[2])
	return start, end, objects, err1 == nil && err2 == nil && err3 == nil && end > start && objects > 0
}

// pendingObject is one closed file waiting for its upload.
type pendingObject struct {
	key        string
	sp         *spool
	start, end int64
	records    int64
}

// commitSet is the files one commit of a Kafka partition closed: offsets
// [start, end) are durable once all of them are uploaded.
type commitSet struct {
	tp       connect.TopicPartition
	start    int64
	end      int64
	records  int64
	objects  []*pendingObject
	bytes    int64
	done     bool
	canceled bool
}

// uploader uploads commit sets in the background, so the task goes on
// encoding the next files while the last ones travel, and tracks per
// partition how far the bucket holds every record in order.
type uploader struct {
	t      *Task
	store  *storage.Store
	sem    chan struct{}
	maxBuf int64

	mu       sync.Mutex
	cond     *sync.Cond
	pending  map[connect.TopicPartition][]*commitSet
	durable  map[connect.TopicPartition]int64
	cancels  map[connect.TopicPartition]context.CancelFunc
	ctxs     map[connect.TopicPartition]context.Context
	wg       map[connect.TopicPartition]*sync.WaitGroup
	buffered int64
	lastErr  error
	failures int
}

func newUploader(t *Task, store *storage.Store, concurrency int, maxBuffered int64) *uploader {
	u := &uploader{t: t, store: store, sem: make(chan struct{}, concurrency), maxBuf: maxBuffered,
		pending: map[connect.TopicPartition][]*commitSet{}, durable: map[connect.TopicPartition]int64{},
		cancels: map[connect.TopicPartition]context.CancelFunc{}, ctxs: map[connect.TopicPartition]context.Context{},
		wg: map[connect.TopicPartition]*sync.WaitGroup{}}
	u.cond = sync.NewCond(&u.mu)
	return u
}

// open starts tracking a partition; its uploads live until close.
func (u *uploader) open(tp connect.TopicPartition) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if _, ok := u.ctxs[tp]; ok {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	u.ctxs[tp], u.cancels[tp], u.wg[tp] = ctx, cancel, &sync.WaitGroup{}
}

// submit queues a commit for upload. It waits while more than maxBuf
// bytes are waiting (uploads behind, or S3 down): the task then stops
// taking records, and memory and disk stay bounded.
func (u *uploader) submit(ctx context.Context, set *commitSet) error {
	for _, o := range set.objects {
		set.bytes += o.sp.size
	}
	u.mu.Lock()
	pctx, ok := u.ctxs[set.tp]
	if !ok {
		u.mu.Unlock()
		for _, o := range set.objects {
			o.sp.release()
		}
		return fmt.Errorf("S3 sink: %s-%d is not assigned to this task", set.tp.Topic, set.tp.Partition)
	}
	wg := u.wg[set.tp]
	u.pending[set.tp] = append(u.pending[set.tp], set)
	u.buffered += set.bytes
	wg.Add(1)
	u.mu.Unlock()
	go u.upload(pctx, wg, set)
	return nil
}

// behind reports whether the bytes waiting for S3 are over the limit,
// and the last upload error if uploads fail.
func (u *uploader) behind() (bool, int64, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.buffered > u.maxBuf, u.buffered, u.lastErr
}

// failing returns the last upload error while uploads fail (each failure
// is an attempt that used up the SDK's own retries), nil once one
// succeeds again.
func (u *uploader) failing() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.failures > 0 {
		return u.lastErr
	}
	return nil
}

// waitBelow waits up to d for the buffered bytes to fall under the limit.
func (u *uploader) waitBelow(ctx context.Context, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		over, _, _ := u.behind()
		if !over {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (u *uploader) upload(ctx context.Context, wg *sync.WaitGroup, set *commitSet) {
	defer wg.Done()
	var owg sync.WaitGroup
	errs := make([]error, len(set.objects))
	for i, o := range set.objects {
		select {
		case u.sem <- struct{}{}:
		case <-ctx.Done():
			errs[i] = ctx.Err()
			continue
		}
		owg.Go(func() {
			defer func() { <-u.sem }()
			errs[i] = u.put(ctx, set, o)
		})
	}
	owg.Wait()
	for _, o := range set.objects {
		o.sp.release()
	}
	ok := true
	for _, err := range errs {
		if err != nil {
			ok = false
		}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.buffered -= set.bytes
	if !ok {
		set.canceled = true
		u.cond.Broadcast()
		return
	}
	set.done = true
	q := u.pending[set.tp]
	n := 0
	for n < len(q) && q[n].done {
		u.durable[set.tp] = q[n].end
		n++
	}
	u.pending[set.tp] = q[n:]
	if n > 0 {
		u.t.requestCommit()
	}
	u.cond.Broadcast()
}

// put uploads one object, trying again with growing pauses while S3 is
// down or throttling (each attempt has the SDK's own s3.part.retries):
// the data stays in the spool and its offsets stay uncommitted until the
// upload succeeds, so nothing is lost and the task recovers by itself.
func (u *uploader) put(ctx context.Context, set *commitSet, o *pendingObject) error {
	meta := map[string]string{
		metaCommit:  commitTag(set.start, set.end, len(set.objects)),
		metaOffsets: commitTag(o.start, o.end, int(o.records)),
	}
	backoff := u.t.s.store.RetryBackoff
	if backoff <= 0 {
		backoff = 200 * time.Millisecond
	}
	if o.sp.size >= u.t.s.partSize {
		// A multipart upload of this key may have been left by a crash
		// (an object rewritten after recovery has the same key).
		if err := u.t.abortUploadsOf(ctx, o.key); err != nil && ctx.Err() == nil {
			slog.Warn("S3 sink: could not list unfinished uploads of the key before uploading it", "key", o.key, "err", err)
		}
	}
	for attempt := 1; ; attempt++ {
		r, err := o.sp.reader()
		if err != nil {
			return err
		}
		err = u.store.Put(ctx, o.key, r, o.sp.size, meta)
		if err == nil {
			u.mu.Lock()
			if u.failures > 0 {
				slog.Info("S3 sink: uploads succeed again", "connector", u.t.s.name, "key", o.key, "after_failures", u.failures)
			}
			recovered := u.failures > 0
			u.lastErr, u.failures = nil, 0
			u.mu.Unlock()
			if recovered {
				u.t.reportCause(nil)
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		u.mu.Lock()
		u.lastErr = err
		u.failures++
		u.mu.Unlock()
		u.t.reportCause(fmt.Errorf("S3 sink: uploading %s fails; retrying with backoff, its records stay uncommitted (nothing is lost): %w", o.key, err))
		slog.Warn("S3 sink: upload failed; keeping the file and trying again (its offsets stay uncommitted)",
			"connector", u.t.s.name, "key", o.key, "attempt", attempt, "retry_in", backoff, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 30*time.Second)
	}
}

// committable returns, per partition, the offset up to which every record
// is in the bucket, for the partitions that moved since the last call.
func (u *uploader) committable() map[connect.TopicPartition]int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make(map[connect.TopicPartition]int64, len(u.durable))
	for tp, off := range u.durable {
		out[tp] = off
	}
	return out
}

// setDurable records that the bucket already holds a partition's records
// below off (found on recovery).
func (u *uploader) setDurable(tp connect.TopicPartition, off int64) {
	u.mu.Lock()
	u.durable[tp] = off
	u.mu.Unlock()
}

// close stops a partition's uploads: the ones in flight get up to grace
// to finish, then are canceled and waited for, so a task that takes the
// partition over never sees an object of ours land after its recovery.
func (u *uploader) close(tp connect.TopicPartition, grace time.Duration) {
	u.mu.Lock()
	cancel, ok := u.cancels[tp]
	wg := u.wg[tp]
	u.mu.Unlock()
	if !ok {
		return
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		cancel()
		<-done
	}
	cancel()
	u.mu.Lock()
	delete(u.cancels, tp)
	delete(u.ctxs, tp)
	delete(u.wg, tp)
	delete(u.pending, tp)
	delete(u.durable, tp)
	u.mu.Unlock()
}
