package controller

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/fjordhq/fjord/broker/metadata"
)

// Partition state changes on the active controller, after Kafka's
// ReplicationControlManager and PartitionChangeBuilder: every change is a
// full PartitionRecord; a leader change bumps the leader epoch, and every
// change bumps the partition epoch.

// partitionChange computes one partition's next state (Kafka's
// PartitionChangeBuilder without ELR and directories).
type partitionChange struct {
	p          *metadata.Partition
	acceptable func(id int32) bool // may lead: live, not being removed
	preferred  bool                // preferred election: replicas[0] first
	unclean    bool                // may elect outside the ISR

	isr, replicas, adding, removing []int32 // targets
}

func newPartitionChange(p *metadata.Partition, acceptable func(int32) bool) *partitionChange {
	return &partitionChange{
		p: p, acceptable: acceptable,
		isr: slices.Clone(p.ISR), replicas: slices.Clone(p.Replicas),
		adding: slices.Clone(p.AddingReplicas), removing: slices.Clone(p.RemovingReplicas),
	}
}

func (c *partitionChange) validLeader(id int32) bool {
	return id >= 0 && slices.Contains(c.isr, id) && c.acceptable(id)
}

// elect returns the leader after the change and whether it was chosen
// outside the ISR.
func (c *partitionChange) elect() (int32, bool) {
	if c.preferred {
		if len(c.replicas) > 0 && c.validLeader(c.replicas[0]) {
			return c.replicas[0], false
		}
		if c.validLeader(c.p.Leader) {
			return c.p.Leader, false
		}
		for _, r := range c.replicas[min(1, len(c.replicas)):] {
			if c.validLeader(r) {
				return r, false
			}
		}
		return -1, false
	}
	if c.validLeader(c.p.Leader) {
		return c.p.Leader, false
	}
	for _, r := range c.replicas {
		if c.validLeader(r) {
			return r, false
		}
	}
	if c.unclean {
		for _, r := range c.replicas {
			if c.acceptable(r) {
				return r, true
			}
		}
	}
	return -1, false
}

// completeReassignment finishes a reassignment once every target replica
// is in the target ISR (Kafka's maybeCompleteReassignment).
func (c *partitionChange) completeReassignment() {
	if len(c.adding) == 0 && len(c.removing) == 0 {
		return
	}
	isr, replicas := c.isr, c.replicas
	if len(c.removing) > 0 {
		isr = without(c.isr, c.removing...)
		replicas = without(c.replicas, c.removing...)
		if len(isr) == 0 || len(replicas) == 0 {
			return
		}
	}
	for _, r := range replicas {
		if !slices.Contains(isr, r) {
			return
		}
	}
	c.isr, c.replicas, c.adding, c.removing = isr, replicas, nil, nil
}

// build returns the new partition state, or nil when nothing changes.
func (c *partitionChange) build() *metadata.Partition {
	c.completeReassignment()
	old := c.p
	n := old.Clone()
	leader, unclean := c.elect()
	bumpLeader := false
	unclean = unclean && leader != old.Leader
	if leader != old.Leader {
		n.Leader = leader
		bumpLeader = true
		if unclean {
			// Unclean election: the ISR is just the new leader, and data
			// the old ISR had may be lost.
			n.ISR = []int32{leader}
		}
	}
	if !bumpLeader && !containsAll(c.replicas, old.Replicas) {
		// Replicas leave (a reassignment completes): bump the leader epoch
		// so the removed replicas' fetches are fenced.
		bumpLeader = true
	}
	// An empty target ISR is never written: the last member stays (with
	// no leader), as in Kafka without ELR.
	if !unclean && len(c.isr) > 0 {
		n.ISR = slices.Clone(c.isr)
	}
	if len(c.replicas) > 0 {
		n.Replicas = slices.Clone(c.replicas)
	}
	n.AddingReplicas = nilIfEmpty(c.adding)
	n.RemovingReplicas = nilIfEmpty(c.removing)
	if !bumpLeader && slices.Equal(n.ISR, old.ISR) && slices.Equal(n.Replicas, old.Replicas) &&
		slices.Equal(n.AddingReplicas, nilIfEmpty(old.AddingReplicas)) && slices.Equal(n.RemovingReplicas, nilIfEmpty(old.RemovingReplicas)) {
		return nil
	}
	if bumpLeader {
		n.LeaderEpoch++
	}
	n.PartitionEpoch++
	return n
}

