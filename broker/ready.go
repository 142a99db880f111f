package broker

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ReadyError returns nil when the broker is ready to take its share of
// the traffic (the HTTP /readyz check), else what it is waiting for:
//
//   - it is not shutting down;
//   - in a cluster, the controller has registered and unfenced it (which
//     needs its metadata caught up) and it is not in controlled shutdown;
//     a controller-only node, that the quorum has elected a leader;
//   - every partition it hosts as a follower has it in its ISR, so a
//     rolling restart that waits for /readyz before restarting the next
//     broker never takes a partition's last in-sync replica away.
//     Partitions with no leader are left out: no leader, no catching up.
//
// It reads the metadata image and the partition table only, so it is
// cheap enough for frequent probes.
func (s *Server) ReadyError() error {
	if s.closed.Load() {
		return errors.New("broker is shutting down")
	}
	id := s.cfg.NodeID
	if s.cluster != nil {
		if !s.cfg.Cluster.Broker {
			if s.quorum != nil && s.quorum.ActiveID() < 0 {
				return errors.New("the controller quorum has not elected an active controller yet")
			}
			return nil
		}
		if !s.joined.Load() {
			return fmt.Errorf("broker %d is not yet registered and unfenced by the controller", id)
		}
	}
	img := s.image()
	b := img.Brokers[id]
	switch {
	case b == nil:
		return fmt.Errorf("broker %d is not in the metadata yet", id)
	case b.Fenced:
		return fmt.Errorf("broker %d is fenced in its metadata (the controller has not unfenced it yet, or its heartbeats are not getting through)", id)
	case b.InControlledShutdown:
		return fmt.Errorf("broker %d is in controlled shutdown", id)
	}
	var behind []string
	if table := s.parts.Load(); table != nil {
		for _, p := range table.byKey {
			if p.isLeader() {
				continue
			}
			mp := img.Partition(p.topic, p.index)
			if mp == nil || mp.Leader < 0 || mp.Leader == id {
				continue
			}
			if !contains(mp.ISR, id) {
				behind = append(behind, fmt.Sprintf("%s-%d", p.topic, p.index))
			}
		}
	}
	if len(behind) == 1 {
		return fmt.Errorf("partition %s, hosted here as a follower, is not in its ISR yet (still catching up with its leader)", behind[0])
	}
	if len(behind) > 0 {
		slices.Sort(behind)
		const show = 10
		list := strings.Join(behind[:min(len(behind), show)], ", ")
		if len(behind) > show {
			list += fmt.Sprintf(" and %d more", len(behind)-show)
		}
		return fmt.Errorf("%d partitions hosted here as a follower are not in their ISR yet (still catching up with their leaders): %s", len(behind), list)
	}
	return nil
}
