package source

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// targetConfig is MirrorSourceConnector.targetConfig: the source topic's
// config entries to give its remote topic. Read-only, sensitive and
// static broker settings never go; config.properties.exclude drops
// others. When creating a topic (incremental false) the source's
// defaults go only when use.defaults.from=source; when syncing
// (incremental true) they are kept and become a SET or a DELETE
// (alterOps).
func (c *Connector) targetConfig(entries []configEntry, incremental bool) []configEntry {
	var out []configEntry
	for _, e := range entries {
		if !incremental && e.isDefault() && !c.cfgs.ShouldReplicateSourceDefault(e.name) {
			continue
		}
		if e.readOnly || e.sensitive || e.source == kmsg.ConfigSourceStaticBrokerConfig {
			continue
		}
		if !c.cfgs.ShouldReplicateConfigProperty(e.name) {
			continue
		}
		out = append(out, e)
	}
	return out
}

// configMap is the entries with a value as a name → value map.
func configMap(entries []configEntry) map[string]string {
	m := make(map[string]string, len(entries))
	for _, e := range entries {
		if e.value != nil {
			m[e.name] = *e.value
		}
	}
	return m
}

// alterOps are the changes that make the remote topic's config (current)
// match the source's (desired, from targetConfig(..., true)): MM2 SETs a
// source value and DELETEs a target override where the source has its
// default (unless use.defaults.from=source). Changes that would leave the
// target as it is are left out, so an unchanged topic costs no write.
func (c *Connector) alterOps(desired, current []configEntry) []alterOp {
	cur := make(map[string]configEntry, len(current))
	for _, e := range current {
		cur[e.name] = e
	}
	var ops []alterOp
	for _, e := range desired {
		have, ok := cur[e.name]
		overridden := ok && have.source == kmsg.ConfigSourceDynamicTopicConfig
		if e.isDefault() && !c.cfgs.ShouldReplicateSourceDefault(e.name) {
			if overridden {
				ops = append(ops, alterOp{name: e.name, delete: true})
			}
			continue
		}
		if e.value == nil {
			continue
		}
		if ok && have.value != nil && *have.value == *e.value {
			continue
		}
		ops = append(ops, alterOp{name: e.name, value: *e.value})
	}
	return ops
}

// topicsBeingReplicated are the known source topics whose remote topic
// exists.
func (c *Connector) topicsBeingReplicated() map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]string{} // source → remote
	for t := range partitionCounts(c.knownSource) {
		r := c.formatRemoteTopic(t)
		if _, ok := c.knownTarget[r]; ok {
			out[t] = r
		}
	}
	return out
}

// syncTopicConfigs is MM2's: the remote topics' configs follow their
// source topics'.
//
// A topic that keeps its name on the target (identity naming) may be
// mirrored both ways (active-active). Copying its whole config each time,
// as MM2 does, would then let the flow running the other way undo a
// change made on one side before this flow copied it. For such topics
// only the settings that changed on the source since the previous sync
// are copied (the first sync takes the baseline; configs were copied when
// the remote topic was created), and a value the target already has is
// not written again, so a change travels once and does not bounce back.
func (c *Connector) syncTopicConfigs(ctx context.Context) error {
	pairs := c.topicsBeingReplicated()
	if len(pairs) == 0 {
		return nil
	}
	srcCfgs, err := c.src.topicConfigs(ctx, sortedKeys(pairs))
	if err != nil {
		return err
	}
	remotes := make([]string, 0, len(pairs))
	for _, t := range sortedKeys(pairs) {
		remotes = append(remotes, pairs[t])
	}
	dstCfgs, err := c.dst.topicConfigs(ctx, remotes)
	if err != nil {
		return err
	}
	changes := map[string][]alterOp{}
	seen := map[string]map[string]string{} // identity-named source topic → its fingerprint now
	for t, entries := range srcCfgs {
		r := pairs[t]
		current, ok := dstCfgs[r]
		if !ok {
			continue // deleted on the target meanwhile: the refresh recreates it
		}
		desired := c.targetConfig(entries, true)
		if r == t {
			fp := c.fingerprint(desired)
			seen[t] = fp
			c.mu.Lock()
			last, known := c.lastSynced[t]
			c.mu.Unlock()
			if !known {
				continue
			}
			desired = changedSince(last, fp, desired)
		}
		if ops := c.alterOps(desired, current); len(ops) > 0 {
			changes[r] = ops
		}
	}
	var errs map[string]error
	if len(changes) > 0 {
		if errs, err = c.dst.incrementalAlterConfigs(ctx, changes); err != nil {
			return err
		}
	}
	c.mu.Lock()
	for t, fp := range seen {
		if errs[t] == nil { // identity: the remote topic is named t
			c.lastSynced[t] = fp
		}
	}
	c.mu.Unlock()
	for _, r := range sortedKeys(errs) {
		err := errs[r]
		switch {
		case err == nil:
			c.log.Info("Synced remote topic config", "topic", r, "changes", len(changes[r]))
		case errors.Is(err, kerr.UnsupportedVersion):
			c.log.Error("Failed to sync configs with the IncrementalAlterConfigs API", "topic", r, "cluster", c.s.targetAlias, "err", err)
			if c.cctx != nil {
				c.cctx.RaiseError(fmt.Errorf("the target cluster '%s' is not compatible with IncrementalAlterConfigs API: %w", c.s.targetAlias, err))
			}
		default:
			c.log.Warn("Could not alter configuration of topic", "topic", r, "err", err)
		}
	}
	return nil
}

// fingerprint maps each desired entry to what the sync would make of it:
// its value, or "" for "the target's default" (a DELETE).
func (c *Connector) fingerprint(desired []configEntry) map[string]string {
	fp := make(map[string]string, len(desired))
	for _, e := range desired {
		switch {
		case e.isDefault() && !c.cfgs.ShouldReplicateSourceDefault(e.name):
			fp[e.name] = ""
		case e.value != nil:
			fp[e.name] = "=" + *e.value
		}
	}
	return fp
}

// changedSince keeps the entries whose fingerprint differs from last.
func changedSince(last, now map[string]string, desired []configEntry) []configEntry {
	var out []configEntry
	for _, e := range desired {
		if v, ok := now[e.name]; ok && last[e.name] != v {
			out = append(out, e)
		}
	}
	return out
}