func nilIfEmpty(s []int32) []int32 {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}

func without(s []int32, drop ...int32) []int32 {
	out := make([]int32, 0, len(s))
	for _, v := range s {
		if !slices.Contains(drop, v) {
			out = append(out, v)
		}
	}
	return out
}

func containsAll(s, sub []int32) bool {
	for _, v := range sub {
		if !slices.Contains(s, v) {
			return false
		}
	}
	return true
}

// partRef is a partition with its topic.
type partRef struct {
	t *metadata.Topic
	p *metadata.Partition
}

func (q *Quorum) partitionsWithReplicaInISR(img *metadata.Image, id int32) []partRef {
	return partitionsWhere(img, func(p *metadata.Partition) bool { return slices.Contains(p.ISR, id) })
}

func (q *Quorum) partitionsWithoutLeader(img *metadata.Image) []partRef {
	return partitionsWhere(img, func(p *metadata.Partition) bool { return p.Leader < 0 })
}

func partitionsWhere(img *metadata.Image, f func(*metadata.Partition) bool) []partRef {
	var out []partRef
	for _, name := range img.TopicNames() {
		t := img.Topics[name]
		for _, p := range t.Partitions {
			if f(p) {
				out = append(out, partRef{t, p})
			}
		}
	}
	return out
}

func partitionRecord(t *metadata.Topic, p *metadata.Partition) metadata.Record {
	return metadata.Record{Partition: &metadata.PartitionRecord{TopicID: t.ID, Partition: *p}}
}

// partitionUpdates re-elects leaders and shrinks ISRs for parts when
// broker remove goes away and/or broker add comes back (-1: none), as
// Kafka's generateLeaderAndIsrUpdates: remove never leads and leaves the
// ISR; add may lead although the image still shows it fenced.
func (q *Quorum) partitionUpdates(img *metadata.Image, remove, add int32, parts []partRef) []metadata.Record {
	acceptable := func(r int32) bool {
		return r != remove && (r == add || img.Brokers[r].Active())
	}
	var recs []metadata.Record
	for _, pr := range parts {
		c := newPartitionChange(pr.p, acceptable)
		c.unclean = q.uncleanEnabled(img, pr.t.Name)
		c.isr = without(pr.p.ISR, remove)
		if n := c.build(); n != nil {
			recs = append(recs, partitionRecord(pr.t, n))
		}
	}
	return recs
}

