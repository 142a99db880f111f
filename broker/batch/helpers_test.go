package batch

import (
	"runtime"
	"testing"
	"time"
)

// runtimeMem samples the bytes allocated so far by the whole process.
type runtimeMem struct{ alloc uint64 }

func (m *runtimeMem) read() {
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	m.alloc = s.TotalAlloc
}

// checkFor polls fn every `every` until it returns nil or wait elapses
// (nats-server's helper).
func checkFor(t *testing.T, wait, every time.Duration, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(wait)
	var err error
	for time.Now().Before(deadline) {
		if err = fn(); err == nil {
			return
		}
		time.Sleep(every)
	}
	t.Fatalf("after %s: %v", wait, err)
}
