package cli

// `fjord cluster reassign`: kafka-reassign-partitions.sh — the same JSON
// files, the same steps (generate, execute with an optional throttle,
// verify that clears the throttle when everything is done, cancel, list)
// and the same messages where Kafka has them.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// anyLogDir is Kafka's log_dirs entry for "wherever the broker likes".
const anyLogDir = "any"

// Throttle config keys, as Kafka's QuotaConfig names them.
const (
	leaderThrottledRate      = "leader.replication.throttled.rate"
	followerThrottledRate    = "follower.replication.throttled.rate"
	alterLogDirsThrottleRate = "replica.alter.log.dirs.io.max.bytes.per.second"
	leaderThrottledReplicas  = "leader.replication.throttled.replicas"
	followerThrottledReplica = "follower.replication.throttled.replicas"
)

// tp names a partition; it sorts by topic, then partition.
type tp struct {
	Topic     string
	Partition int32
}

func (t tp) String() string { return t.Topic + "-" + strconv.Itoa(int(t.Partition)) }

func tpLess(a, b tp) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return int(a.Partition) - int(b.Partition)
}

// reassignmentJSON is Kafka's reassignment file:
// {"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}]}
type reassignmentJSON struct {
	Version    int                     `json:"version"`
	Partitions []reassignmentPartition `json:"partitions"`
}

type reassignmentPartition struct {
	Topic     string   `json:"topic"`
	Partition int32    `json:"partition"`
	Replicas  []int32  `json:"replicas"`
	LogDirs   []string `json:"log_dirs,omitempty"`
}

// assignment is target replicas by partition.
type assignment map[tp][]int32

func (a assignment) sortedKeys() []tp {
	keys := make([]tp, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, tpLess)
	return keys
}

