package mm2

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/mirror/filter"
	"github.com/fjordhq/fjord/mirror/mirrorconfig"
	"github.com/fjordhq/fjord/mirror/policy"
	"github.com/fjordhq/fjord/mirror/records"
)

// readTimeout bounds each read of records: one that cannot finish (a
// partition whose last offsets are transaction markers) leaves its value
// unknown instead of holding up the report.
const readTimeout = 5 * time.Second

type topicPartition struct {
	topic     string
	partition int32
}

// FlowStatus is how far one replicating flow is behind.
type FlowStatus struct {
	Flow   Flow
	Topics []TopicLag
	// HeartbeatAge is how old the newest heartbeat in the target's copy
	// of the source's heartbeats topic is (replication latency plus up to
	// one emit interval); negative when there is none.
	HeartbeatAge time.Duration
	// Err is why the flow could not be measured (a cluster unreachable).
	Err error
}

// TopicLag is one source topic's lag on the target.
type TopicLag struct {
	Topic, RemoteTopic string
	// RemoteExists is false until the source connector creates the
	// remote topic.
	RemoteExists bool
	Partitions   int
	// Records not yet on the target, summed over partitions.
	Records int64
	// Seconds is the age of the oldest source record not yet on the
	// target (the largest over partitions), 0 when caught up, negative
	// when it could not be read in time.
	Seconds float64
	// FromOffsetSyncs reports that every partition's position came from
	// an offset sync rather than from comparing end offsets (empty
	// source partitions aside).
	FromOffsetSyncs bool
}

// Status measures every replicating flow of flows (nil: all of c's)
// once, within ctx's deadline: per source topic the flow replicates,
// the records of the source not yet on the target and the age of the
// oldest of them; per flow the age of its newest heartbeat.
//
// A partition's replicated position is worked out from the latest offset
// sync (upstream U was written at downstream D: the target holds the
// source up to U + (target end - D), as records after a sync map one to
// one) when there is one; otherwise from the end offsets (source start +
// records on the target). When the remote topic keeps the source's name
// (IdentityReplicationPolicy) other writers may share it, so only the
// sync itself counts (up to offset.lag.max records more may be there).
func Status(ctx context.Context, c *Config, flows []Flow, now func() time.Time) []FlowStatus {
	if flows == nil {
		flows = c.Flows()
	}
	if now == nil {
		now = time.Now
	}
	var out []FlowStatus
	for _, f := range flows {
		if !c.Enabled(f) {
			continue
		}
		st := FlowStatus{Flow: f, HeartbeatAge: -1}
		st.Topics, st.HeartbeatAge, st.Err = flowStatus(ctx, c.ConnectorConfig(f, SourceConnector), f, now)
		out = append(out, st)
	}
	return out
}

func flowStatus(ctx context.Context, props map[string]string, f Flow, now func() time.Time) ([]TopicLag, time.Duration, error) {
	pol, err := policy.New(props)
	if err != nil {
		return nil, -1, err
	}
	tf, err := filter.NewTopicFilter(props)
	if err != nil {
		return nil, -1, err
	}
	src, closeSrc, err := mirrorconfig.Admin(props, mirrorconfig.Source)
	if err != nil {
		return nil, -1, err
	}
	defer closeSrc()
	dst, closeDst, err := mirrorconfig.Admin(props, mirrorconfig.Target)
	if err != nil {
		return nil, -1, err
	}
	defer closeDst()

	srcTopics, err := src.ListTopics(ctx)
	if err != nil {
		return nil, -1, fmt.Errorf("list the topics of %s: %w", f.Source, err)
	}
	dstTopics, err := dst.ListTopics(ctx)
	if err != nil {
		return nil, -1, fmt.Errorf("list the topics of %s: %w", f.Target, err)
	}
	// The topics MirrorSourceConnector replicates, less the heartbeats
	// (reported as the flow's heartbeat age).
	var topics, remotes []string
	remoteOf := map[string]string{}
	for _, t := range srcTopics.Names() {
		if !tf.ShouldReplicateTopic(t) || pol.IsInternalTopic(t) || pol.IsHeartbeatsTopic(t) || policy.IsCycle(pol, t, f.Target) {
			continue
		}
		topics = append(topics, t)
		r := pol.FormatRemoteTopic(f.Source, t)
		remoteOf[t] = r
		if dstTopics.Has(r) {
			remotes = append(remotes, r)
		}
	}
	slices.Sort(topics)
	srcOffsets, err := listOffsets(ctx, src, topics)
	if err != nil {
		return nil, -1, fmt.Errorf("%s: %w", f.Source, err)
	}
	dstOffsets, err := listOffsets(ctx, dst, remotes)
	if err != nil {
		return nil, -1, fmt.Errorf("%s: %w", f.Target, err)
	}
	syncs, err := readOffsetSyncs(ctx, props, pol, f)
	if err != nil {
		return nil, -1, err
	}

	var out []TopicLag
	first := map[string]map[int32]offsetRange{} // the first record not on the target
	for _, t := range topics {
		r := remoteOf[t]
		tl := TopicLag{Topic: t, RemoteTopic: r, Partitions: len(srcOffsets[t]), FromOffsetSyncs: true}
		_, tl.RemoteExists = dstOffsets[r]
		shared := r == t
		for p, so := range srcOffsets[t] {
			pos := so.start // nothing replicated
			to, onTarget := dstOffsets[r][p]
			s, synced := syncs[topicPartition{t, p}]
			// An empty source partition needs no sync to be caught up.
			empty := so.start == so.end
			switch {
			case !onTarget:
				tl.FromOffsetSyncs = tl.FromOffsetSyncs && empty
			case synced && shared:
				pos = s.UpstreamOffset + 1
			case synced && s.DownstreamOffset < to.end:
				pos = s.UpstreamOffset + to.end - s.DownstreamOffset
			default:
				tl.FromOffsetSyncs = tl.FromOffsetSyncs && empty
				if !shared {
					pos = so.start + to.end - to.start
				}
			}
			pos = min(max(pos, so.start), so.end)
			tl.Records += so.end - pos
			if pos < so.end {
				if first[t] == nil {
					first[t] = map[int32]offsetRange{}
				}
				first[t][p] = offsetRange{pos, pos + 1}
			}
		}
		out = append(out, tl)
	}

	// The age of the oldest record not replicated, partition by partition.
	// Partitions not read in time show as unknown seconds.
	oldest := map[string]int64{}
	readCtx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	_ = readRanges(readCtx, props, mirrorconfig.Source, first, func(r *kgo.Record) {
		ms := r.Timestamp.UnixMilli()
		if o, ok := oldest[r.Topic]; !ok || ms < o {
			oldest[r.Topic] = ms
		}
	})
	at := now()
	for i := range out {
		tl := &out[i]
		switch ms, ok := oldest[tl.Topic]; {
		case tl.Records == 0:
		case ok:
			tl.Seconds = max(0, at.Sub(time.UnixMilli(ms)).Seconds())
		default:
			tl.Seconds = -1
		}
	}

	age := heartbeatAge(ctx, props, pol, f, dstTopics.Has(pol.FormatRemoteTopic(f.Source, pol.HeartbeatsTopic())), at)
	return out, age, nil
}

