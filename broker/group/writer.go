package group

import (
	"context"
	"errors"
	"sync"
)

// errNotCoordinator fails writes queued on a partition that was unloaded.
var errNotCoordinator = errors.New("__consumer_offsets partition is no longer loaded here")

// maxBatchBytes bounds how many queued writes one Store.Append merges: the
// default max.message.bytes of __consumer_offsets is 1 MiB, and one write
// larger than this still goes alone.
const maxBatchBytes = 900 << 10

// write is one unit of persistence: records that must be durable together,
// and what to do once they are (or failed). apply runs on the writer
// goroutine with no locks held; done is closed after apply returned.
type write struct {
	records []Record
	apply   func(err error)
	done    chan struct{}
	err     error // set before done is closed
}

func (w *write) finish(err error) {
	w.err = err
	if w.apply != nil {
		w.apply(err)
	}
	close(w.done)
}

// writer serialises the appends of one __consumer_offsets partition. Writes
// are queued under the owning group's lock, so for any one group the log
// order and the order of apply callbacks are the order in which the group's
// state changed; writes queued while an Append is in flight are merged into
// the next Append (a group commit of offset commits and rebalances).
type writer struct {
	store     Store
	partition int32

	mu     sync.Mutex // leaf lock: guards queue and closed
	queue  []*write
	closed bool

	wake   chan struct{} // capacity 1: "the queue is not empty"
	ctx    context.Context
	cancel context.CancelFunc
	exited chan struct{}
}

func newWriter(store Store, partition int32) *writer {
	ctx, cancel := context.WithCancel(context.Background())
	w := &writer{
		store:     store,
		partition: partition,
		wake:      make(chan struct{}, 1),
		ctx:       ctx,
		cancel:    cancel,
		exited:    make(chan struct{}),
	}
	go w.run()
	return w
}

// enqueue queues records for appending and returns the write to wait on.
// It never blocks, so it is safe under a group's lock.
func (w *writer) enqueue(records []Record, apply func(error)) *write {
	wr := &write{records: records, apply: apply, done: make(chan struct{})}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		// The caller holds a group lock that apply may need.
		go wr.finish(errNotCoordinator)
		return wr
	}
	w.queue = append(w.queue, wr)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return wr
}

// close stops the writer: queued writes fail with errNotCoordinator, an
// in-flight Append sees its context cancelled. It waits for the writer
// goroutine, so it must not be called with a group lock held.
func (w *writer) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.cancel()
	<-w.exited
}

func (w *writer) run() {
	defer close(w.exited)
	for {
		select {
		case <-w.ctx.Done():
			w.failQueued()
			return
		case <-w.wake:
		}
		for {
			batch := w.take()
			if len(batch) == 0 {
				break
			}
			var err error
			if w.ctx.Err() != nil {
				err = errNotCoordinator
			} else {
				var recs []Record
				for _, wr := range batch {
					recs = append(recs, wr.records...)
				}
				if len(recs) > 0 {
					err = w.store.Append(w.ctx, w.partition, recs)
					if err != nil && w.ctx.Err() != nil {
						err = errNotCoordinator
					}
				}
			}
			for _, wr := range batch {
				wr.finish(err)
			}
		}
	}
}

// take removes the longest prefix of the queue that fits maxBatchBytes
// (at least one write).
func (w *writer) take() []*write {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, size := 0, 0
	for _, wr := range w.queue {
		s := 0
		for _, r := range wr.records {
			s += len(r.Key) + len(r.Value) + 32
		}
		if n > 0 && size+s > maxBatchBytes {
			break
		}
		n++
		size += s
	}
	batch := w.queue[:n:n]
	w.queue = w.queue[n:]
	if len(w.queue) == 0 {
		w.queue = nil
	}
	return batch
}

func (w *writer) failQueued() {
	w.mu.Lock()
	q := w.queue
	w.queue = nil
	w.mu.Unlock()
	for _, wr := range q {
		wr.finish(errNotCoordinator)
	}
}