// formatReassignmentJSON renders a in Kafka's format (compact, sorted by
// topic and partition, log_dirs all "any"), byte for byte what
// kafka-reassign-partitions.sh prints.
func formatReassignmentJSON(a assignment) string {
	out := reassignmentJSON{Version: 1, Partitions: []reassignmentPartition{}}
	for _, k := range a.sortedKeys() {
		reps := a[k]
		dirs := make([]string, len(reps))
		for i := range dirs {
			dirs[i] = anyLogDir
		}
		out.Partitions = append(out.Partitions, reassignmentPartition{k.Topic, k.Partition, nonNil(reps), dirs})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(out)
	return strings.TrimSpace(buf.String())
}

// parseReassignmentJSON parses and checks a reassignment file as Kafka's
// --execute does: a version it knows, at least one partition, non-empty
// replica lists without duplicates, no partition twice, log_dirs as long
// as replicas. Only "any" log dirs are supported (no AlterReplicaLogDirs).
func parseReassignmentJSON(data []byte) (assignment, []tp, error) {
	var raw struct {
		Version    *int                    `json:"version"`
		Partitions []reassignmentPartition `json:"partitions"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&raw); err != nil {
		return nil, nil, fmt.Errorf("the reassignment file is not valid JSON: %w", err)
	}
	if raw.Version != nil && *raw.Version != 1 {
		return nil, nil, fmt.Errorf("Not supported version field value %d", *raw.Version)
	}
	if len(raw.Partitions) == 0 {
		return nil, nil, errors.New("Partition reassignment list cannot be empty")
	}
	a := assignment{}
	var order []tp
	var dupParts []string
	var dupReplicas []string
	for _, p := range raw.Partitions {
		k := tp{p.Topic, p.Partition}
		if p.Topic == "" {
			return nil, nil, errors.New("a partition entry lacks \"topic\"")
		}
		if len(p.Replicas) == 0 {
			return nil, nil, errors.New("Partition replica list cannot be empty")
		}
		if p.LogDirs != nil && len(p.LogDirs) != len(p.Replicas) {
			return nil, nil, fmt.Errorf("Size of replicas list %v is different from size of log dirs list %v for partition %s",
				p.Replicas, p.LogDirs, k)
		}
		for _, d := range p.LogDirs {
			if d != anyLogDir {
				return nil, nil, fmt.Errorf("partition %s: log dir %q: moving replicas between log dirs is not supported; use \"any\"", k, d)
			}
		}
		if _, dup := a[k]; dup {
			dupParts = append(dupParts, k.String())
		}
		seen := map[int32]bool{}
		var dups []string
		for _, r := range p.Replicas {
			if seen[r] && !slices.Contains(dups, strconv.Itoa(int(r))) {
				dups = append(dups, strconv.Itoa(int(r)))
			}
			seen[r] = true
		}
		if len(dups) > 0 {
			dupReplicas = append(dupReplicas, fmt.Sprintf("%s contains multiple entries for %s", k, strings.Join(dups, ",")))
		}
		a[k] = p.Replicas
		order = append(order, k)
	}
	if len(dupParts) > 0 {
		return nil, nil, fmt.Errorf("Partition reassignment contains duplicate topic partitions: %s", strings.Join(dupParts, ","))
	}
	if len(dupReplicas) > 0 {
		return nil, nil, fmt.Errorf("Partition replica lists may not contain duplicate entries: %s", strings.Join(dupReplicas, ". "))
	}
	return a, order, nil
}

// parseTopicsToMoveJSON parses {"version":1,"topics":[{"topic":"foo"}]}.
func parseTopicsToMoveJSON(data []byte) ([]string, error) {
	var raw struct {
		Version *int `json:"version"`
		Topics  []struct {
			Topic string `json:"topic"`
		} `json:"topics"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("The input string is not a valid JSON: %w", err)
	}
	if raw.Version != nil && *raw.Version != 1 {
		return nil, fmt.Errorf("Not supported version field value %d", *raw.Version)
	}
	var topics []string
	var dups []string
	for _, t := range raw.Topics {
		if t.Topic == "" {
			return nil, errors.New("a topics entry lacks \"topic\"")
		}
		if slices.Contains(topics, t.Topic) {
			dups = append(dups, t.Topic)
		}
		topics = append(topics, t.Topic)
	}
	if len(dups) > 0 {
		return nil, fmt.Errorf("List of topics to reassign contains duplicate entries: %s", strings.Join(dups, ","))
	}
	if len(topics) == 0 {
		return nil, errors.New(`no topics to move: the file should look like {"version":1,"topics":[{"topic":"foo"}]}`)
	}
	return topics, nil
}

// parseBrokerList parses --broker-list 1,2,3.
func parseBrokerList(s string) ([]int32, error) {
	var out []int32
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.ParseInt(f, 10, 32)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("--broker-list %q: %q is not a broker id", s, f)
		}
		if slices.Contains(out, int32(n)) {
			return nil, fmt.Errorf("Broker list contains duplicate entries: %d", n)
		}
		out = append(out, int32(n))
	}
	if len(out) == 0 {
		return nil, errors.New("--broker-list is empty: give the ids of the brokers to move the topics onto, e.g. 1,2,3")
	}
	return out, nil
}

// brokerRack is a broker and its rack ("" when it has none).
type brokerRack struct {
	ID   int32
	Rack string
}

// assignReplicas is Kafka's AdminUtils.assignReplicasToBrokers: leaders
// round-robin from startIndex, followers shifted by an increasing amount,
// rack-alternated when every broker has a rack. startIndex and shift < 0
// pick random ones, as Kafka does.
func assignReplicas(brokers []brokerRack, nPartitions, rf, startIndex, shift int) (map[int32][]int32, error) {
	if nPartitions <= 0 {
		return nil, errors.New("Number of partitions must be larger than 0.")
	}
	if rf <= 0 {
		return nil, errors.New("Replication factor must be larger than 0.")
	}
	if rf > len(brokers) {
		return nil, fmt.Errorf("Replication factor: %d larger than available brokers: %d.", rf, len(brokers))
	}
	racks := map[int32]string{}
	withRack := 0
	for _, b := range brokers {
		if b.Rack != "" {
			racks[b.ID] = b.Rack
			withRack++
		}
	}
	var list []int32
	numRacks := 1
	if withRack == 0 {
		for _, b := range brokers {
			list = append(list, b.ID)
		}
	} else {
		if withRack != len(brokers) {
			return nil, errors.New("Not all brokers have rack information for replica rack aware assignment.")
		}
		list = rackAlternated(racks)
		seen := map[string]bool{}
		for _, r := range racks {
			seen[r] = true
		}
		numRacks = len(seen)
	}
	n := len(list)
	if startIndex < 0 {
		startIndex = rand.IntN(n)
	}
	if shift < 0 {
		shift = rand.IntN(n)
	}
	out := map[int32][]int32{}
	for p := 0; p < nPartitions; p++ {
		if p > 0 && p%n == 0 {
			shift++
		}
		first := (p + startIndex) % n
		reps := []int32{list[first]}
		if withRack == 0 {
			for j := 0; j < rf-1; j++ {
				reps = append(reps, list[replicaIndex(first, shift, j, n)])
			}
		} else {
			usedRacks := map[string]bool{racks[list[first]]: true}
			used := map[int32]bool{list[first]: true}
			k := 0
			for j := 0; j < rf-1; j++ {
				for {
					b := list[replicaIndex(first, shift*numRacks, k, n)]
					k++
					if (!usedRacks[racks[b]] || len(usedRacks) == numRacks) && (!used[b] || len(used) == n) {
						reps = append(reps, b)
						usedRacks[racks[b]] = true
						used[b] = true
						break
					}
				}
			}
		}
		out[int32(p)] = reps
	}
	return out, nil
}

