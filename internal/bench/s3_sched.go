package bench

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// runQueueWait is how long pid's threads have waited, runnable, for a CPU
// so far: the second field of each /proc/PID/task/TID/schedstat, summed.
// On a shared 2-core machine it tells a phase that was short of CPU
// (others' load, or the benchmark's own processes wanting more than two
// cores) from one that waited on I/O. Threads that already exited are
// not counted; without /proc (or schedstats) it is 0.
func runQueueWait(pid int) time.Duration {
	files, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil {
		return 0
	}
	var total time.Duration
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the thread exited meanwhile
		}
		total += parseSchedstatWait(b)
	}
	return total
}

// parseSchedstatWait reads the run-queue wait (ns) of a schedstat line:
// "<on-cpu ns> <run-queue ns> <timeslices>".
func parseSchedstatWait(b []byte) time.Duration {
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0
	}
	ns, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil || ns < 0 {
		return 0
	}
	return time.Duration(ns)
}
