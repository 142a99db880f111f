package log

import "context"

// cleanerState runs compaction for the Manager's logs.
type cleanerState struct{ m *Manager }

func newCleanerState(m *Manager) *cleanerState { return &cleanerState{m: m} }

func (c *cleanerState) runOnce(ctx context.Context) {}

func (c *cleanerState) forget(l *Log) {}