func replicaIndex(first, shift, j, n int) int {
	s := 1 + (shift+j)%(n-1)
	return (first + s) % n
}

// rackAlternated is Kafka's getRackAlternatedBrokerList: one broker from
// each rack in turn (racks and brokers sorted).
func rackAlternated(racks map[int32]string) []int32 {
	byRack := map[string][]int32{}
	for id, r := range racks {
		byRack[r] = append(byRack[r], id)
	}
	names := make([]string, 0, len(byRack))
	for r, ids := range byRack {
		slices.Sort(ids)
		names = append(names, r)
	}
	sort.Strings(names)
	var out []int32
	for i := 0; len(out) < len(racks); i++ {
		r := names[i%len(names)]
		if ids := byRack[r]; len(ids) > 0 {
			out = append(out, ids[0])
			byRack[r] = ids[1:]
		}
	}
	return out
}

// readFile reads a file named by a flag, saying which flag on error.
func readFlagFile(flag, path string) ([]byte, error) {
	if path == "" {
		return nil, fmt.Errorf("%s is required", flag)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	return b, nil
}

// currentAssignment reads the replicas of the given topics (all their
// partitions) from fresh Metadata.
func currentAssignment(ctx context.Context, c *Conn, topics []string) (assignment, error) {
	req := kmsg.NewPtrMetadataRequest()
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, c.Client)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	a := assignment{}
	for _, t := range resp.Topics {
		name := derefStr(t.Topic)
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			if errors.Is(err, kerr.UnknownTopicOrPartition) {
				return nil, fmt.Errorf("Topic %s not found.: %w", name, err)
			}
			return nil, topicErr(name, err)
		}
		for _, p := range t.Partitions {
			a[tp{name, p.Partition}] = p.Replicas
		}
	}
	return a, nil
}

// ReassignGenerate proposes moving every partition of the topics in the
// topics-to-move file onto brokerList, and prints the current assignment
// (keep it for rollback) and the proposal, in Kafka's JSON.
func ReassignGenerate(ctx context.Context, co *ClientOptions, topicsFile, brokerList string, disableRackAware bool, p *Printer) error {
	data, err := readFlagFile("--topics-to-move-json-file", topicsFile)
	if err != nil {
		return err
	}
	topics, err := parseTopicsToMoveJSON(data)
	if err != nil {
		return err
	}
	ids, err := parseBrokerList(brokerList)
	if err != nil {
		return err
	}
	c, err := co.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	current, err := currentAssignment(ctx, c, topics)
	if err != nil {
		return err
	}
	info, err := describeCluster(ctx, c)
	if err != nil {
		return err
	}
	var brokers []brokerRack
	rackless := 0
	for _, b := range info.Brokers {
		if !slices.Contains(ids, b.ID) {
			continue
		}
		br := brokerRack{ID: b.ID}
		if !disableRackAware {
			br.Rack = b.Rack
		}
		if br.Rack == "" {
			rackless++
		}
		brokers = append(brokers, br)
	}
	if rackless != 0 && rackless != len(brokers) {
		return errors.New("Not all brokers have rack information. Add --disable-rack-aware in command line to make replica assignment without rack information.")
	}
	// Kafka keeps the order of --broker-list for rack-unaware placement.
	slices.SortFunc(brokers, func(a, b brokerRack) int {
		return slices.Index(ids, a.ID) - slices.Index(ids, b.ID)
	})
	byTopic := map[string][]tp{}
	for k := range current {
		byTopic[k.Topic] = append(byTopic[k.Topic], k)
	}
	proposed := assignment{}
	for _, t := range topics {
		parts := byTopic[t]
		if len(parts) == 0 {
			continue
		}
		slices.SortFunc(parts, tpLess)
		rf := len(current[parts[0]])
		as, err := assignReplicas(brokers, len(parts), rf, -1, -1)
		if err != nil {
			return fmt.Errorf("topic %s: %w", t, err)
		}
		for pid, reps := range as {
			proposed[tp{t, pid}] = reps
		}
	}
	if p.JSONMode() {
		var cur, prop any
		json.Unmarshal([]byte(formatReassignmentJSON(current)), &cur)
		json.Unmarshal([]byte(formatReassignmentJSON(proposed)), &prop)
		return p.JSON(map[string]any{"current": cur, "proposed": prop})
	}
	p.Linef("Current partition replica assignment\n%s\n", formatReassignmentJSON(current))
	p.Linef("Proposed partition reassignment configuration\n%s", formatReassignmentJSON(proposed))
	return nil
}

