package controller

import (
	"math/rand/v2"
	"slices"

	"github.com/fjordhq/fjord/broker/metadata"
)

// placeStriped places n partitions of rf replicas on the image's active
// brokers (unfenced, not shutting down) the way Kafka's KRaft
// StripedReplicaPlacer does: brokers are grouped by rack, racks taken in
// turn from a random offset, and within a rack brokers in turn from a
// random offset. Each partition's leader comes from the next rack, and its
// followers from the racks after it, so the replicas of a partition land
// on distinct racks whenever there are enough racks, and leaders spread
// evenly. Without racks it is a round-robin from a random start.
//
// Unlike Kafka, fenced brokers never get replicas (Kafka may put
// followers there): a fenced broker may be gone for good, and a new
// partition would start under-replicated.
func placeStriped(img *metadata.Image, n, rf int) ([][]int32, *Error) {
	var active []*metadata.Broker
	for _, id := range img.BrokerIDs() {
		if b := img.Brokers[id]; b.Active() {
			active = append(active, b)
		}
	}
	if rf > len(active) || len(active) == 0 {
		return nil, errInvalidRF(rf, len(active))
	}
	rl := newRackList(active, rand.IntN)
	out := make([][]int32, n)
	for i := range out {
		out[i] = rl.place(rf)
	}
	return out, nil
}

// stripedRack is one rack's brokers, taken in turn from a rotating offset.
type stripedRack struct {
	brokers []int32
	index   int // next position within this placement epoch
	offset  int
	epoch   int
}

func (r *stripedRack) next(epoch int) int32 {
	if r.epoch != epoch {
		r.epoch = epoch
		r.index = 0
		r.offset = (r.offset + 1) % len(r.brokers)
	}
	if r.index >= len(r.brokers) {
		return -1
	}
	b := r.brokers[(r.index+r.offset)%len(r.brokers)]
	r.index++
	return b
}

type rackList struct {
	racks   []*stripedRack
	total   int
	epoch   int
	offset  int
	shuffle func()
}

func newRackList(brokers []*metadata.Broker, randN func(int) int) *rackList {
	byRack := map[string]*stripedRack{}
	var names []string
	for _, b := range brokers {
		r := byRack[b.Rack]
		if r == nil {
			r = &stripedRack{}
			byRack[b.Rack] = r
			names = append(names, b.Rack)
		}
		r.brokers = append(r.brokers, b.ID)
	}
	slices.Sort(names)
	rl := &rackList{total: len(brokers)}
	for _, name := range names {
		r := byRack[name]
		slices.Sort(r.brokers)
		r.offset = randN(len(r.brokers))
		rl.racks = append(rl.racks, r)
	}
	rl.offset = randN(len(rl.racks))
	rl.shuffle = func() {
		rand.Shuffle(len(rl.racks), func(i, j int) { rl.racks[i], rl.racks[j] = rl.racks[j], rl.racks[i] })
		for _, r := range rl.racks {
			rand.Shuffle(len(r.brokers), func(i, j int) { r.brokers[i], r.brokers[j] = r.brokers[j], r.brokers[i] })
		}
	}
	return rl
}

// place returns one partition's replicas; rf <= total brokers.
func (rl *rackList) place(rf int) []int32 {
	// After as many partitions as brokers, shuffle so the same replica
	// sets do not simply repeat (Kafka does the same).
	if rl.epoch == rl.total && rl.total > 1 {
		rl.shuffle()
		rl.epoch = 0
	}
	if rl.offset == len(rl.racks) {
		rl.offset = 0
	}
	out := make([]int32, 0, rf)
	first := rl.offset
	for {
		if b := rl.racks[first].next(rl.epoch); b >= 0 {
			out = append(out, b)
			break
		}
		first = (first + 1) % len(rl.racks)
	}
	ri := rl.offset
	for len(out) < rf {
		b := int32(-1)
		if ri == first {
			// The leader's rack has given its broker for this round.
			first = -1
		} else {
			b = rl.racks[ri].next(rl.epoch)
		}
		ri = (ri + 1) % len(rl.racks)
		if b >= 0 {
			out = append(out, b)
		}
	}
	rl.epoch++
	rl.offset++
	return out
}
