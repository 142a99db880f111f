package cli

// `fjord cluster`: the operator commands of a multi-broker cluster —
// describe, elect-leaders, reassign (kafka-reassign-partitions.sh) and
// remove-broker — spoken over the Kafka protocol only, so they work on
// Apache Kafka as on Fjord. Names, JSON formats and messages follow
// Kafka's tools (kafka-leader-election.sh, kafka-reassign-partitions.sh,
// kafka-cluster.sh).

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// clusterBroker is one broker as DescribeCluster reports it.
type clusterBroker struct {
	ID     int32  `json:"id"`
	Host   string `json:"host"`
	Port   int32  `json:"port"`
	Rack   string `json:"rack,omitempty"`
	Fenced bool   `json:"fenced"`
}

// clusterInfo is what describe needs: DescribeCluster plus every
// partition from Metadata.
type clusterInfo struct {
	ID         string
	Controller int32
	Brokers    []clusterBroker
	// FencedKnown is false when the cluster answered DescribeCluster
	// before v2 (or only Metadata), which lists unfenced brokers only.
	FencedKnown bool
	Partitions  []partitionState
}

// partitionState is one partition from Metadata.
type partitionState struct {
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Leader    int32   `json:"leader"`
	Replicas  []int32 `json:"replicas"`
	ISR       []int32 `json:"isr"`
	Offline   []int32 `json:"offline_replicas,omitempty"`
	Error     string  `json:"error,omitempty"`
}

func (p partitionState) underReplicated() bool { return len(p.ISR) < len(p.Replicas) }

// offline matches kafka-topics --unavailable-partitions: no leader, or a
// leader that is not a live broker.
func (p partitionState) offline(live map[int32]bool) bool {
	return p.Leader < 0 || !live[p.Leader]
}

// notPreferred: led by a replica other than the first (the preferred
// leader a preferred election would restore).
func (p partitionState) notPreferred() bool {
	return p.Leader >= 0 && len(p.Replicas) > 0 && p.Leader != p.Replicas[0]
}

func (p partitionState) name() string { return p.Topic + "-" + strconv.Itoa(int(p.Partition)) }

// describeCluster reads brokers (fenced included where the cluster says)
// and the partitions of every topic, without the client's metadata cache:
// operators run these commands to see what is true now.
func describeCluster(ctx context.Context, c *Conn) (*clusterInfo, error) {
	info := &clusterInfo{Controller: -1}
	dreq := kmsg.NewPtrDescribeClusterRequest()
	dreq.IncludeFencedBrokers = true
	dresp, err := dreq.RequestWith(ctx, c.Client)
	if err == nil {
		err = kerr.ErrorForCode(dresp.ErrorCode)
		if err != nil {
			err = brokerErr(err, derefStr(dresp.ErrorMessage))
		}
	}
	var mreq = kmsg.NewPtrMetadataRequest() // nil Topics: every topic
	mresp, merr := mreq.RequestWith(ctx, c.Client)
	if merr != nil {
		return nil, fmt.Errorf("metadata: %w", merr)
	}
	switch {
	case err == nil:
		info.ID, info.Controller = dresp.ClusterID, dresp.ControllerID
		info.FencedKnown = dresp.Version >= 2
		for _, b := range dresp.Brokers {
			info.Brokers = append(info.Brokers, clusterBroker{b.NodeID, b.Host, b.Port, derefStr(b.Rack), b.IsFenced})
		}
	case errors.Is(err, kerr.UnsupportedVersion):
		// Clusters before DescribeCluster (Kafka < 2.8): Metadata has
		// the same brokers, unfenced only.
		info.ID, info.Controller = derefStr(mresp.ClusterID), mresp.ControllerID
		for _, b := range mresp.Brokers {
			info.Brokers = append(info.Brokers, clusterBroker{b.NodeID, b.Host, b.Port, derefStr(b.Rack), false})
		}
	default:
		return nil, fmt.Errorf("describe cluster: %w", err)
	}
	sort.Slice(info.Brokers, func(i, j int) bool { return info.Brokers[i].ID < info.Brokers[j].ID })
	for _, t := range mresp.Topics {
		if t.Topic == nil {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			info.Partitions = append(info.Partitions, partitionState{Topic: *t.Topic, Partition: -1, Leader: -1, Error: err.Error()})
			continue
		}
		for _, p := range t.Partitions {
			ps := partitionState{
				Topic: *t.Topic, Partition: p.Partition, Leader: p.Leader,
				Replicas: nonNil(p.Replicas), ISR: nonNil(p.ISR), Offline: p.OfflineReplicas,
			}
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				ps.Error = err.Error()
			}
			info.Partitions = append(info.Partitions, ps)
		}
	}
	sort.Slice(info.Partitions, func(i, j int) bool {
		a, b := info.Partitions[i], info.Partitions[j]
		return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
	})
	return info, nil
}