// ReassignExecuteOptions are the flags of `fjord cluster reassign execute`.
type ReassignExecuteOptions struct {
	File       string
	Throttle   int64 // bytes/s for inter-broker replication; < 0: none
	Additional bool  // allow while other reassignments are in progress
}

const cannotExecuteBecauseOfExisting = "Cannot execute because there is an existing partition assignment.  " +
	"Use --additional to override this and create a new partition assignment in addition to the existing one. " +
	"The --additional flag can also be used to change the throttle by resubmitting the current reassignment."

// listReassignments lists ongoing reassignments: all of them when parts
// is empty (Kafka's tool does the same; kadm needs named partitions).
func listReassignments(ctx context.Context, c *Conn, parts []tp) (map[tp]kmsg.ListPartitionReassignmentsResponseTopicPartition, error) {
	req := kmsg.NewPtrListPartitionReassignmentsRequest()
	req.TimeoutMillis = listTimeoutMillis
	if len(parts) > 0 {
		idx := map[string]int{}
		for _, k := range parts {
			i, ok := idx[k.Topic]
			if !ok {
				i = len(req.Topics)
				idx[k.Topic] = i
				rt := kmsg.NewListPartitionReassignmentsRequestTopic()
				rt.Topic = k.Topic
				req.Topics = append(req.Topics, rt)
			}
			req.Topics[i].Partitions = append(req.Topics[i].Partitions, k.Partition)
		}
	}
	resp, err := req.RequestWith(ctx, c.Client)
	if err != nil {
		return nil, fmt.Errorf("list partition reassignments: %w", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, fmt.Errorf("list partition reassignments: %w", brokerErr(err, derefStr(resp.ErrorMessage)))
	}
	out := map[tp]kmsg.ListPartitionReassignmentsResponseTopicPartition{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out[tp{t.Topic, p.Partition}] = p
		}
	}
	return out, nil
}

// partitionMove is one partition's replica movement: sources are the
// replicas it has (before any ongoing reassignment added some),
// destinations the replicas being added.
type partitionMove struct {
	Sources, Destinations []int32
}

// proposedMoves is Kafka's calculateProposedMoveMap: ongoing
// reassignments plus the proposed ones.
func proposedMoves(ongoing map[tp]kmsg.ListPartitionReassignmentsResponseTopicPartition, proposed, current assignment) map[tp]partitionMove {
	moves := map[tp]partitionMove{}
	for k, r := range ongoing {
		var src []int32
		for _, x := range r.Replicas {
			if !slices.Contains(r.AddingReplicas, x) {
				src = append(src, x)
			}
		}
		moves[k] = partitionMove{src, slices.Clone(r.AddingReplicas)}
	}
	for k, reps := range proposed {
		var src []int32
		if m, ok := moves[k]; ok {
			src = m.Sources
		} else {
			src = current[k]
		}
		var dst []int32
		for _, x := range reps {
			if !slices.Contains(src, x) {
				dst = append(dst, x)
			}
		}
		moves[k] = partitionMove{src, dst}
	}
	return moves
}

