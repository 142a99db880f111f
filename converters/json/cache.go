package json

import (
	"sync"
	"sync/atomic"
)

// lru is the schemas.cache.size bounded cache Kafka keeps in each
// direction (Connect schema → envelope JSON, envelope JSON → Connect
// schema). Hits take a read lock and stamp the entry; inserting into a
// full cache evicts the least recently stamped entry (a scan, paid only
// when schemas churn).
type lru[K comparable, V any] struct {
	mu    sync.RWMutex
	m     map[K]*lruEntry[V]
	size  int
	clock atomic.Uint64
}

type lruEntry[V any] struct {
	v    V
	used atomic.Uint64
}

func newLRU[K comparable, V any](size int) *lru[K, V] {
	return &lru[K, V]{m: make(map[K]*lruEntry[V]), size: size}
}

func (c *lru[K, V]) get(k K) (V, bool) {
	c.mu.RLock()
	e, ok := c.m[k]
	c.mu.RUnlock()
	if !ok {
		var zero V
		return zero, false
	}
	e.used.Store(c.clock.Add(1))
	return e.v, true
}

func (c *lru[K, V]) put(k K, v V) {
	if c.size <= 0 {
		return
	}
	e := &lruEntry[V]{v: v}
	e.used.Store(c.clock.Add(1))
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; !ok && len(c.m) >= c.size {
		var oldest K
		first := true
		var min uint64
		for key, x := range c.m {
			if u := x.used.Load(); first || u < min {
				oldest, min, first = key, u, false
			}
		}
		delete(c.m, oldest)
	}
	c.m[k] = e
}

func (c *lru[K, V]) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}
