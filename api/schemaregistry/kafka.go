package schemaregistry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// KafkaJournal keeps the registry's records in a compacted,
// single-partition Kafka topic (Confluent's kafkastore.topic, _schemas),
// written with acks=all and read from the start by every instance.
type KafkaJournal struct {
	topic string
	rf    int16
	opts  []kgo.Opt
	log   *slog.Logger

	cl     *kgo.Client // producer and reader
	adm    *kadm.Client
	cancel context.CancelFunc
	done   chan struct{}
}

var _ Journal = (*KafkaJournal)(nil)

// NewKafkaJournal returns a journal on topic; opts carry the seed
// brokers and any security settings. rf is the replication factor used
// when the topic is created (-1: the broker's default).
func NewKafkaJournal(topic string, rf int16, logger *slog.Logger, opts ...kgo.Opt) *KafkaJournal {
	return &KafkaJournal{topic: topic, rf: rf, opts: opts, log: logger}
}

func (j *KafkaJournal) Start(ctx context.Context, apply func(Record)) error {
	opts := append([]kgo.Opt{
		kgo.DefaultProduceTopic(j.topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(0),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{j.topic: {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchMaxWait(500 * time.Millisecond),
	}, j.opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("kafka client: %w", err)
	}
	j.cl, j.adm = cl, kadm.NewClient(cl)
	if err := j.ensureTopic(ctx); err != nil {
		cl.Close()
		return err
	}
	// Like Confluent's KafkaStore, write a NOOP and read up to it: the
	// log's end is then a record we know exists (compaction may have
	// removed a trailing tombstone), and the first answers are complete.
	noop, err := encodeRecord(recordKey{KeyType: keyNoop}, nil)
	if err != nil {
		cl.Close()
		return err
	}
	end, err := j.Append(ctx, noop)
	if err != nil {
		cl.Close()
		return err
	}
	rctx, cancel := context.WithCancel(context.Background())
	j.cancel, j.done = cancel, make(chan struct{})
	caughtUp := make(chan struct{})
	var once sync.Once
	go func() {
		defer close(j.done)
		for {
			fs := cl.PollFetches(rctx)
			if rctx.Err() != nil {
				return
			}
			fs.EachError(func(t string, p int32, err error) {
				j.log.Warn("schema registry: reading topic", "topic", t, "partition", p, "err", err)
			})
			fs.EachRecord(func(r *kgo.Record) {
				rec := Record{Key: r.Key, Offset: r.Offset}
				if r.Value != nil {
					rec.Value = r.Value
				}
				apply(rec)
				if r.Offset >= end {
					once.Do(func() { close(caughtUp) })
				}
			})
		}
	}()
	select {
	case <-caughtUp:
		return nil
	case <-ctx.Done():
		j.Close()
		return fmt.Errorf("read %s to its end (offset %d): %w", j.topic, end, ctx.Err())
	}
}

// ensureTopic creates the topic (compacted, one partition) or checks the
// existing one, as Confluent's KafkaStore does.
func (j *KafkaJournal) ensureTopic(ctx context.Context) error {
	compact := "compact"
	resp, err := j.adm.CreateTopic(ctx, 1, j.rf, map[string]*string{"cleanup.policy": &compact}, j.topic)
	if err == nil && resp.Err == nil {
		j.log.Info("schema registry: created topic", "topic", j.topic)
		return nil
	}
	if err == nil && !errors.Is(resp.Err, kerr.TopicAlreadyExists) {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("create topic %s: %w (create it with one partition and cleanup.policy=compact, or check the broker address)", j.topic, err)
	}
	td, err := j.adm.ListTopics(ctx, j.topic)
	if err != nil {
		return fmt.Errorf("describe topic %s: %w", j.topic, err)
	}
	if t, ok := td[j.topic]; ok && len(t.Partitions) != 1 {
		return fmt.Errorf("topic %s has %d partitions: the schema registry needs exactly one (ids are assigned in log order)", j.topic, len(t.Partitions))
	}
	// Like Confluent, refuse a store topic that deletes old records: the
	// schemas would disappear with retention.
	cfgs, err := j.adm.DescribeTopicConfigs(ctx, j.topic)
	if err != nil {
		return fmt.Errorf("describe configs of %s: %w", j.topic, err)
	}
	rc, err := cfgs.On(j.topic, nil)
	if err != nil {
		return fmt.Errorf("describe configs of %s: %w", j.topic, err)
	}
	for _, c := range rc.Configs {
		if c.Key == "cleanup.policy" && c.MaybeValue() != "compact" {
			return fmt.Errorf("the retention policy of the schema topic %s is incorrect: expected cleanup.policy to be 'compact' but it is %s", j.topic, c.MaybeValue())
		}
	}
	return nil
}

func (j *KafkaJournal) Append(ctx context.Context, recs ...Record) (int64, error) {
	krs := make([]*kgo.Record, len(recs))
	for i, r := range recs {
		krs[i] = &kgo.Record{Topic: j.topic, Partition: 0, Key: r.Key, Value: r.Value}
	}
	res := j.cl.ProduceSync(ctx, krs...)
	if err := res.FirstErr(); err != nil {
		return 0, fmt.Errorf("produce to %s: %w", j.topic, err)
	}
	return krs[len(krs)-1].Offset, nil
}

func (j *KafkaJournal) EndOffset(ctx context.Context) (int64, error) {
	offs, err := j.adm.ListEndOffsets(ctx, j.topic)
	if err != nil {
		return 0, fmt.Errorf("list end offset of %s: %w", j.topic, err)
	}
	o, ok := offs.Lookup(j.topic, 0)
	if !ok {
		return 0, fmt.Errorf("list end offset of %s: partition 0 missing", j.topic)
	}
	if o.Err != nil {
		return 0, fmt.Errorf("list end offset of %s: %w", j.topic, o.Err)
	}
	return o.Offset, nil
}

func (j *KafkaJournal) Close() error {
	if j.cancel != nil {
		j.cancel()
		<-j.done
		j.cancel = nil
	}
	if j.cl != nil {
		j.cl.Close()
		j.cl = nil
	}
	return nil
}

// GroupElector elects the writer among the registry instances sharing a
// _schemas topic through a Kafka consumer group (Confluent does the same
// with its own group protocol): every eligible instance joins group
// GroupID; the group leader's balancer picks the writer — the current
// writer while it stays, else the first eligible member — and tells
// everyone its URL in the assignment. The writer is also assigned the
// topic's only partition (fetching is paused; the assignment is a
// marker). While a rebalance runs nobody writes.
type GroupElector struct {
	group, topic string
	self         identity
	opts         []kgo.Opt
	log          *slog.Logger

	mu       sync.Mutex
	leader   Leader
	cl       *kgo.Client
	onRevoke func() // waits for the write in progress (Registry.drain)
}

type identity struct {
	Token    string `json:"token"`
	URL      string `json:"url"`
	Eligible bool   `json:"leader_eligibility"`
	// WasLeader keeps the writer stable across rebalances.
	WasLeader bool `json:"was_leader"`
}

type assignmentInfo struct {
	LeaderToken string `json:"leader_token"`
	LeaderURL   string `json:"leader_url"`
}

var _ Elector = (*GroupElector)(nil)

// NewGroupElector returns an elector for the instance reachable at url.
func NewGroupElector(group, topic, url string, eligible bool, logger *slog.Logger, opts ...kgo.Opt) *GroupElector {
	b := make([]byte, 8)
	rand.Read(b)
	return &GroupElector{group: group, topic: topic, opts: opts, log: logger,
		self: identity{Token: hex.EncodeToString(b), URL: url, Eligible: eligible}}
}

// Start joins the group.
func (e *GroupElector) Start(ctx context.Context) error {
	opts := append([]kgo.Opt{
		kgo.ConsumerGroup(e.group),
		kgo.ConsumeTopics(e.topic),
		kgo.Balancers(&leaderBalancer{e: e}),
		kgo.DisableAutoCommit(),
		kgo.SessionTimeout(10 * time.Second),
		kgo.HeartbeatInterval(time.Second),
		// Before the group rebalances, stop leading and let the write in
		// progress finish, so the next leader never overlaps with it.
		kgo.OnPartitionsRevoked(func(context.Context, *kgo.Client, map[string][]int32) {
			e.setLeader(Leader{})
			if e.onRevoke != nil {
				e.onRevoke()
			}
		}),
		kgo.OnPartitionsLost(func(context.Context, *kgo.Client, map[string][]int32) { e.setLeader(Leader{}) }),
	}, e.opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("kafka group client: %w", err)
	}
	// Only the group matters; never buffer the topic's records here.
	cl.PauseFetchTopics(e.topic)
	e.mu.Lock()
	e.cl = cl
	e.mu.Unlock()
	return nil
}

func (e *GroupElector) setLeader(l Leader) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if l != e.leader {
		e.log.Info("schema registry: leader changed", "known", l.Known, "self", l.Self, "url", l.URL)
	}
	e.leader = l
}

func (e *GroupElector) Leader() Leader {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.leader
}

// Close leaves the group, so another instance takes over at once.
func (e *GroupElector) Close() {
	e.mu.Lock()
	cl := e.cl
	e.cl = nil
	e.mu.Unlock()
	if cl != nil {
		cl.Close()
	}
	e.setLeader(Leader{})
}

// leaderBalancer is a kgo GroupBalancer speaking the ordinary consumer
// protocol encoding, carrying identities in UserData.
type leaderBalancer struct{ e *GroupElector }

func (b *leaderBalancer) ProtocolName() string { return "fjord-schema-registry" }
func (b *leaderBalancer) IsCooperative() bool  { return false }

func (b *leaderBalancer) JoinGroupMetadata(topics []string, _ map[string][]int32, _ int32) []byte {
	b.e.mu.Lock()
	id := b.e.self
	id.WasLeader = b.e.leader.Self
	b.e.mu.Unlock()
	// A join starts a new generation: until it syncs, nobody leads.
	b.e.setLeader(Leader{})
	ud, _ := json.Marshal(id)
	m := kmsg.NewConsumerMemberMetadata()
	m.Topics = topics
	m.UserData = ud
	return m.AppendTo(nil)
}

func (b *leaderBalancer) ParseSyncAssignment(assignment []byte) (map[string][]int32, error) {
	var a kmsg.ConsumerMemberAssignment
	if err := a.ReadFrom(assignment); err != nil {
		return nil, fmt.Errorf("read schema registry assignment: %w", err)
	}
	var ai assignmentInfo
	if err := json.Unmarshal(a.UserData, &ai); err != nil {
		return nil, fmt.Errorf("read schema registry assignment: %w", err)
	}
	if ai.LeaderToken != "" {
		b.e.setLeader(Leader{Known: true, Self: ai.LeaderToken == b.e.self.Token, URL: ai.LeaderURL})
	}
	out := map[string][]int32{}
	for _, t := range a.Topics {
		out[t.Topic] = t.Partitions
	}
	return out, nil
}

func (b *leaderBalancer) MemberBalancer(members []kmsg.JoinGroupResponseMember) (kgo.GroupMemberBalancer, map[string]struct{}, error) {
	ids := make([]identity, len(members))
	leader := -1
	for i, m := range members {
		var md kmsg.ConsumerMemberMetadata
		if err := md.ReadFrom(m.ProtocolMetadata); err != nil {
			return nil, nil, fmt.Errorf("read member %s metadata: %w", m.MemberID, err)
		}
		if err := json.Unmarshal(md.UserData, &ids[i]); err != nil {
			return nil, nil, fmt.Errorf("read member %s identity: %w", m.MemberID, err)
		}
		if ids[i].Eligible && ids[i].WasLeader && leader < 0 {
			leader = i
		}
	}
	if leader < 0 {
		for i := range ids {
			if ids[i].Eligible {
				leader = i
				break
			}
		}
	}
	return &leaderPlan{members: members, ids: ids, leader: leader, topic: b.e.topic},
		map[string]struct{}{b.e.topic: {}}, nil
}

type leaderPlan struct {
	members []kmsg.JoinGroupResponseMember
	ids     []identity
	leader  int
	topic   string
}

func (p *leaderPlan) Balance(map[string]int32) kgo.IntoSyncAssignment { return p }

func (p *leaderPlan) IntoSyncAssignment() []kmsg.SyncGroupRequestGroupAssignment {
	var ai assignmentInfo
	if p.leader >= 0 {
		ai = assignmentInfo{LeaderToken: p.ids[p.leader].Token, LeaderURL: p.ids[p.leader].URL}
	}
	ud, _ := json.Marshal(ai)
	out := make([]kmsg.SyncGroupRequestGroupAssignment, len(p.members))
	for i, m := range p.members {
		a := kmsg.NewConsumerMemberAssignment()
		a.UserData = ud
		if i == p.leader {
			t := kmsg.NewConsumerMemberAssignmentTopic()
			t.Topic, t.Partitions = p.topic, []int32{0}
			a.Topics = append(a.Topics, t)
		}
		out[i] = kmsg.SyncGroupRequestGroupAssignment{MemberID: m.MemberID, MemberAssignment: a.AppendTo(nil)}
	}
	return out
}
