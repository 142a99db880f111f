package log

import (
	"context"
	"errors"
	"sync"
)

// cleanerState is the Manager's log cleaner (one thread, as Kafka's
// default log.cleaner.threads=1): each pass cleans the filthiest
// compacted log, then the next, until none is due, with one offset map of
// log.cleaner.dedupe.buffer.size bytes reused across cleans.
type cleanerState struct {
	m  *Manager
	mu sync.Mutex // one pass at a time
	om *offsetMap
}

func newCleanerState(m *Manager) *cleanerState { return &cleanerState{m: m} }

// runOnce cleans every compacted log that is due, filthiest first.
func (c *cleanerState) runOnce(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	done := map[*Log]bool{}
	for ctx.Err() == nil {
		now := c.m.opts.Now().UnixMilli()
		var best *Log
		var bestInfo cleanable
		for _, p := range c.m.All() {
			l := p.Log
			cfg := l.config()
			if done[l] || !cfg.Compact {
				continue
			}
			info := l.cleanableInfo(now, cfg)
			if !info.wantsCleaning(cfg) || info.firstUncleanable <= l.segments()[0].base {
				continue
			}
			if best == nil || info.ratio > bestInfo.ratio {
				best, bestInfo = l, info
			}
		}
		if best == nil {
			return
		}
		done[best] = true
		if c.om == nil {
			c.om = newOffsetMap(c.m.cfg.CleanerDedupeBufferSize)
		}
		st, err := best.clean(ctx, c.om, bestInfo, now, best.config(), c.m.cfg.CleanerIOBufferSize)
		if err != nil {
			if errors.Is(err, errCleanAborted) || errors.Is(err, ErrClosed) {
				c.m.logger.Info("log cleaning aborted", "partition", best.tp.String(), "err", err)
			} else {
				c.m.logger.Warn("log cleaning failed", "partition", best.tp.String(), "err", err)
			}
			continue
		}
		if st.EndOffset > bestInfo.firstDirty {
			best.cleanedTo.Store(st.EndOffset)
			c.m.setCleanerOffset(best, st.EndOffset)
		}
	}
}