func (ci *clusterInfo) live() map[int32]bool {
	live := map[int32]bool{}
	for _, b := range ci.Brokers {
		if !b.Fenced {
			live[b.ID] = true
		}
	}
	return live
}

func derefStr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// ClusterDescribe prints the cluster id, the controller, the brokers and
// the partitions that need attention: under-replicated, offline, and led
// by a replica other than the preferred one.
func ClusterDescribe(ctx context.Context, co *ClientOptions, p *Printer) error {
	c, err := co.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	info, err := describeCluster(ctx, c)
	if err != nil {
		return err
	}
	live := info.live()
	out := struct {
		ClusterID       string           `json:"cluster_id"`
		Controller      int32            `json:"controller"`
		Brokers         []clusterBroker  `json:"brokers"`
		Partitions      int              `json:"partitions"`
		UnderReplicated []partitionState `json:"under_replicated"`
		Offline         []partitionState `json:"offline"`
		NotPreferred    []partitionState `json:"not_preferred_leader"`
	}{ClusterID: info.ID, Controller: info.Controller, Brokers: info.Brokers,
		UnderReplicated: []partitionState{}, Offline: []partitionState{}, NotPreferred: []partitionState{}}
	if out.Brokers == nil {
		out.Brokers = []clusterBroker{}
	}
	for _, ps := range info.Partitions {
		if ps.Partition < 0 {
			out.Offline = append(out.Offline, ps)
			continue
		}
		out.Partitions++
		if ps.offline(live) {
			out.Offline = append(out.Offline, ps)
		}
		if ps.underReplicated() {
			out.UnderReplicated = append(out.UnderReplicated, ps)
		}
		if ps.notPreferred() {
			out.NotPreferred = append(out.NotPreferred, ps)
		}
	}
	if p.JSONMode() {
		return p.JSON(out)
	}
	p.Linef("Cluster ID: %s", orDash(info.ID))
	if info.Controller >= 0 {
		p.Linef("Controller: %d", info.Controller)
	} else {
		p.Linef("Controller: none known")
	}
	p.Linef("")
	header := []string{"BROKER", "ADDRESS", "RACK"}
	if info.FencedKnown {
		header = append(header, "STATE")
	}
	var rows [][]string
	for _, b := range info.Brokers {
		r := []string{strconv.Itoa(int(b.ID)), fmt.Sprintf("%s:%d", b.Host, b.Port), orDash(b.Rack)}
		if info.FencedKnown {
			r = append(r, map[bool]string{false: "active", true: "fenced"}[b.Fenced])
		}
		rows = append(rows, r)
	}
	if err := p.Table(header, rows); err != nil {
		return err
	}
	p.Linef("")
	section := func(title string, ps []partitionState) error {
		if len(ps) == 0 {
			p.Linef("%s: none", title)
			return nil
		}
		p.Linef("%s: %d", title, len(ps))
		var rows [][]string
		for _, s := range ps {
			leader := strconv.Itoa(int(s.Leader))
			if s.Leader < 0 {
				leader = "none"
			}
			part := strconv.Itoa(int(s.Partition))
			if s.Partition < 0 {
				part = "-"
			}
			rows = append(rows, []string{s.Topic, part, leader, joinInt32s(s.Replicas), joinInt32s(s.ISR), s.Error})
		}
		return p.Table([]string{"TOPIC", "PARTITION", "LEADER", "REPLICAS", "ISR", "ERROR"}, rows)
	}
	p.Linef("Partitions: %d", out.Partitions)
	if err := section("Under-replicated partitions", out.UnderReplicated); err != nil {
		return err
	}
	if err := section("Offline partitions", out.Offline); err != nil {
		return err
	}
	if err := section("Partitions not led by their preferred replica", out.NotPreferred); err != nil {
		return err
	}
	if len(out.NotPreferred) > 0 {
		p.Linef("(move them back with `fjord cluster elect-leaders --all`)")
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ElectLeadersOptions are the flags of `fjord cluster elect-leaders`.
type ElectLeadersOptions struct {
	Type      string // preferred (default) or unclean
	Topic     string
	Partition int32 // -1: every partition of Topic
	All       bool
}

// ElectLeaders runs a leader election (ElectLeaders) for one partition,
// a topic's partitions, or every partition (--all), and reports the
// outcome per partition as kafka-leader-election.sh does.
func ElectLeaders(ctx context.Context, co *ClientOptions, o ElectLeadersOptions, p *Printer) error {
	var how kadm.ElectLeadersHow
	var typeName string
	switch strings.ToLower(o.Type) {
	case "", "preferred":
		how, typeName = kadm.ElectPreferredReplica, "PREFERRED"
	case "unclean":
		how, typeName = kadm.ElectLiveReplica, "UNCLEAN"
	default:
		return fmt.Errorf("--type %q: want preferred or unclean", o.Type)
	}
	if (o.Topic != "") == o.All {
		return errors.New("give exactly one of --topic T (optionally with --partition N) or --all")
	}
	if o.Partition >= 0 && o.Topic == "" {
		return errors.New("--partition needs --topic")
	}
	c, err := co.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	var set kadm.TopicsSet // nil: every partition
	if o.Topic != "" {
		set = kadm.TopicsSet{}
		if o.Partition >= 0 {
			set.Add(o.Topic, o.Partition)
		} else {
			tds, err := c.Admin.ListTopics(ctx, o.Topic)
			if err != nil {
				return fmt.Errorf("elect leaders: %w", err)
			}
			d, ok := tds[o.Topic]
			if !ok || d.Err != nil {
				if ok {
					err = d.Err
				} else {
					err = kerr.UnknownTopicOrPartition
				}
				return topicErr(o.Topic, err)
			}
			set.Add(o.Topic, d.Partitions.Numbers()...)
		}
	}
	res, err := c.Admin.ElectLeaders(ctx, how, set)
	if err != nil {
		if errors.Is(err, kerr.ClusterAuthorizationFailed) {
			return fmt.Errorf("not authorized to perform leader election: %w", err)
		}
		return fmt.Errorf("elect leaders: %w", err)
	}
	type result struct {
		Topic     string `json:"topic"`
		Partition int32  `json:"partition"`
		Result    string `json:"result"` // elected, not_needed, error
		Error     string `json:"error,omitempty"`
	}
	var results []result
	var failed []string
	for _, ps := range res {
		for _, r := range ps {
			rr := result{Topic: r.Topic, Partition: r.Partition, Result: "elected"}
			switch {
			case r.Err == nil:
			case errors.Is(r.Err, kerr.ElectionNotNeeded):
				rr.Result = "not_needed"
			default:
				rr.Result = "error"
				rr.Error = brokerErr(r.Err, r.ErrMessage).Error()
				failed = append(failed, fmt.Sprintf("%s-%d: %s", r.Topic, r.Partition, rr.Error))
			}
			results = append(results, rr)
		}
	}
	sort.Slice(results, func(i, j int) bool {
		a, b := results[i], results[j]
		return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
	})
	if p.JSONMode() {
		if results == nil {
			results = []result{}
		}
		if err := p.JSON(struct {
			Type    string   `json:"type"`
			Results []result `json:"results"`
		}{strings.ToLower(typeName), results}); err != nil {
			return err
		}
	} else {
		var elected, noop []string
		for _, r := range results {
			name := r.Topic + "-" + strconv.Itoa(int(r.Partition))
			switch r.Result {
			case "elected":
				elected = append(elected, name)
			case "not_needed":
				noop = append(noop, name)
			default:
				p.Linef("Error completing leader election (%s) for partition: %s: %s", typeName, name, r.Error)
			}
		}
		if len(elected) > 0 {
			p.Linef("Successfully completed leader election (%s) for partitions %s", typeName, strings.Join(elected, ", "))
		}
		if len(noop) > 0 {
			p.Linef("Valid replica already elected for partitions %s", strings.Join(noop, ", "))
		}
		if len(results) == 0 {
			p.Linef("No partition needed a leader election (%s).", typeName)
		}
	}
	if len(failed) > 0 {
		hint := ""
		if how == kadm.ElectPreferredReplica {
			hint = " (a preferred election needs the preferred replica alive and in the ISR)"
		}
		return fmt.Errorf("%d replica(s) could not be elected%s", len(failed), hint)
	}
	return nil
}

// brokerIDs renders ids as "1,2,3".
func brokerIDs(ids []int32) string {
	s := slices.Clone(ids)
	slices.Sort(s)
	return joinInt32s(s)
}
