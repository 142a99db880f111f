package main

import (
	"os"
	"runtime/debug"
)

// Garbage collector defaults for the long-running servers. A broker and a
// Connect worker keep a small live heap and make a lot of short-lived
// garbage (records on their way through); Go's default GOGC=100 then
// spends a fifth of the CPU collecting (measured on the CDC benchmark).
// GOGC=400 collects a quarter as often, and a soft memory limit (a
// quarter of the machine's memory, at least 1 GiB) makes the collector
// work harder before the heap grows past it. GOGC and GOMEMLIMIT in the
// environment win, as they do for any Go program.
const (
	serverGCPercent   = 400
	minServerMemLimit = 1 << 30
)

func tuneGCForServer() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(serverGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(max(int64(minServerMemLimit), totalMemory()/4))
	}
}
