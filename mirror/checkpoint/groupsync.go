package checkpoint

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/mirror/records"
)

// Group states (DescribeGroups) in which the target's group may be given
// offsets: Empty (no member is consuming) and Dead (the group does not
// exist there yet). A group with members is left alone: its consumers
// own their offsets, and the broker would refuse the commit anyway.
const (
	groupEmpty = "Empty"
	groupDead  = "Dead"
)

// offsetsToSync picks the checkpoints of one group worth writing to the
// target, as MM2's syncGroupOffset: every partition the target group
// has no offset for (or a reset one, below 0), and those whose translated
// offset is ahead of the target's — never moving the group backwards.
// target is nil when the group does not exist on the target.
func offsetsToSync(cps map[connect.TopicPartition]records.Checkpoint, target map[connect.TopicPartition]int64) map[connect.TopicPartition]records.Checkpoint {
	out := map[connect.TopicPartition]records.Checkpoint{}
	for tp, cp := range cps {
		if cur, ok := target[tp]; ok && cur >= 0 && cur >= cp.DownstreamOffset {
			continue
		}
		out[tp] = cp
	}
	return out
}

// groupSyncer writes translated offsets to the target's groups
// (sync.group.offsets.enabled).
type groupSyncer struct {
	target *kadm.Client
	store  *checkpointStore
	log    *slog.Logger
}

// syncOnce writes, for every group with checkpoints that is empty or
// absent on the target, the offsets offsetsToSync picks. It returns what
// it committed per group.
func (s *groupSyncer) syncOnce(ctx context.Context) map[string]map[connect.TopicPartition]int64 {
	all := s.store.all()
	if len(all) == 0 {
		return nil
	}
	groups := slices.Sorted(maps.Keys(all))
	described, err := s.target.DescribeGroups(ctx, groups...)
	if err != nil && len(described) == 0 {
		s.log.Warn("describing consumer groups on the target", "groups", groups, "err", err)
		return nil
	}
	synced := map[string]map[connect.TopicPartition]int64{}
	for _, g := range groups {
		state, ok := groupState(described, g)
		if !ok {
			s.log.Warn("describing consumer group on the target", "group", g, "err", described[g].Err)
			continue
		}
		if state != groupEmpty && state != groupDead {
			s.log.Debug("not syncing offsets of a group active on the target", "group", g, "state", state)
			continue
		}
		var target map[connect.TopicPartition]int64
		if state == groupEmpty {
			if target, err = s.fetch(ctx, g); err != nil {
				s.log.Warn("fetching consumer group offsets on the target", "group", g, "err", err)
				continue
			}
		}
		to := offsetsToSync(all[g], target)
		if len(to) == 0 {
			continue
		}
		if done := s.commit(ctx, g, to); len(done) > 0 {
			synced[g] = done
		}
	}
	return synced
}

// groupState is a described group's state; a group the broker does not
// know (GROUP_ID_NOT_FOUND from DescribeGroups v6) is Dead.
func groupState(described kadm.DescribedGroups, g string) (string, bool) {
	d, ok := described[g]
	if !ok {
		return "", false
	}
	if errors.Is(d.Err, kerr.GroupIDNotFound) {
		return groupDead, true
	}
	if d.Err != nil {
		return "", false
	}
	return d.State, true
}

func (s *groupSyncer) fetch(ctx context.Context, g string) (map[connect.TopicPartition]int64, error) {
	resp, err := s.target.FetchOffsets(ctx, g)
	if err != nil {
		return nil, err
	}
	if err := resp.Error(); err != nil {
		return nil, err
	}
	out := map[connect.TopicPartition]int64{}
	resp.Each(func(o kadm.OffsetResponse) {
		out[connect.TopicPartition{Topic: o.Topic, Partition: o.Partition}] = o.At
	})
	return out, nil
}

func (s *groupSyncer) commit(ctx context.Context, g string, to map[connect.TopicPartition]records.Checkpoint) map[connect.TopicPartition]int64 {
	offs := kadm.Offsets{}
	for tp, cp := range to {
		offs.Add(kadm.Offset{Topic: tp.Topic, Partition: tp.Partition, At: cp.DownstreamOffset, LeaderEpoch: -1, Metadata: cp.Metadata})
	}
	resp, err := s.target.CommitOffsets(ctx, g, offs)
	if err != nil {
		s.log.Error("unable to sync offsets for consumer group", "group", g, "err", err)
		return nil
	}
	done := map[connect.TopicPartition]int64{}
	var failed error
	resp.Each(func(o kadm.OffsetResponse) {
		if o.Err != nil {
			failed = o.Err
			return
		}
		done[connect.TopicPartition{Topic: o.Topic, Partition: o.Partition}] = o.At
	})
	switch {
	case errors.Is(failed, kerr.UnknownMemberID):
		s.log.Warn("unable to sync offsets for consumer group; likely consumers are using it on the target", "group", g)
	case failed != nil:
		s.log.Error("unable to sync offsets for consumer group", "group", g, "err", failed)
	default:
		s.log.Debug("synced consumer group offsets", "group", g, "offsets", len(done))
	}
	return done
}