// AlterPartition applies a leader's ISR change (Kafka's alterPartition),
// returning the partition's new state.
func (q *Quorum) AlterPartition(ctx context.Context, r AlterPartitionRequest) (metadata.Partition, *Error) {
	if err := q.lockActive(); err != nil {
		return metadata.Partition{}, err
	}
	defer q.mu.Unlock()
	img := q.Image()
	if b := img.Brokers[r.BrokerID]; b == nil {
		return metadata.Partition{}, errorf(kerr.StaleBrokerEpoch, "No broker registration found for broker id %d", r.BrokerID)
	} else if b.Epoch != r.BrokerEpoch {
		return metadata.Partition{}, errorf(kerr.StaleBrokerEpoch, "Expected broker epoch %d, but got broker epoch %d", b.Epoch, r.BrokerEpoch)
	}
	t := img.TopicsByID[r.TopicID]
	if t == nil {
		return metadata.Partition{}, &Error{Code: kerr.UnknownTopicID}
	}
	if r.Partition < 0 || int(r.Partition) >= len(t.Partitions) {
		return metadata.Partition{}, &Error{Code: kerr.UnknownTopicOrPartition}
	}
	p := t.Partitions[r.Partition]
	switch {
	case r.LeaderEpoch > p.LeaderEpoch, r.PartitionEpoch > p.PartitionEpoch:
		// The sender knows a newer state than ours: we are probably not
		// the active controller any more.
		return metadata.Partition{}, errNotController()
	case r.LeaderEpoch < p.LeaderEpoch:
		return metadata.Partition{}, &Error{Code: kerr.FencedLeaderEpoch}
	case r.BrokerID != p.Leader:
		// Kafka answers INVALID_REQUEST here; the cluster contract asks for
		// NOT_LEADER_OR_FOLLOWER, which the broker handles the same way
		// (drop the pending ISR change, wait for metadata).
		return metadata.Partition{}, errorf(kerr.NotLeaderForPartition, "Broker %d is not the leader of %s-%d (leader %d)", r.BrokerID, t.Name, p.Index, p.Leader)
	case r.PartitionEpoch < p.PartitionEpoch:
		return metadata.Partition{}, &Error{Code: kerr.InvalidUpdateVersion}
	}
	seen := map[int32]bool{}
	for _, id := range r.NewISR {
		if seen[id] || !slices.Contains(p.Replicas, id) {
			return metadata.Partition{}, errorf(kerr.InvalidRequest, "Invalid ISR %v for replicas %v", r.NewISR, p.Replicas)
		}
		seen[id] = true
	}
	if !seen[p.Leader] {
		return metadata.Partition{}, errorf(kerr.InvalidRequest, "The new ISR %v does not include the leader %d", r.NewISR, p.Leader)
	}
	for _, id := range r.NewISR {
		b := img.Brokers[id]
		switch {
		case b == nil:
			return metadata.Partition{}, errorf(kerr.IneligibleReplica, "Broker %d in the new ISR is not registered", id)
		case b.InControlledShutdown:
			return metadata.Partition{}, errorf(kerr.IneligibleReplica, "Broker %d in the new ISR is shutting down", id)
		case b.Fenced:
			return metadata.Partition{}, errorf(kerr.IneligibleReplica, "Broker %d in the new ISR is fenced", id)
		}
	}
	c := newPartitionChange(p, func(id int32) bool { return img.Brokers[id].Active() })
	c.unclean = q.uncleanEnabled(img, t.Name)
	c.isr = slices.Clone(r.NewISR)
	n := c.build()
	if n == nil {
		return *p.Clone(), nil
	}
	if err := q.propose([]metadata.Record{partitionRecord(t, n)}); err != nil {
		return metadata.Partition{}, err
	}
	if n.Leader != r.BrokerID {
		// Completing a reassignment moved the leadership away.
		return *n, &Error{Code: kerr.NewLeaderElected}
	}
	return *n, nil
}

// ElectLeaders runs preferred (or, with unclean, unclean) elections; nil
// parts means every partition, and then partitions that need no election
// are left out of the results, as in Kafka. On a voter that is not active
// every result is NOT_CONTROLLER (for nil parts: one result with an empty
// TopicPartition).
func (q *Quorum) ElectLeaders(ctx context.Context, unclean bool, parts []TopicPartition) []ElectResult {
	all := parts == nil
	if err := q.lockActive(); err != nil {
		if all {
			// One result with no partition carries the error.
			return []ElectResult{{Err: err}}
		}
		out := make([]ElectResult, len(parts))
		for i, tp := range parts {
			out[i] = ElectResult{TopicPartition: tp, Err: err}
		}
		return out
	}
	defer q.mu.Unlock()
	img := q.Image()
	if all {
		for _, ref := range partitionsWhere(img, func(*metadata.Partition) bool { return true }) {
			parts = append(parts, TopicPartition{ref.t.Name, ref.p.Index})
		}
	}
	var out []ElectResult
	var recs []metadata.Record
	for _, tp := range parts {
		rec, err := q.electLeader(img, tp, unclean)
		if all && err != nil && err.Code == kerr.ElectionNotNeeded {
			continue
		}
		if rec != nil {
			recs = append(recs, *rec)
		}
		out = append(out, ElectResult{TopicPartition: tp, Err: err})
	}
	if err := q.propose(recs); err != nil {
		for i := range out {
			if out[i].Err == nil {
				out[i].Err = err
			}
		}
	}
	return out
}

