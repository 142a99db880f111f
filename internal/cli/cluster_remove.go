package cli

// `fjord cluster remove-broker`: decommission a broker in one command —
// move every replica it holds onto the other brokers (same replication
// factor, rack-aware when the brokers have racks), wait for the moves to
// finish, then unregister it (UnregisterBroker, as kafka-cluster.sh
// unregister). Kafka needs the reassignment JSON written by hand for this.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// RemoveBrokerOptions are the flags of `fjord cluster remove-broker`.
type RemoveBrokerOptions struct {
	Throttle int64 // bytes/s while moving; < 0: none
	DryRun   bool  // print the plan only
	// Wait bounds how long to wait for the moves (0: 1 hour).
	Wait time.Duration
	// Poll is how often progress is checked (0: 1 s).
	Poll time.Duration
}

// planRemoval replaces broker id in every partition's replicas with the
// live broker that keeps the partition's racks distinct (when racks are
// known) and holds the fewest replicas so far; the replaced replica keeps
// its position, so a preferred leader is replaced by its successor.
func planRemoval(id int32, brokers []clusterBroker, parts []partitionState) (assignment, error) {
	rack := map[int32]string{}
	load := map[int32]int{}
	var candidates []int32
	for _, b := range brokers {
		rack[b.ID] = b.Rack
		if b.ID != id && !b.Fenced {
			candidates = append(candidates, b.ID)
			load[b.ID] = 0
		}
	}
	for _, p := range parts {
		for _, r := range p.Replicas {
			if _, ok := load[r]; ok {
				load[r]++
			}
		}
	}
	slices.Sort(candidates)
	plan := assignment{}
	var impossible []string
	for _, p := range parts {
		i := slices.Index(p.Replicas, id)
		if i < 0 {
			continue
		}
		usedRacks := map[string]bool{}
		for _, r := range p.Replicas {
			if r != id && rack[r] != "" {
				usedRacks[rack[r]] = true
			}
		}
		best := int32(-1)
		bestScore := [2]int{}
		for _, c := range candidates {
			if slices.Contains(p.Replicas, c) {
				continue
			}
			// Lower is better: a rack already used, then load.
			score := [2]int{0, load[c]}
			if rack[c] != "" && usedRacks[rack[c]] {
				score[0] = 1
			}
			if best < 0 || score[0] < bestScore[0] || score[0] == bestScore[0] && score[1] < bestScore[1] {
				best, bestScore = c, score
			}
		}
		if best < 0 {
			impossible = append(impossible, p.name())
			continue
		}
		reps := slices.Clone(p.Replicas)
		reps[i] = best
		load[best]++
		plan[tp{p.Topic, p.Partition}] = reps
	}
	if len(impossible) > 0 {
		return nil, fmt.Errorf("no live broker is left to take the replica of %s without lowering the replication factor: add a broker first, or lower the topic's replication factor with `fjord cluster reassign execute`",
			strings.Join(impossible, ", "))
	}
	return plan, nil
}