// readOffsetSyncs reads the flow's offset-syncs topic and keeps the
// latest sync of every partition. The topic is on the source unless
// offset-syncs.topic.location = target, and named for the other cluster.
func readOffsetSyncs(ctx context.Context, props map[string]string, pol policy.ReplicationPolicy, f Flow) (map[topicPartition]records.OffsetSync, error) {
	out := map[topicPartition]records.OffsetSync{}
	cluster, topic := mirrorconfig.Source, pol.OffsetSyncsTopic(f.Target)
	if props[mirrorconfig.OffsetSyncsTopicLocation] == mirrorconfig.Target {
		cluster, topic = mirrorconfig.Target, pol.OffsetSyncsTopic(f.Source)
	}
	adm, closeAdm, err := mirrorconfig.Admin(props, cluster)
	if err != nil {
		return nil, err
	}
	defer closeAdm()
	offs, err := listOffsets(ctx, adm, []string{topic})
	if err != nil {
		return nil, fmt.Errorf("offset syncs %s: %w", topic, err)
	}
	ranges := map[string]map[int32]offsetRange{topic: {}}
	for p, o := range offs[topic] {
		ranges[topic][p] = offsetRange{o.start, o.end}
	}
	err = readRanges(ctx, props, cluster, ranges, func(r *kgo.Record) {
		if s, err := records.DecodeOffsetSync(r.Key, r.Value); err == nil {
			out[topicPartition{s.Topic, s.Partition}] = s
		}
	})
	if err != nil {
		return nil, fmt.Errorf("offset syncs %s: %w", topic, err)
	}
	return out, nil
}

// heartbeatAge is the age of the newest heartbeat among the last few
// records of the target's copy of the source's heartbeats topic.
func heartbeatAge(ctx context.Context, props map[string]string, pol policy.ReplicationPolicy, f Flow, exists bool, at time.Time) time.Duration {
	if !exists {
		return -1
	}
	topic := pol.FormatRemoteTopic(f.Source, pol.HeartbeatsTopic())
	adm, closeAdm, err := mirrorconfig.Admin(props, mirrorconfig.Target)
	if err != nil {
		return -1
	}
	defer closeAdm()
	offs, err := listOffsets(ctx, adm, []string{topic})
	if err != nil {
		return -1
	}
	ranges := map[string]map[int32]offsetRange{topic: {}}
	for p, o := range offs[topic] {
		ranges[topic][p] = offsetRange{max(o.start, o.end-10), o.end}
	}
	newest := int64(-1)
	readCtx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	_ = readRanges(readCtx, props, mirrorconfig.Target, ranges, func(r *kgo.Record) {
		if hb, err := records.DecodeHeartbeat(r.Key, r.Value); err == nil && hb.Timestamp > newest {
			newest = hb.Timestamp
		}
	})
	if newest < 0 {
		return -1
	}
	return max(0, at.Sub(time.UnixMilli(newest)))
}
