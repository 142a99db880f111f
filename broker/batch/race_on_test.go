//go:build race

package batch

// raceEnabled: sync.Pool drops a share of Puts under the race detector,
// so allocation counts of pooled paths are only meaningful without it.
const raceEnabled = true