// throttledReplicas computes the topic configs Kafka's tool sets: every
// source replica of a moving partition is leader-throttled, every new
// replica follower-throttled ("partition:broker,...", sorted as strings
// as Kafka's TreeSet does).
func throttledReplicas(moves map[tp]partitionMove) (leader, follower map[string]string) {
	ls, fs := map[string][]string{}, map[string][]string{}
	for k, m := range moves {
		if _, ok := ls[k.Topic]; !ok {
			ls[k.Topic], fs[k.Topic] = []string{}, []string{}
		}
		for _, s := range m.Sources {
			ls[k.Topic] = append(ls[k.Topic], fmt.Sprintf("%d:%d", k.Partition, s))
		}
		for _, d := range m.Destinations {
			if !slices.Contains(m.Sources, d) {
				fs[k.Topic] = append(fs[k.Topic], fmt.Sprintf("%d:%d", k.Partition, d))
			}
		}
	}
	join := func(m map[string][]string) map[string]string {
		out := map[string]string{}
		for t, xs := range m {
			sort.Strings(xs)
			out[t] = strings.Join(slices.Compact(xs), ",")
		}
		return out
	}
	return join(ls), join(fs)
}

// reassigningBrokers are all sources and destinations.
func reassigningBrokers(moves map[tp]partitionMove) []int32 {
	var out []int32
	for _, m := range moves {
		out = append(out, m.Sources...)
		out = append(out, m.Destinations...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// setThrottle applies the inter-broker throttle as Kafka's tool does:
// throttled replicas on the topics, the rate on every broker involved.
func setThrottle(ctx context.Context, c *Conn, moves map[tp]partitionMove, rate int64) error {
	leader, follower := throttledReplicas(moves)
	var topics []string
	for t := range leader {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	for _, t := range topics {
		resps, err := c.Admin.AlterTopicConfigs(ctx, []kadm.AlterConfig{
			{Op: kadm.SetConfig, Name: leaderThrottledReplicas, Value: kadm.StringPtr(leader[t])},
			{Op: kadm.SetConfig, Name: followerThrottledReplica, Value: kadm.StringPtr(follower[t])},
		}, t)
		if err == nil {
			err = firstAlterErr(resps)
		}
		if err != nil {
			return fmt.Errorf("set the replication throttle on topic %s: %w", t, err)
		}
	}
	v := strconv.FormatInt(rate, 10)
	brokers := reassigningBrokers(moves)
	for _, b := range brokers {
		resps, err := c.Admin.AlterBrokerConfigs(ctx, []kadm.AlterConfig{
			{Op: kadm.SetConfig, Name: leaderThrottledRate, Value: &v},
			{Op: kadm.SetConfig, Name: followerThrottledRate, Value: &v},
		}, b)
		if err == nil {
			err = firstAlterErr(resps)
		}
		if err != nil {
			return fmt.Errorf("set the replication throttle rate on broker %d: %w", b, err)
		}
	}
	return nil
}

func firstAlterErr(rs kadm.AlterConfigsResponses) error {
	for _, r := range rs {
		if r.Err != nil {
			return brokerErr(r.Err, r.ErrMessage)
		}
	}
	return nil
}

// clearThrottles removes every throttle config from brokers and topics,
// as Kafka's verify and cancel do once no reassignment is left (they
// cannot know every broker an earlier run throttled, so all of them).
func clearThrottles(ctx context.Context, c *Conn, brokers []int32, topics []string, p *Printer) error {
	slices.Sort(brokers)
	brokers = slices.Compact(brokers)
	sort.Strings(topics)
	topics = slices.Compact(topics)
	if !p.JSONMode() {
		p.Linef("Clearing broker-level throttles on broker%s %s", pluralS(len(brokers)), joinInt32s(brokers))
	}
	for _, b := range brokers {
		var ops []kadm.AlterConfig
		for _, k := range []string{leaderThrottledRate, followerThrottledRate, alterLogDirsThrottleRate} {
			ops = append(ops, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: k})
		}
		resps, err := c.Admin.AlterBrokerConfigs(ctx, ops, b)
		if err == nil {
			err = firstAlterErr(resps)
		}
		if err != nil {
			return fmt.Errorf("clear the replication throttle on broker %d: %w", b, err)
		}
	}
	if !p.JSONMode() {
		p.Linef("Clearing topic-level throttles on topic%s %s", pluralS(len(topics)), strings.Join(topics, ","))
	}
	for _, t := range topics {
		resps, err := c.Admin.AlterTopicConfigs(ctx, []kadm.AlterConfig{
			{Op: kadm.DeleteConfig, Name: leaderThrottledReplicas},
			{Op: kadm.DeleteConfig, Name: followerThrottledReplica},
		}, t)
		if err == nil {
			err = firstAlterErr(resps)
		}
		if err != nil {
			return fmt.Errorf("clear the replication throttle on topic %s: %w", t, err)
		}
	}
	return nil
}

func pluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// listTimeoutMillis bounds how long the controller may take to answer
// ListPartitionReassignments (Kafka's default request timeout).
const listTimeoutMillis = 30000

// alterReassignments sends AlterPartitionReassignments (nil replicas
// cancel) and returns per-partition errors.
func alterReassignments(ctx context.Context, c *Conn, a assignment) (map[tp]error, error) {
	var req kadm.AlterPartitionAssignmentsReq
	for k, reps := range a {
		req.Assign(k.Topic, k.Partition, reps)
	}
	resps, err := c.Admin.AlterPartitionAssignments(ctx, req)
	if err != nil {
		return nil, err
	}
	errs := map[tp]error{}
	for k := range a {
		r, ok := resps[k.Topic][k.Partition]
		switch {
		case !ok:
			errs[k] = errors.New("the controller's answer did not mention the partition")
		case r.Err != nil:
			errs[k] = brokerErr(r.Err, r.ErrMessage)
		}
	}
	return errs, nil
}

func formatPartErrors(errs map[tp]error) string {
	keys := make([]tp, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, tpLess)
	var lines []string
	for _, k := range keys {
		lines = append(lines, fmt.Sprintf("%s: %v", k, errs[k]))
	}
	return strings.Join(lines, "\n")
}

// startReassignment is execute after parsing: the checks Kafka makes,
// the throttle, then AlterPartitionReassignments. It returns the current
// assignment of the moved partitions (for rollback).
func startReassignment(ctx context.Context, c *Conn, proposed assignment, throttle int64, additional bool, p *Printer) (assignment, error) {
	ongoing, err := listReassignments(ctx, c, nil)
	if err != nil {
		return nil, err
	}
	if !additional && len(ongoing) > 0 {
		return nil, errors.New(cannotExecuteBecauseOfExisting)
	}
	info, err := describeCluster(ctx, c)
	if err != nil {
		return nil, err
	}
	known := map[int32]bool{}
	for _, b := range info.Brokers {
		known[b.ID] = true
	}
	for _, k := range proposed.sortedKeys() {
		for _, r := range proposed[k] {
			if !known[r] {
				return nil, fmt.Errorf("Unknown broker id %d (partition %s): the cluster's brokers are %s", r, k, brokerIDs(keys(known)))
			}
		}
	}
	var topics []string
	for k := range proposed {
		topics = append(topics, k.Topic)
	}
	sort.Strings(topics)
	all, err := currentAssignment(ctx, c, slices.Compact(topics))
	if err != nil {
		return nil, err
	}
	current := assignment{}
	var missing []string
	for _, k := range proposed.sortedKeys() {
		reps, ok := all[k]
		if !ok {
			missing = append(missing, k.String())
			continue
		}
		current[k] = reps
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("Unable to find partition: %s", strings.Join(missing, ", "))
	}
	if !p.JSONMode() {
		p.Linef("Current partition replica assignment\n\n%s\n\nSave this to use as the --reassignment-json-file option during rollback",
			formatReassignmentJSON(current))
	}
	if throttle >= 0 {
		if !p.JSONMode() {
			p.Linef("Warning: You must run `fjord cluster reassign verify` periodically, until the reassignment completes, to ensure the throttle is removed.")
		}
		if err := setThrottle(ctx, c, proposedMoves(ongoing, proposed, current), throttle); err != nil {
			return nil, err
		}
		if !p.JSONMode() {
			p.Linef("The inter-broker throttle limit was set to %d B/s", throttle)
		}
	}
	errs, err := alterReassignments(ctx, c, proposed)
	if err != nil {
		return nil, fmt.Errorf("alter partition reassignments: %w", err)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("Error reassigning partition(s):\n%s", formatPartErrors(errs))
	}
	return current, nil
}

func keys(m map[int32]bool) []int32 {
	out := make([]int32, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// ReassignExecute starts the reassignment in the file.
func ReassignExecute(ctx context.Context, co *ClientOptions, o ReassignExecuteOptions, p *Printer) error {
	data, err := readFlagFile("--reassignment-json-file", o.File)
	if err != nil {
		return err
	}
	proposed, _, err := parseReassignmentJSON(data)
	if err != nil {
		return err
	}
	c, err := co.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	current, err := startReassignment(ctx, c, proposed, o.Throttle, o.Additional, p)
	if err != nil {
		return err
	}
	var names []string
	for _, k := range proposed.sortedKeys() {
		names = append(names, k.String())
	}
	if p.JSONMode() {
		var cur any
		json.Unmarshal([]byte(formatReassignmentJSON(current)), &cur)
		return p.JSON(map[string]any{"started": names, "current": cur, "throttle": o.Throttle})
	}
	p.Linef("Successfully started partition reassignment%s for %s", pluralS(len(names)), strings.Join(names, ","))
	return nil
}

// reassignState is one partition's state for verify.
type reassignState struct {
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Target    []int32 `json:"target"`
	Current   []int32 `json:"current"`
	Done      bool    `json:"done"`
}

// reassignmentStates is Kafka's findPartitionReassignmentStates: a
// partition is in progress while listed, else done (with its replicas
// as Metadata shows them). The bool is true if any reassignment at all
// is ongoing in the cluster. Brokers apply the controller's metadata a
// moment after it completes a reassignment, so a finished partition that
// does not show its target yet is read again a few times (up to ~2 s)
// before it is reported as different.
func reassignmentStates(ctx context.Context, c *Conn, target assignment) ([]reassignState, bool, error) {
	var topics []string
	for k := range target {
		topics = append(topics, k.Topic)
	}
	sort.Strings(topics)
	topics = slices.Compact(topics)
	for attempt := 0; ; attempt++ {
		ongoing, err := listReassignments(ctx, c, nil)
		if err != nil {
			return nil, false, err
		}
		cur, err := currentAssignment(ctx, c, topics)
		if err != nil && !errors.Is(err, kerr.UnknownTopicOrPartition) {
			return nil, false, err
		}
		var out []reassignState
		settled := true
		for _, k := range target.sortedKeys() {
			s := reassignState{Topic: k.Topic, Partition: k.Partition, Target: target[k], Current: nonNil(cur[k]), Done: true}
			if r, ok := ongoing[k]; ok {
				s.Current, s.Done = r.Replicas, false
			}
			settled = settled && (!s.Done || slices.Equal(s.Current, s.Target))
			out = append(out, s)
		}
		if settled || attempt >= 10 {
			return out, len(ongoing) > 0, nil
		}
		select {
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ReassignVerify reports each partition's reassignment state and, once no
// reassignment is left in the cluster, removes the throttles (unless
// preserveThrottles). Like Kafka's verify it succeeds while reassignments
// are still running, and when a finished partition has other replicas
// than the file asks for (it says so; --output json lists them as
// "mismatched").
func ReassignVerify(ctx context.Context, co *ClientOptions, file string, preserveThrottles bool, p *Printer) error {
	data, err := readFlagFile("--reassignment-json-file", file)
	if err != nil {
		return err
	}
	target, _, err := parseReassignmentJSON(data)
	if err != nil {
		return err
	}
	c, err := co.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	states, anyOngoing, err := reassignmentStates(ctx, c, target)
	if err != nil {
		return err
	}
	var mismatched []string
	if !p.JSONMode() {
		p.Linef("Status of partition reassignment:")
	}
	for _, s := range states {
		name := tp{s.Topic, s.Partition}.String()
		switch {
		case !s.Done:
			if !p.JSONMode() {
				p.Linef("Reassignment of partition %s is still in progress.", name)
			}
		case slices.Equal(s.Current, s.Target):
			if !p.JSONMode() {
				p.Linef("Reassignment of partition %s is completed.", name)
			}
		default:
			mismatched = append(mismatched, name)
			if !p.JSONMode() {
				p.Linef("There is no active reassignment of partition %s, but replica set is %s rather than %s.",
					name, joinInt32s(s.Current), joinInt32s(s.Target))
			}
		}
	}
	cleared := false
	if !anyOngoing && !preserveThrottles {
		info, err := describeCluster(ctx, c)
		if err != nil {
			return err
		}
		var brokers []int32
		for _, b := range info.Brokers {
			brokers = append(brokers, b.ID)
		}
		var topics []string
		for k, reps := range target {
			brokers = append(brokers, reps...)
			topics = append(topics, k.Topic)
		}
		if err := clearThrottles(ctx, c, brokers, topics, p); err != nil {
			return err
		}
		cleared = true
	}
	if p.JSONMode() {
		if mismatched == nil {
			mismatched = []string{}
		}
		return p.JSON(map[string]any{"partitions": states, "in_progress": anyOngoing, "mismatched": mismatched, "throttles_cleared": cleared})
	}
	return nil
}

// ReassignCancel cancels the file's reassignments that are still running
// (the replicas go back to the original set) and removes the throttles
// unless preserveThrottles.
func ReassignCancel(ctx context.Context, co *ClientOptions, file string, preserveThrottles bool, p *Printer) error {
	data, err := readFlagFile("--reassignment-json-file", file)
	if err != nil {
		return err
	}
	target, order, err := parseReassignmentJSON(data)
	if err != nil {
		return err
	}
	c, err := co.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	ongoing, err := listReassignments(ctx, c, order)
	if err != nil {
		return err
	}
	// Every listed reassignment of the file is cancelled (Kafka's tool
	// skips pure additions, which looks like an oversight).
	cancel := assignment{}
	for k := range ongoing {
		if _, ok := target[k]; ok {
			cancel[k] = nil
		}
	}
	var names []string
	for _, k := range cancel.sortedKeys() {
		names = append(names, k.String())
	}
	if len(cancel) > 0 {
		errs, err := alterReassignments(ctx, c, cancel)
		if err != nil {
			return fmt.Errorf("cancel partition reassignments: %w", err)
		}
		if len(errs) > 0 {
			return fmt.Errorf("Error cancelling partition reassignment%s for:\n%s", pluralS(len(errs)), formatPartErrors(errs))
		}
		if !p.JSONMode() {
			p.Linef("Successfully cancelled partition reassignment%s for: %s", pluralS(len(names)), strings.Join(names, ","))
		}
	} else if !p.JSONMode() {
		p.Linef("None of the specified partition reassignments are active.")
	}
	if !preserveThrottles {
		info, err := describeCluster(ctx, c)
		if err != nil {
			return err
		}
		var brokers []int32
		for _, b := range info.Brokers {
			brokers = append(brokers, b.ID)
		}
		var topics []string
		for k, reps := range target {
			brokers = append(brokers, reps...)
			topics = append(topics, k.Topic)
		}
		if err := clearThrottles(ctx, c, brokers, topics, p); err != nil {
			return err
		}
	}
	if p.JSONMode() {
		if names == nil {
			names = []string{}
		}
		return p.JSON(map[string]any{"cancelled": names})
	}
	return nil
}

// ReassignList prints the reassignments in progress.
func ReassignList(ctx context.Context, co *ClientOptions, p *Printer) error {
	c, err := co.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	ongoing, err := listReassignments(ctx, c, nil)
	if err != nil {
		return err
	}
	ks := make([]tp, 0, len(ongoing))
	for k := range ongoing {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, tpLess)
	type row struct {
		Topic     string  `json:"topic"`
		Partition int32   `json:"partition"`
		Replicas  []int32 `json:"replicas"`
		Adding    []int32 `json:"adding"`
		Removing  []int32 `json:"removing"`
	}
	rows := []row{}
	for _, k := range ks {
		r := ongoing[k]
		rows = append(rows, row{k.Topic, k.Partition, nonNil(r.Replicas), nonNil(r.AddingReplicas), nonNil(r.RemovingReplicas)})
	}
	if p.JSONMode() {
		return p.JSON(rows)
	}
	if len(rows) == 0 {
		p.Linef("No partition reassignments found.")
		return nil
	}
	p.Linef("Current partition reassignments:")
	for _, r := range rows {
		line := fmt.Sprintf("%s: replicas: %s.", tp{r.Topic, r.Partition}, joinInt32s(r.Replicas))
		if len(r.Adding) > 0 {
			line += fmt.Sprintf(" adding: %s.", joinInt32s(r.Adding))
		}
		if len(r.Removing) > 0 {
			line += fmt.Sprintf(" removing: %s.", joinInt32s(r.Removing))
		}
		p.Linef("%s", line)
	}
	return nil
}
