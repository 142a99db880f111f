package group

// StateCounts returns how many groups this coordinator holds in each
// classic group state (Empty, PreparingRebalance, CompletingRebalance,
// Stable, Dead), every state present: Kafka's classic-group-count gauge,
// read when metrics are scraped.
func (c *Coordinator) StateCounts() map[string]int {
	// The group map is copied under Coordinator.mu and each group's state
	// read under its own lock afterwards (never both: the lock order is
	// Coordinator.mu, then a group's, and scrapes should not hold up
	// requests).
	c.mu.Lock()
	groups := make([]*group, 0, len(c.groups))
	for _, g := range c.groups {
		groups = append(groups, g)
	}
	c.mu.Unlock()
	out := map[string]int{}
	for _, s := range []groupState{stateEmpty, statePreparingRebalance, stateCompletingRebalance, stateStable, stateDead} {
		out[s.String()] = 0
	}
	for _, g := range groups {
		g.mu.Lock()
		out[g.state.String()]++
		g.mu.Unlock()
	}
	return out
}