// RemoveBroker moves every replica off broker id, waits, and unregisters it.
func RemoveBroker(ctx context.Context, co *ClientOptions, id int32, o RemoveBrokerOptions, p *Printer) error {
	if o.Wait <= 0 {
		o.Wait = time.Hour
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	c, err := co.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	info, err := describeCluster(ctx, c)
	if err != nil {
		return err
	}
	var registered bool
	for _, b := range info.Brokers {
		registered = registered || b.ID == id
	}
	if !registered {
		var ids []int32
		for _, b := range info.Brokers {
			ids = append(ids, b.ID)
		}
		return fmt.Errorf("broker %d is not registered in the cluster (brokers: %s)", id, brokerIDs(ids))
	}
	plan, err := planRemoval(id, info.Brokers, info.Partitions)
	if err != nil {
		return err
	}
	type move struct {
		Topic     string  `json:"topic"`
		Partition int32   `json:"partition"`
		From      []int32 `json:"from"`
		To        []int32 `json:"to"`
	}
	moves := []move{}
	cur := assignment{}
	for _, ps := range info.Partitions {
		cur[tp{ps.Topic, ps.Partition}] = ps.Replicas
	}
	for _, k := range plan.sortedKeys() {
		moves = append(moves, move{k.Topic, k.Partition, cur[k], plan[k]})
	}
	if !p.JSONMode() {
		if len(moves) == 0 {
			p.Linef("Broker %d holds no partition replicas.", id)
		} else {
			p.Linef("Moving %s off broker %d:", plural(len(moves), "partition replica"), id)
			var rows [][]string
			for _, m := range moves {
				rows = append(rows, []string{m.Topic, fmt.Sprint(m.Partition), joinInt32s(m.From), joinInt32s(m.To)})
			}
			if err := p.Table([]string{"TOPIC", "PARTITION", "REPLICAS", "NEW-REPLICAS"}, rows); err != nil {
				return err
			}
		}
	}
	result := map[string]any{"broker": id, "moves": moves, "dry_run": o.DryRun}
	if o.DryRun {
		if p.JSONMode() {
			return p.JSON(result)
		}
		p.Linef("Nothing changed (--dry-run).")
		return nil
	}
	if len(plan) > 0 {
		if _, err := startReassignment(ctx, c, plan, o.Throttle, true, p); err != nil {
			return err
		}
		if err := waitMoves(ctx, c, id, plan, o, p); err != nil {
			return err
		}
		if o.Throttle >= 0 {
			var brokers []int32
			var topics []string
			for k, reps := range plan {
				brokers = append(brokers, reps...)
				topics = append(topics, k.Topic)
			}
			brokers = append(brokers, id)
			if err := clearThrottles(ctx, c, brokers, topics, p); err != nil {
				return err
			}
		}
	}
	// A broker still running registers again with its next heartbeat;
	// say so rather than let the operator find it back in describe.
	stillRunning := false
	if info, err := describeCluster(ctx, c); err == nil {
		for _, b := range info.Brokers {
			stillRunning = stillRunning || b.ID == id && !b.Fenced
		}
	}
	req := kmsg.NewPtrUnregisterBrokerRequest()
	req.BrokerID = id
	resp, err := req.RequestWith(ctx, c.Client)
	if err == nil {
		err = brokerErr(kerr.ErrorForCode(resp.ErrorCode), derefStr(resp.ErrorMessage))
	}
	switch {
	case errors.Is(err, kerr.UnsupportedVersion):
		return fmt.Errorf("every replica moved off broker %d, but the cluster does not support unregistering brokers (UnregisterBroker): stop the broker; it stays listed until the cluster forgets it: %w", id, err)
	case err != nil:
		return fmt.Errorf("every replica moved off broker %d, but the cluster refused to unregister it: %w", id, err)
	}
	result["unregistered"] = true
	result["still_running"] = stillRunning
	if p.JSONMode() {
		return p.JSON(result)
	}
	p.Linef("Broker %d is no longer registered.", id)
	if stillRunning {
		p.Linef("Broker %d is still running: stop its process now, or it registers again with its next heartbeat.", id)
	}
	return nil
}

// waitMoves polls until no planned partition is being reassigned and none
// lists broker id among its replicas, printing progress when it changes.
func waitMoves(ctx context.Context, c *Conn, id int32, plan assignment, o RemoveBrokerOptions, p *Printer) error {
	deadline := time.Now().Add(o.Wait)
	keys := plan.sortedKeys()
	last := -1
	for {
		ongoing, err := listReassignments(ctx, c, keys)
		if err != nil {
			return err
		}
		cur, err := currentAssignment(ctx, c, topicsOf(keys))
		if err != nil {
			return err
		}
		var pending []string
		for _, k := range keys {
			_, moving := ongoing[k]
			if moving || slices.Contains(cur[k], id) {
				pending = append(pending, k.String())
			}
		}
		done := len(keys) - len(pending)
		if done != last && !p.JSONMode() {
			p.Linef("Moved %d of %d partition replicas off broker %d.", done, len(keys), id)
			last = done
		}
		if len(pending) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("replicas of %s are still moving off broker %d after %v: check progress with `fjord cluster reassign list` and run remove-broker again to finish", strings.Join(pending, ", "), id, o.Wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(o.Poll):
		}
	}
}

func topicsOf(ks []tp) []string {
	var out []string
	for _, k := range ks {
		if !slices.Contains(out, k.Topic) {
			out = append(out, k.Topic)
		}
	}
	return out
}
