package runtime

import (
	"sync"
	"sync/atomic"
)

// pollArena is the buffer a poll's records are converted into. The
// producer holds records until their acknowledgement, so a buffer can be
// used again only once every record converted into it is acknowledged (or
// failed): refs counts them, plus one while the poll is being sent.
// Reusing buffers spares the allocation and zeroing of one (several MB
// for a poll of CDC events with their JSON schemas) per poll, and the
// garbage collections they cause.
type pollArena struct {
	buf  []byte
	refs atomic.Int32
}

var arenaPool sync.Pool // *pollArena whose refs reached 0

// getArena returns an arena of at least size bytes, held once.
func getArena(size int) *pollArena {
	if a, _ := arenaPool.Get().(*pollArena); a != nil && cap(a.buf) >= size {
		a.buf = a.buf[:0]
		a.refs.Store(1)
		return a
	}
	a := &pollArena{buf: make([]byte, 0, size)}
	a.refs.Store(1)
	return a
}

func (a *pollArena) hold() { a.refs.Add(1) }

// release drops one hold; the last one returns the arena to the pool.
func (a *pollArena) release() {
	if a.refs.Add(-1) == 0 {
		arenaPool.Put(a)
	}
}
