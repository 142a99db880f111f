// Package controller owns cluster metadata changes: it validates admin
// requests (create/delete topics, add partitions, alter configs, producer
// id blocks), turns them into metadata records, makes them durable, and
// publishes the resulting metadata.Image.
//
// Local is the single-node controller `fjord dev` and a one-node `fjord
// broker` run: records go to a journal file fsynced before the change is
// acknowledged. The cluster controller (raft) will satisfy the same method
// set, so the broker's handlers do not change.
//
// All mutations are serialised by one mutex (mu); it is held across the
// journal fsync on purpose: metadata changes are rare and must be applied
// in journal order. Publishing (the OnChange callback) happens under mu
// too, so subscribers see images in order; callbacks must not call back
// into the controller.
package controller

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/fjordhq/fjord/broker/metadata"
)

// Error is a Kafka error code with a message for the client.
type Error struct {
	Code    *kerr.Error
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return e.Code.Message
	}
	return e.Code.Message + ": " + e.Message
}

// Unwrap makes errors.Is(err, kerr.NotController) and the like work.
func (e *Error) Unwrap() error { return e.Code }

func errorf(code *kerr.Error, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Options configures a Local controller.
type Options struct {
	NodeID int32
	// ClusterID is used when the journal is new; an existing journal keeps its own.
	ClusterID string
	Logger    *slog.Logger
	// DefaultPartitions and DefaultReplicationFactor fill in -1 in
	// CreateTopics (num.partitions, default.replication.factor).
	DefaultPartitions        int32
	DefaultReplicationFactor int16
	// ValidateTopicConfigs checks topic config overrides, returning an
	// *Error (INVALID_CONFIG) naming every bad entry. Nil accepts all.
	ValidateTopicConfigs func(configs map[string]string) error
	// ValidateBrokerConfigs checks dynamic broker config changes.
	ValidateBrokerConfigs func(broker string, configs map[string]string) error
	// BootstrapConfigs are cluster-default broker configs written when the
	// cluster is created, as kafka-storage format does (Kafka 4 writes
	// min.insync.replicas this way).
	BootstrapConfigs map[string]string
	// OnChange is called with each newly published image, in order.
	OnChange func(old, new *metadata.Image)
}

// Local is the single-node controller.
type Local struct {
	opts  Options
	plan  *planner
	log   *slog.Logger
	mu    sync.Mutex
	j     *journal
	image atomic.Pointer[metadata.Image]
}

// compactEvery is how many journal entries accumulate before the journal
// is rewritten as a snapshot of the image.
const compactEvery = 1000

// OpenLocal opens (or creates) the controller journal in dir.
func OpenLocal(dir string, opts Options) (*Local, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.DefaultPartitions <= 0 {
		opts.DefaultPartitions = 1
	}
	if opts.DefaultReplicationFactor <= 0 {
		opts.DefaultReplicationFactor = 1
	}
	c := &Local{opts: opts, log: opts.Logger}
	c.plan = localPlanner(&c.opts)
	img := metadata.Empty()
	j, err := openJournal(dir, func(first int64, recs []metadata.Record) error {
		n, err := img.Apply(first, recs)
		if err != nil {
			return err
		}
		img = n
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.j = j
	c.image.Store(img)
	if img.ClusterID == "" {
		id := opts.ClusterID
		if id == "" {
			id = metadata.NewUUID().String()
		}
		recs := []metadata.Record{{Cluster: &metadata.ClusterRecord{ClusterID: id, ControllerID: opts.NodeID}}}
		for _, k := range slices.Sorted(maps.Keys(opts.BootstrapConfigs)) {
			v := opts.BootstrapConfigs[k]
			recs = append(recs, metadata.Record{Config: &metadata.ConfigRecord{
				Resource: metadata.ConfigResource{Type: metadata.ResourceBroker}, Key: k, Value: &v}})
		}
		if err := c.commit(recs); err != nil {
			return nil, err
		}
	} else if img.ControllerID != opts.NodeID {
		if err := c.commit([]metadata.Record{{Cluster: &metadata.ClusterRecord{ClusterID: img.ClusterID, ControllerID: opts.NodeID}}}); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Image returns the current metadata image.
func (c *Local) Image() *metadata.Image { return c.image.Load() }

// Close closes the journal.
func (c *Local) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.j.close()
}

// commit appends recs and publishes the new image. Caller holds mu, or is
// the constructor.
func (c *Local) commit(recs []metadata.Record) error {
	old := c.image.Load()
	// Apply first: a record that does not apply must never reach the journal.
	if _, err := old.Apply(0, recs); err != nil {
		return fmt.Errorf("internal: invalid metadata change: %w", err)
	}
	first, err := c.j.append(recs)
	if err != nil {
		return err
	}
	img, err := old.Apply(first, recs)
	if err != nil {
		return err
	}
	c.image.Store(img)
	if c.opts.OnChange != nil {
		c.opts.OnChange(old, img)
	}
	if c.j.entries >= compactEvery {
		if err := c.j.compact(snapshotRecords(img)); err != nil {
			c.log.Warn("metadata journal compaction failed; will retry", "err", err)
		}
	}
	return nil
}

// snapshotRecords returns records that rebuild img from empty.
func snapshotRecords(img *metadata.Image) []metadata.Record {
	recs := []metadata.Record{{Cluster: &metadata.ClusterRecord{ClusterID: img.ClusterID, ControllerID: img.ControllerID}}}
	for _, id := range img.BrokerIDs() {
		recs = append(recs, metadata.Record{Broker: &metadata.RegisterBrokerRecord{Broker: *img.Brokers[id]}})
	}
	for _, name := range img.TopicNames() {
		t := img.Topics[name]
		recs = append(recs, metadata.Record{Topic: &metadata.TopicRecord{Name: t.Name, ID: t.ID}})
		for _, p := range t.Partitions {
			recs = append(recs, metadata.Record{Partition: &metadata.PartitionRecord{TopicID: t.ID, Partition: *p}})
		}
	}
	for _, res := range slices.SortedFunc(maps.Keys(img.Configs), func(a, b metadata.ConfigResource) int {
		if a.Type != b.Type {
			return int(a.Type) - int(b.Type)
		}
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	}) {
		for _, k := range slices.Sorted(maps.Keys(img.Configs[res])) {
			v := img.Configs[res][k]
			recs = append(recs, metadata.Record{Config: &metadata.ConfigRecord{Resource: res, Key: k, Value: &v}})
		}
	}
	recs = append(recs, img.SecurityRecords()...)
	recs = append(recs, img.QuotaRecords()...)
	if img.NextProducerID > 0 {
		recs = append(recs, metadata.Record{ProducerIDs: &metadata.ProducerIDsRecord{NextProducerID: img.NextProducerID}})
	}
	return recs
}

// RegisterBroker records this broker's endpoint (a no-op when unchanged).
func (c *Local) RegisterBroker(b metadata.Broker) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.image.Load().Brokers[b.ID]; old != nil && old.Equal(&b) {
		return nil
	}
	return c.commit([]metadata.Record{{Broker: &metadata.RegisterBrokerRecord{Broker: b}}})
}

// CreateTopic is one topic to create.
type CreateTopic struct {
	Name              string
	Partitions        int32 // -1: num.partitions
	ReplicationFactor int16 // -1: default.replication.factor
	// Assignment, if set, gives each partition's replicas explicitly
	// (then Partitions and ReplicationFactor must be -1).
	Assignment [][]int32
	Configs    map[string]string
}

// TopicResult is the outcome for one topic.
type TopicResult struct {
	Topic *metadata.Topic // the created (or, validate-only, would-be) topic
	Err   *Error
}

// planner turns admin requests into metadata records against an image,
// without writing anything: Local commits the records to its journal,
// Quorum proposes them through raft. Both therefore validate alike and
// answer with the same errors and messages.
type planner struct {
	opts *Options
	// assignable returns the broker ids an explicit replica assignment
	// may name.
	assignable func(img *metadata.Image) []int32
	// place picks replicas for n new partitions numbered from
	// firstPartition; INVALID_REPLICATION_FACTOR when rf cannot be met.
	place func(img *metadata.Image, n, rf, firstPartition int) ([][]int32, *Error)
	// activeISR starts a new partition's ISR with only the active
	// replicas, led by the first (Kafka's controller does; a manual
	// assignment may name a fenced broker). Otherwise ISR = replicas.
	activeISR bool
}

// newPartition builds partition index with the given replicas.
func (pl *planner) newPartition(img *metadata.Image, index int32, replicas []int32) (metadata.Partition, *Error) {
	isr := slices.Clone(replicas)
	if pl.activeISR {
		isr = slices.DeleteFunc(isr, func(id int32) bool { return !img.Brokers[id].Active() })
		if len(isr) == 0 {
			return metadata.Partition{}, errorf(kerr.InvalidReplicaAssignment, "All brokers specified in the manual partition assignment for partition %d are fenced or in controlled shutdown.", index)
		}
	}
	return metadata.Partition{Index: index, Replicas: replicas, ISR: isr, Leader: isr[0]}, nil
}

// localPlanner places on unfenced brokers with Kafka's rack-unaware
// round-robin, which is all a single node needs.
func localPlanner(opts *Options) *planner {
	return &planner{
		opts:       opts,
		assignable: func(img *metadata.Image) []int32 { return img.LiveBrokerIDs() },
		place: func(img *metadata.Image, n, rf, firstPartition int) ([][]int32, *Error) {
			brokers := img.LiveBrokerIDs()
			if rf > len(brokers) {
				return nil, errInvalidRF(rf, len(brokers))
			}
			return assignReplicas(brokers, n, rf, firstPartition, -1), nil
		},
	}
}

func errInvalidRF(rf, brokers int) *Error {
	return errorf(kerr.InvalidReplicationFactor, "Unable to replicate the partition %d time(s): The target replication factor of %d cannot be reached because only %d broker(s) are registered or some brokers have all their log directories cordoned.", rf, rf, brokers)
}

// CreateTopics validates and creates topics; results are in request order.
// With validateOnly nothing is written.
func (c *Local) CreateTopics(ctx context.Context, reqs []CreateTopic, validateOnly bool) []TopicResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	results, recs := c.plan.createTopics(c.image.Load(), reqs)
	if validateOnly || len(recs) == 0 {
		return results
	}
	if err := c.commit(recs); err != nil {
		failTopics(results, err)
	}
	return results
}

// failTopics turns every successful result into the commit error.
func failTopics(results []TopicResult, err error) {
	for i := range results {
		if results[i].Err == nil {
			results[i] = TopicResult{Err: asError(err, kerr.UnknownServerError)}
		}
	}
}

func (pl *planner) createTopics(img *metadata.Image, reqs []CreateTopic) ([]TopicResult, []metadata.Record) {
	results := make([]TopicResult, len(reqs))
	var recs []metadata.Record
	pending := map[string]bool{}
	for i, r := range reqs {
		t, topicRecs, err := pl.planTopic(img, r, pending)
		if err != nil {
			results[i].Err = err
			continue
		}
		pending[r.Name] = true
		results[i].Topic = t
		recs = append(recs, topicRecs...)
	}
	return results, recs
}

func (pl *planner) planTopic(img *metadata.Image, r CreateTopic, pending map[string]bool) (*metadata.Topic, []metadata.Record, *Error) {
	if err := ValidateTopicName(r.Name); err != nil {
		return nil, nil, err
	}
	if img.Topics[r.Name] != nil || pending[r.Name] {
		return nil, nil, errorf(kerr.TopicAlreadyExists, "Topic '%s' already exists.", r.Name)
	}
	for existing := range img.Topics {
		if existing != r.Name && collides(existing, r.Name) {
			return nil, nil, errorf(kerr.InvalidTopicException, "Topic '%s' collides with existing topic: %s", r.Name, existing)
		}
	}
	var assignment [][]int32
	if len(r.Assignment) > 0 {
		if r.Partitions != -1 || r.ReplicationFactor != -1 {
			return nil, nil, errorf(kerr.InvalidRequest, "Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.")
		}
		var err *Error
		if assignment, err = checkAssignment(r.Assignment, 0, pl.assignable(img)); err != nil {
			return nil, nil, err
		}
	} else {
		n, rf := r.Partitions, r.ReplicationFactor
		if n == -1 {
			n = pl.opts.DefaultPartitions
		}
		if rf == -1 {
			rf = pl.opts.DefaultReplicationFactor
		}
		if n <= 0 {
			return nil, nil, errorf(kerr.InvalidPartitions, "Number of partitions was set to an invalid non-positive value.")
		}
		if rf <= 0 {
			return nil, nil, errorf(kerr.InvalidReplicationFactor, "Replication factor must be larger than 0, or -1 to use the default value.")
		}
		var err *Error
		if assignment, err = pl.place(img, int(n), int(rf), 0); err != nil {
			return nil, nil, err
		}
	}
	if pl.opts.ValidateTopicConfigs != nil {
		if err := pl.opts.ValidateTopicConfigs(r.Configs); err != nil {
			return nil, nil, asError(err, kerr.InvalidConfig)
		}
	}
	t := &metadata.Topic{Name: r.Name, ID: metadata.NewUUID()}
	recs := []metadata.Record{{Topic: &metadata.TopicRecord{Name: t.Name, ID: t.ID}}}
	for i, replicas := range assignment {
		p, err := pl.newPartition(img, int32(i), replicas)
		if err != nil {
			return nil, nil, err
		}
		t.Partitions = append(t.Partitions, &p)
		recs = append(recs, metadata.Record{Partition: &metadata.PartitionRecord{TopicID: t.ID, Partition: p}})
	}
	for _, k := range slices.Sorted(maps.Keys(r.Configs)) {
		v := r.Configs[k]
		recs = append(recs, metadata.Record{Config: &metadata.ConfigRecord{
			Resource: metadata.ConfigResource{Type: metadata.ResourceTopic, Name: r.Name}, Key: k, Value: &v}})
	}
	return t, recs, nil
}

func asError(err error, code *kerr.Error) *Error {
	if e, ok := err.(*Error); ok {
		return e
	}
	return &Error{Code: code, Message: err.Error()}
}

// checkAssignment validates explicit replica assignments for partitions
// starting at firstPartition.
func checkAssignment(a [][]int32, firstPartition int, brokers []int32) ([][]int32, *Error) {
	rf := len(a[0])
	out := make([][]int32, len(a))
	for i, replicas := range a {
		if len(replicas) == 0 {
			return nil, errorf(kerr.InvalidReplicaAssignment, "The manual partition assignment includes an empty replica list.")
		}
		if len(replicas) != rf {
			return nil, errorf(kerr.InvalidReplicaAssignment, "The manual partition assignment includes a partition with %d replica(s), but this is not consistent with previous partitions, which have %d replica(s).", len(replicas), rf)
		}
		if err := checkReplicaList(replicas, brokers); err != nil {
			return nil, err
		}
		_ = firstPartition + i
		out[i] = slices.Clone(replicas)
	}
	return out, nil
}

// checkReplicaList checks one partition's manual assignment: no repeats,
// only known brokers (Kafka's validateManualPartitionAssignment).
func checkReplicaList(replicas, brokers []int32) *Error {
	seen := map[int32]bool{}
	for _, b := range replicas {
		if seen[b] {
			return errorf(kerr.InvalidReplicaAssignment, "The manual partition assignment includes the broker %d more than once.", b)
		}
		seen[b] = true
		if !slices.Contains(brokers, b) {
			return errorf(kerr.InvalidReplicaAssignment, "The manual partition assignment includes broker %d, but no such broker is registered.", b)
		}
	}
	return nil
}

// assignReplicas places n partitions of rf replicas on brokers the way
// Kafka's rack-unaware placement does: leaders round-robin from a random
// start, followers shifted by a random step. startIndex/shift of -1 pick
// randomly.
func assignReplicas(brokers []int32, n, rf, firstPartition, startIndex int) [][]int32 {
	nb := len(brokers)
	if startIndex < 0 {
		startIndex = rand.IntN(nb)
	}
	shift := rand.IntN(nb)
	out := make([][]int32, n)
	current := firstPartition
	for i := 0; i < n; i++ {
		if current > 0 && current%nb == 0 {
			shift++
		}
		first := (current + startIndex) % nb
		replicas := []int32{brokers[first]}
		for j := 0; j < rf-1; j++ {
			s := 1 + (shift+j)%(nb-1)
			replicas = append(replicas, brokers[(first+s)%nb])
		}
		out[i] = replicas
		current++
	}
	return out
}

// DeleteTopics deletes topics by name; results are nil errors on success.
func (c *Local) DeleteTopics(ctx context.Context, names []string) []*Error {
	c.mu.Lock()
	defer c.mu.Unlock()
	errs, recs := planDeleteTopics(c.image.Load(), names)
	if len(recs) == 0 {
		return errs
	}
	if err := c.commit(recs); err != nil {
		failAll(errs, err)
	}
	return errs
}

// failAll turns every nil (successful) entry into the commit error.
func failAll(errs []*Error, err error) {
	for i := range errs {
		if errs[i] == nil {
			errs[i] = asError(err, kerr.UnknownServerError)
		}
	}
}

func planDeleteTopics(img *metadata.Image, names []string) ([]*Error, []metadata.Record) {
	errs := make([]*Error, len(names))
	var recs []metadata.Record
	seen := map[string]bool{}
	for i, name := range names {
		t := img.Topics[name]
		switch {
		case t == nil || seen[name]:
			errs[i] = errorf(kerr.UnknownTopicOrPartition, "This server does not host this topic-partition.")
		default:
			seen[name] = true
			recs = append(recs, metadata.Record{RemoveTopic: &metadata.RemoveTopicRecord{ID: t.ID}})
		}
	}
	return errs, recs
}

// CreatePartitions grows a topic to count partitions.
func (c *Local) CreatePartitions(ctx context.Context, topic string, count int32, assignment [][]int32, validateOnly bool) *Error {
	c.mu.Lock()
	defer c.mu.Unlock()
	recs, err := c.plan.createPartitions(c.image.Load(), topic, count, assignment)
	if err != nil || validateOnly {
		return err
	}
	if err := c.commit(recs); err != nil {
		return asError(err, kerr.UnknownServerError)
	}
	return nil
}

func (pl *planner) createPartitions(img *metadata.Image, topic string, count int32, assignment [][]int32) ([]metadata.Record, *Error) {
	t := img.Topics[topic]
	if t == nil {
		return nil, errorf(kerr.UnknownTopicOrPartition, "The topic '%s' does not exist.", topic)
	}
	have := int32(len(t.Partitions))
	switch {
	case count < have:
		return nil, errorf(kerr.InvalidPartitions, "Topic currently has %d partitions, which is higher than the requested %d.", have, count)
	case count == have:
		return nil, errorf(kerr.InvalidPartitions, "Topic already has %d partitions.", have)
	}
	add := int(count - have)
	var replicas [][]int32
	if len(assignment) > 0 {
		if len(assignment) != add {
			return nil, errorf(kerr.InvalidReplicaAssignment, "Attempted to add %d additional partition(s), but only %d assignment(s) were specified.", add, len(assignment))
		}
		var err *Error
		if replicas, err = checkAssignment(assignment, int(have), pl.assignable(img)); err != nil {
			return nil, err
		}
	} else {
		// The replication factor is the first partition's, less any
		// replicas a reassignment is adding.
		p0 := t.Partitions[0]
		rf := len(p0.Replicas) - len(p0.AddingReplicas)
		var err *Error
		if replicas, err = pl.place(img, add, rf, int(have)); err != nil {
			return nil, err
		}
	}
	var recs []metadata.Record
	for i, r := range replicas {
		p, err := pl.newPartition(img, have+int32(i), r)
		if err != nil {
			return nil, err
		}
		recs = append(recs, metadata.Record{Partition: &metadata.PartitionRecord{TopicID: t.ID, Partition: p}})
	}
	return recs, nil
}

// AlterConfigs changes one resource's configs: mutate gets the current
// dynamic configs (do not modify) and returns the complete new set, or an
// error (*Error) that rejects the change. It runs under the controller's
// lock, so concurrent alters never lose each other's changes.
func (c *Local) AlterConfigs(ctx context.Context, res metadata.ConfigResource, mutate func(current map[string]string) (map[string]string, error), validateOnly bool) *Error {
	c.mu.Lock()
	defer c.mu.Unlock()
	recs, err := c.plan.alterConfigs(c.image.Load(), res, mutate)
	if err != nil || validateOnly || len(recs) == 0 {
		return err
	}
	if err := c.commit(recs); err != nil {
		return asError(err, kerr.UnknownServerError)
	}
	return nil
}

func (pl *planner) alterConfigs(img *metadata.Image, res metadata.ConfigResource, mutate func(current map[string]string) (map[string]string, error)) ([]metadata.Record, *Error) {
	var current map[string]string
	switch res.Type {
	case metadata.ResourceTopic:
		if img.Topics[res.Name] == nil {
			return nil, errorf(kerr.UnknownTopicOrPartition, "The topic '%s' does not exist.", res.Name)
		}
		current = img.TopicConfigs(res.Name)
	case metadata.ResourceBroker:
		if res.Name != "" {
			id, err := strconv.ParseInt(res.Name, 10, 32)
			if err != nil || img.Brokers[int32(id)] == nil {
				return nil, errorf(kerr.InvalidRequest, "Invalid broker id %s", res.Name)
			}
		}
		current = img.BrokerConfigs(res.Name)
	default:
		return nil, errorf(kerr.InvalidRequest, "Unsupported resource type %d", res.Type)
	}
	next, err := mutate(current)
	if err != nil {
		return nil, asError(err, kerr.InvalidConfig)
	}
	switch res.Type {
	case metadata.ResourceTopic:
		if pl.opts.ValidateTopicConfigs != nil {
			err = pl.opts.ValidateTopicConfigs(next)
		}
	case metadata.ResourceBroker:
		if pl.opts.ValidateBrokerConfigs != nil {
			err = pl.opts.ValidateBrokerConfigs(res.Name, next)
		}
	}
	if err != nil {
		return nil, asError(err, kerr.InvalidConfig)
	}
	var recs []metadata.Record
	for _, k := range slices.Sorted(maps.Keys(current)) {
		if _, ok := next[k]; !ok {
			recs = append(recs, metadata.Record{Config: &metadata.ConfigRecord{Resource: res, Key: k}})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(next)) {
		if old, ok := current[k]; !ok || old != next[k] {
			v := next[k]
			recs = append(recs, metadata.Record{Config: &metadata.ConfigRecord{Resource: res, Key: k, Value: &v}})
		}
	}
	return recs, nil
}

// AllocateProducerIDs reserves a block of n producer ids and returns the first.
func (c *Local) AllocateProducerIDs(ctx context.Context, n int64) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	first := c.image.Load().NextProducerID
	if err := c.commit([]metadata.Record{{ProducerIDs: &metadata.ProducerIDsRecord{NextProducerID: first + n}}}); err != nil {
		return 0, err
	}
	return first, nil
}
