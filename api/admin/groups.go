package admin

import (
	"context"
	"net/http"
	"sort"
	"strconv"

	"github.com/go-chi/chi/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// groupSummary is the GroupSummary entity.
type groupSummary struct {
	GroupID      string   `json:"group_id"`
	State        string   `json:"state"`
	ProtocolType string   `json:"protocol_type"`
	Protocol     string   `json:"protocol"`
	Members      int      `json:"members"`
	Coordinator  int32    `json:"coordinator"`
	Lag          int64    `json:"lag"`
	Topics       []string `json:"topics"`
}

// groupDetail answers GET /groups/{group}: the summary's fields, with
// "members" holding the list and "member_count" the number.
type groupDetail struct {
	GroupID      string        `json:"group_id"`
	State        string        `json:"state"`
	ProtocolType string        `json:"protocol_type"`
	Protocol     string        `json:"protocol"`
	MemberCount  int           `json:"member_count"`
	Coordinator  int32         `json:"coordinator"`
	Lag          int64         `json:"lag"`
	Topics       []string      `json:"topics"`
	Members      []groupMember `json:"members"`
	Offsets      []groupOffset `json:"offsets"`
}

type groupMember struct {
	MemberID    string       `json:"member_id"`
	InstanceID  *string      `json:"instance_id"`
	ClientID    string       `json:"client_id"`
	ClientHost  string       `json:"client_host"`
	Assignments []assignment `json:"assignments"`
}

type assignment struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
}

type groupOffset struct {
	Topic           string `json:"topic"`
	Partition       int32  `json:"partition"`
	CommittedOffset int64  `json:"committed_offset"`
	EndOffset       int64  `json:"end_offset"`
	Lag             int64  `json:"lag"`
	Metadata        string `json:"metadata"`
	MemberID        string `json:"member_id"`
}

func (s *Server) listGroups(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	if err := s.reachable(ctx); err != nil {
		fail(w, err)
		return
	}
	// Lag with no groups describes every group and fetches their
	// offsets and the partitions' ends.
	lags, err := s.adm.Lag(ctx)
	if err != nil && len(lags) == 0 {
		fail(w, kafkaError(err, ""))
		return
	}
	out := make([]groupSummary, 0, len(lags))
	for _, l := range lags.Sorted() {
		out = append(out, summarize(l))
	}
	writeJSON(w, http.StatusOK, out)
}

