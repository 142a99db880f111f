package partitioner

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// defaultPartitioner is Confluent's DefaultPartitioner: the Kafka
// partition, "partition=<n>".
type defaultPartitioner struct {
	mu sync.Mutex
	// names[n] is "partition=<n>": Encode runs for every record, and a
	// task sees few partitions, so the strings are made once.
	names atomic.Pointer[[]string]
}

// maxNamedPartition bounds the cache; higher partitions are formatted
// each time.
const maxNamedPartition = 1 << 16

func (p *defaultPartitioner) Encode(r *connect.SinkRecord, _ time.Time) (string, error) {
	if names := p.names.Load(); names != nil && r.Partition >= 0 && int(r.Partition) < len(*names) {
		return (*names)[r.Partition], nil
	}
	return p.name(r.Partition), nil
}

// name grows the cache to cover n (copy on write, so Encode reads it
// without a lock).
func (p *defaultPartitioner) name(n int32) string {
	if n < 0 || n >= maxNamedPartition {
		return "partition=" + strconv.Itoa(int(n))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var old []string
	if names := p.names.Load(); names != nil {
		if old = *names; int(n) < len(old) {
			return old[n]
		}
	}
	size := min(max(int(n)+1, 2*len(old), 16), maxNamedPartition)
	names := make([]string, size)
	copy(names, old)
	for i := len(old); i < size; i++ {
		names[i] = "partition=" + strconv.Itoa(i)
	}
	p.names.Store(&names)
	return names[n]
}