func (q *Quorum) electLeader(img *metadata.Image, tp TopicPartition, unclean bool) (*metadata.Record, *Error) {
	t := img.Topics[tp.Topic]
	if t == nil {
		return nil, errorf(kerr.UnknownTopicOrPartition, "No such topic as %s", tp.Topic)
	}
	if tp.Partition < 0 || int(tp.Partition) >= len(t.Partitions) {
		return nil, errorf(kerr.UnknownTopicOrPartition, "No such partition as %s-%d", tp.Topic, tp.Partition)
	}
	p := t.Partitions[tp.Partition]
	if (!unclean && len(p.Replicas) > 0 && p.Leader == p.Replicas[0]) || (unclean && p.Leader >= 0) {
		return nil, &Error{Code: kerr.ElectionNotNeeded}
	}
	c := newPartitionChange(p, func(id int32) bool { return img.Brokers[id].Active() })
	c.preferred = !unclean
	c.unclean = unclean
	n := c.build()
	if n == nil {
		if unclean {
			return nil, &Error{Code: kerr.EligibleLeadersNotAvailable}
		}
		return nil, &Error{Code: kerr.PreferredLeaderNotAvailable}
	}
	rec := partitionRecord(t, n)
	return &rec, nil
}

// maybeRebalance is auto.leader.rebalance.enable: every
// leader.imbalance.check.interval.seconds, for each broker whose share of
// partitions it prefers (replicas[0]) but does not lead exceeds
// leader.imbalance.per.broker.percentage, run preferred elections for
// those partitions. Caller holds q.mu.
func (q *Quorum) maybeRebalance(now time.Time) {
	img := q.Image()
	if q.config(img, "auto.leader.rebalance.enable", "true") != "true" {
		return
	}
	secs, err := strconv.ParseFloat(q.config(img, "leader.imbalance.check.interval.seconds", "300"), 64)
	if err != nil || secs <= 0 {
		secs = 300
	}
	if now.Sub(q.lastRebal) < time.Duration(secs*float64(time.Second)) {
		return
	}
	q.lastRebal = now
	pct, err := strconv.ParseFloat(q.config(img, "leader.imbalance.per.broker.percentage", "10"), 64)
	if err != nil || pct < 0 {
		pct = 10
	}
	preferred := map[int32]int{}
	notLed := map[int32][]partRef{}
	for _, ref := range partitionsWhere(img, func(p *metadata.Partition) bool { return len(p.Replicas) > 0 && !p.Reassigning() }) {
		pref := ref.p.Replicas[0]
		preferred[pref]++
		if ref.p.Leader != pref {
			notLed[pref] = append(notLed[pref], ref)
		}
	}
	var recs []metadata.Record
	for id, refs := range notLed {
		if float64(len(refs))/float64(preferred[id])*100 <= pct || !img.Brokers[id].Active() {
			continue
		}
		for _, ref := range refs {
			if rec, err := q.electLeader(img, TopicPartition{ref.t.Name, ref.p.Index}, false); err == nil {
				recs = append(recs, *rec)
			}
		}
	}
	if len(recs) > 0 {
		q.log.Info("automatic preferred leader election", "partitions", len(recs))
		if err := q.propose(recs); err != nil {
			q.log.Warn("automatic preferred leader election failed", "err", err)
		}
	}
}