func summarize(l kadm.DescribedGroupLag) groupSummary {
	topics := make([]string, 0, len(l.Lag))
	for t := range l.Lag {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	return groupSummary{
		GroupID: l.Group, State: l.State, ProtocolType: l.ProtocolType, Protocol: l.Protocol,
		Members: len(l.Members), Coordinator: l.Coordinator.NodeID, Lag: totalLag(l), Topics: topics,
	}
}

// totalLag sums a group's lag over its partitions: -1 when the group or
// one partition's lag could not be known.
func totalLag(l kadm.DescribedGroupLag) int64 {
	if l.Error() != nil {
		return -1
	}
	var n int64
	for _, ps := range l.Lag {
		for _, p := range ps {
			if p.Err != nil || p.Lag < 0 {
				return -1
			}
			n += p.Lag
		}
	}
	return n
}

func (s *Server) getGroup(w http.ResponseWriter, r *http.Request) {
	group := chi.URLParam(r, "group")
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	if err := s.reachable(ctx); err != nil {
		fail(w, err)
		return
	}
	lags, err := s.adm.Lag(ctx, group)
	if err != nil && len(lags) == 0 {
		fail(w, kafkaError(err, ""))
		return
	}
	l, ok := lags[group]
	if !ok || isMissingGroup(l) {
		fail(w, kafkaError(kerr.GroupIDNotFound, "Group '"+group+"' does not exist."))
		return
	}
	if err := l.Error(); err != nil {
		fail(w, kafkaError(err, ""))
		return
	}
	sum := summarize(l)
	out := groupDetail{
		GroupID: sum.GroupID, State: sum.State, ProtocolType: sum.ProtocolType, Protocol: sum.Protocol,
		MemberCount: sum.Members, Coordinator: sum.Coordinator, Lag: sum.Lag, Topics: sum.Topics,
		Members: []groupMember{}, Offsets: []groupOffset{},
	}
	for _, m := range l.Members {
		gm := groupMember{MemberID: m.MemberID, InstanceID: m.InstanceID, ClientID: m.ClientID, ClientHost: m.ClientHost, Assignments: []assignment{}}
		// Consumer groups' assignments are topic partitions; a
		// Connect worker group's are connectors and tasks, not shown.
		if c, ok := m.Assigned.AsConsumer(); ok {
			for _, t := range c.Topics {
				ps := append([]int32{}, t.Partitions...)
				sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
				gm.Assignments = append(gm.Assignments, assignment{Topic: t.Topic, Partitions: ps})
			}
			sort.Slice(gm.Assignments, func(i, j int) bool { return gm.Assignments[i].Topic < gm.Assignments[j].Topic })
		}
		out.Members = append(out.Members, gm)
	}
	for _, p := range l.Lag.Sorted() {
		o := groupOffset{
			Topic: p.Topic, Partition: p.Partition, CommittedOffset: p.Commit.At, EndOffset: -1,
			Lag: p.Lag, Metadata: p.Commit.Metadata,
		}
		if p.End.Err == nil {
			o.EndOffset = p.End.Offset
		}
		if p.Member != nil {
			o.MemberID = p.Member.MemberID
		}
		out.Offsets = append(out.Offsets, o)
	}
	writeJSON(w, http.StatusOK, out)
}

// isMissingGroup: a group the coordinator does not know describes as
// Dead with no members (classic DescribeGroups) or GROUP_ID_NOT_FOUND
// (Kafka 4's coordinator), and has no committed offsets.
func isMissingGroup(l kadm.DescribedGroupLag) bool {
	if l.DescribeErr == kerr.GroupIDNotFound {
		return true
	}
	return l.DescribeErr == nil && l.State == "Dead" && len(l.Members) == 0 && len(l.Lag) == 0
}

func (s *Server) deleteGroup(w http.ResponseWriter, r *http.Request) {
	group := chi.URLParam(r, "group")
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	if err := s.reachable(ctx); err != nil {
		fail(w, err)
		return
	}
	resps, err := s.adm.DeleteGroups(ctx, group)
	if err != nil && len(resps) == 0 {
		fail(w, kafkaError(err, ""))
		return
	}
	res, ok := resps[group]
	if !ok {
		fail(w, kafkaError(err, ""))
		return
	}
	if res.Err != nil {
		msg := res.ErrMessage
		switch {
		case msg != "":
		case res.Err == kerr.NonEmptyGroup:
			msg = "Group '" + group + "' has active members: stop its consumers before deleting it."
		case res.Err == kerr.GroupIDNotFound:
			msg = "Group '" + group + "' does not exist."
		}
		fail(w, kafkaError(res.Err, msg))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// resetRequest is POST /groups/{group}/offsets/reset's body, after
// kafka-consumer-groups --reset-offsets.
type resetRequest struct {
	Topics    []string `json:"topics"`
	To        string   `json:"to"`
	Timestamp *int64   `json:"timestamp"`
	Offset    *int64   `json:"offset"`
	Shift     *int64   `json:"shift"`
	DryRun    bool     `json:"dry_run"`
}

type resetResult struct {
	DryRun  bool          `json:"dry_run"`
	Offsets []resetOffset `json:"offsets"`
}

type resetOffset struct {
	Topic          string `json:"topic"`
	Partition      int32  `json:"partition"`
	PreviousOffset int64  `json:"previous_offset"`
	NewOffset      int64  `json:"new_offset"`
}

func (s *Server) resetGroupOffsets(w http.ResponseWriter, r *http.Request) {
	group := chi.URLParam(r, "group")
	var req resetRequest
	if err := decodeBody(r, &req); err != nil {
		fail(w, err)
		return
	}
	if err := req.check(); err != nil {
		fail(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	if err := s.reachable(ctx); err != nil {
		fail(w, err)
		return
	}
	res, err := s.resetOffsets(ctx, group, req)
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (req *resetRequest) check() error {
	need := map[string]bool{"timestamp": req.Timestamp != nil, "offset": req.Offset != nil, "shift": req.Shift != nil}
	switch req.To {
	case "earliest", "latest":
	case "timestamp", "offset", "shift":
		if !need[req.To] {
			return errorf(http.StatusBadRequest, `"to": %q needs "%s" too`, req.To, req.To)
		}
	case "":
		return errorf(http.StatusBadRequest, `"to" is required: earliest, latest, timestamp, offset or shift`)
	default:
		return errorf(http.StatusBadRequest, `"to" must be earliest, latest, timestamp, offset or shift, not %q`, req.To)
	}
	return nil
}

// resetOffsets computes, and unless a dry run commits, a group's new
// offsets. As kafka-consumer-groups does it refuses a group with
// members (they would overwrite the reset with their next commit), takes
// all partitions of the topics named (or, with none named, those the
// group has committed offsets for), and clamps to each partition's
// [start, end].
func (s *Server) resetOffsets(ctx context.Context, group string, req resetRequest) (*resetResult, error) {
	described, err := s.adm.DescribeGroups(ctx, group)
	if err != nil && len(described) == 0 {
		return nil, kafkaError(err, "")
	}
	dg := described[group]
	if dg.Err != nil && dg.Err != kerr.GroupIDNotFound {
		return nil, kafkaError(dg.Err, "")
	}
	if dg.Err == nil && dg.State != "Empty" && dg.State != "Dead" && dg.State != "" {
		return nil, errorf(http.StatusConflict, "Assignments can only be reset if the group '%s' is inactive, but the current state is %s.", group, dg.State)
	}
	committed, err := s.adm.FetchOffsets(ctx, group)
	if err != nil {
		return nil, kafkaError(err, "")
	}

	// The partitions to reset.
	set := make(kadm.TopicsSet)
	if len(req.Topics) > 0 {
		mctx, mcancel := metadataCtx(ctx)
		md, err := s.adm.Metadata(mctx, req.Topics...)
		mcancel()
		if err != nil {
			return nil, kafkaError(err, "")
		}
		for _, t := range req.Topics {
			td, ok := md.Topics[t]
			if !ok || td.Err != nil {
				return nil, kafkaError(kerr.UnknownTopicOrPartition, "Topic '"+t+"' does not exist.")
			}
			set.Add(t, td.Partitions.Numbers()...)
		}
	} else {
		committed.Each(func(o kadm.OffsetResponse) {
			if o.Err == nil && o.At >= 0 {
				set.Add(o.Topic, o.Partition)
			}
		})
		if len(set) == 0 {
			return nil, errorf(http.StatusBadRequest, "group '%s' has no committed offsets: name the topics to reset in \"topics\"", group)
		}
	}
	topics := set.Topics()
	starts, err := s.adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return nil, kafkaError(err, "")
	}
	ends, err := s.adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return nil, kafkaError(err, "")
	}
	var byTime kadm.ListedOffsets
	if req.To == "timestamp" {
		if byTime, err = s.adm.ListOffsetsAfterMilli(ctx, *req.Timestamp, topics...); err != nil {
			return nil, kafkaError(err, "")
		}
	}

	res := &resetResult{DryRun: req.DryRun, Offsets: []resetOffset{}}
	var commit kadm.Offsets
	for _, tp := range set.Sorted() {
		for _, p := range tp.Partitions {
			start, ok1 := starts.Lookup(tp.Topic, p)
			end, ok2 := ends.Lookup(tp.Topic, p)
			if !ok1 || !ok2 || start.Err != nil || end.Err != nil {
				err := start.Err
				if err == nil {
					err = end.Err
				}
				if err == nil {
					err = kerr.UnknownTopicOrPartition
				}
				return nil, kafkaError(err, "")
			}
			prev := int64(-1)
			if c, ok := committed.Lookup(tp.Topic, p); ok && c.Err == nil {
				prev = c.At
			}
			var to int64
			switch req.To {
			case "earliest":
				to = start.Offset
			case "latest":
				to = end.Offset
			case "offset":
				to = *req.Offset
			case "timestamp":
				to = end.Offset // no record at or after the time
				if o, ok := byTime.Lookup(tp.Topic, p); ok && o.Err == nil && o.Offset >= 0 {
					to = o.Offset
				}
			case "shift":
				if prev < 0 {
					return nil, errorf(http.StatusBadRequest, "cannot shift the offset of %s-%d: group '%s' has no committed offset for it", tp.Topic, p, group)
				}
				to = prev + *req.Shift
			}
			to = min(max(to, start.Offset), end.Offset)
			res.Offsets = append(res.Offsets, resetOffset{Topic: tp.Topic, Partition: p, PreviousOffset: prev, NewOffset: to})
			commit.Add(kadm.Offset{Topic: tp.Topic, Partition: p, At: to, LeaderEpoch: -1})
		}
	}
	if req.DryRun {
		return res, nil
	}
	resps, err := s.adm.CommitOffsets(ctx, group, commit)
	if err != nil {
		return nil, kafkaError(err, "")
	}
	if err := resps.Error(); err != nil {
		var failed string
		resps.EachError(func(o kadm.OffsetResponse) {
			if failed == "" {
				failed = o.Topic + "-" + strconv.Itoa(int(o.Partition))
			}
		})
		return nil, kafkaError(err, "committing the new offset of "+failed+" failed (did a consumer join the group meanwhile?)")
	}
	return res, nil
}