// AlterPartitionReassignments starts (Replicas set) or cancels (nil)
// reassignments (KIP-455). Results are in request order.
func (q *Quorum) AlterPartitionReassignments(ctx context.Context, rs []Reassignment) []*Error {
	errs := make([]*Error, len(rs))
	if err := q.lockActive(); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	defer q.mu.Unlock()
	// Plan against a working image so two changes of one partition in a
	// request compose.
	work := q.Image()
	var recs []metadata.Record
	for i, r := range rs {
		rec, err := q.planReassignment(work, r)
		if err != nil {
			errs[i] = err
			continue
		}
		if rec == nil {
			continue
		}
		next, aerr := work.ApplyEntry(work.Offset, []metadata.Record{*rec})
		if aerr != nil {
			errs[i] = errorf(kerr.UnknownServerError, "%v", aerr)
			continue
		}
		work = next
		recs = append(recs, *rec)
	}
	if err := q.propose(recs); err != nil {
		failAll(errs, err)
	}
	return errs
}

func (q *Quorum) planReassignment(img *metadata.Image, r Reassignment) (*metadata.Record, *Error) {
	t := img.Topics[r.Topic]
	if t == nil {
		return nil, errorf(kerr.UnknownTopicOrPartition, "Unable to find a topic named %s.", r.Topic)
	}
	if r.Partition < 0 || int(r.Partition) >= len(t.Partitions) {
		return nil, errorf(kerr.UnknownTopicOrPartition, "Unable to find partition %s:%d.", r.Topic, r.Partition)
	}
	p := t.Partitions[r.Partition]
	c := newPartitionChange(p, func(id int32) bool { return img.Brokers[id].Active() })
	if r.Replicas == nil {
		// Cancel: back to the original replicas, dropping the ones being
		// added (Kafka's PartitionReassignmentRevert).
		if !p.Reassigning() {
			return nil, &Error{Code: kerr.NoReassignmentInProgress, Message: "No partition reassignment is in progress for the topic-partition"}
		}
		replicas := without(p.Replicas, p.AddingReplicas...)
		isr := without(p.ISR, p.AddingReplicas...)
		unclean := q.uncleanEnabled(img, t.Name)
		if len(isr) == 0 {
			if !unclean {
				return nil, errorf(kerr.InvalidReplicaAssignment, "Unable to revert partition assignment for %s:%d because it would require an unclean leader election.", t.Name, p.Index)
			}
			isr = []int32{replicas[0]}
		}
		c.unclean = unclean
		c.isr, c.replicas, c.adding, c.removing = isr, replicas, nil, nil
	} else {
		if len(r.Replicas) == 0 {
			return nil, errorf(kerr.InvalidReplicaAssignment, "The manual partition assignment includes an empty replica list.")
		}
		if err := checkReplicaList(r.Replicas, img.BrokerIDs()); err != nil {
			return nil, err
		}
		removing := without(p.Replicas, r.Replicas...)
		adding := without(r.Replicas, p.Replicas...)
		slices.Sort(removing)
		slices.Sort(adding)
		c.replicas = append(slices.Clone(r.Replicas), removing...)
		c.adding, c.removing = adding, removing
	}
	n := c.build()
	if n == nil {
		return nil, nil
	}
	rec := partitionRecord(t, n)
	return &rec, nil
}

// ListPartitionReassignments lists in-progress reassignments of parts (nil:
// all), from this node's image.
func (q *Quorum) ListPartitionReassignments(ctx context.Context, parts []TopicPartition) []OngoingReassignment {
	img := q.Image()
	var out []OngoingReassignment
	add := func(name string, p *metadata.Partition) {
		if p.Reassigning() {
			out = append(out, OngoingReassignment{
				TopicPartition:   TopicPartition{name, p.Index},
				Replicas:         slices.Clone(p.Replicas),
				AddingReplicas:   slices.Clone(p.AddingReplicas),
				RemovingReplicas: slices.Clone(p.RemovingReplicas),
			})
		}
	}
	if parts == nil {
		for _, ref := range partitionsWhere(img, (*metadata.Partition).Reassigning) {
			add(ref.t.Name, ref.p)
		}
		return out
	}
	for _, tp := range parts {
		if p := img.Partition(tp.Topic, tp.Partition); p != nil {
			add(tp.Topic, p)
		}
	}
	return out
}
