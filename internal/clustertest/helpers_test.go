// Package clustertest checks the broker cluster's guarantees under real
// faults: real `fjord broker` processes killed with SIGKILL, isolated by
// fault proxies, restarted, and in-process clusters where a clean stop is
// enough. Every scenario drives the cluster with franz-go clients and
// checks what Kafka promises: an acknowledged record is never lost or
// duplicated, keeps its place in its partition, and every replica ends
// with the same bytes.
//
// The default run is bounded (about three minutes on a 2-core machine);
// FJORD_FAILOVER_ROUNDS and FJORD_FAULT_ROUNDS make the failover and
// randomized tests run longer, FJORD_FAULT_SEED replays a randomized run;
// FJORD_CLUSTER_LOGS=1 prints the nodes' output of a passing failover run.
//
// Known issue worked around: `fjord broker` installs its SIGTERM handler
// only after broker.New returns (cmd/fjord/serve.go), and in a cluster New
// waits until the controller unfences the broker, so a SIGTERM during
// start-up kills the process without a clean shutdown. TestRandomFaults
// therefore sends SIGTERM only to nodes that serve.
package clustertest

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/internal/testkit"
)

// clientOpts are the franz-go settings every test client shares. The
// metadata min age is cut from franz-go's 5 s to 250 ms (Kafka's Java
// client refreshes after 100 ms): with the default a client that lost
// its leader waits up to 5 s before it even asks who leads now, and the
// failover times would measure the client, not the cluster.
func clientOpts(extra ...kgo.Opt) []kgo.Opt {
	return append([]kgo.Opt{
		kgo.MetadataMinAge(250 * time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }),
	}, extra...)
}

// envInt reads a positive integer from the environment, def if unset.
func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// --- the ledger of acknowledged records ---

// ack is one acknowledged record: where the broker said it put it.
type ack struct {
	key    string
	offset int64
}

// ledger records every acknowledged record of a topic, per producer and
// partition in the order the acknowledgements arrived (franz-go calls a
// partition's promises in order), and every key ever attempted.
type ledger struct {
	mu        sync.Mutex
	acks      map[string]map[int32][]ack // producer → partition → acks
	attempted map[string]bool
	failed    int
	lastErr   error
}

func newLedger() *ledger {
	return &ledger{acks: map[string]map[int32][]ack{}, attempted: map[string]bool{}}
}

func (l *ledger) attempt(key string) {
	l.mu.Lock()
	l.attempted[key] = true
	l.mu.Unlock()
}

func (l *ledger) record(producer string, r *kgo.Record, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.failed++
		l.lastErr = err
		return
	}
	m := l.acks[producer]
	if m == nil {
		m = map[int32][]ack{}
		l.acks[producer] = m
	}
	m[r.Partition] = append(m[r.Partition], ack{key: string(r.Key), offset: r.Offset})
}

// acked is the number of acknowledged records, all producers.
func (l *ledger) acked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.acks {
		for _, a := range m {
			n += len(a)
		}
	}
	return n
}

// ackedOn is the number of acknowledged records of one partition.
func (l *ledger) ackedOn(partition int32) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.acks {
		n += len(m[partition])
	}
	return n
}

func (l *ledger) stats() (acked, failed int, lastErr error) {
	n := l.acked()
	l.mu.Lock()
	defer l.mu.Unlock()
	return n, l.failed, l.lastErr
}

// --- load ---

// loadProducer writes a counted sequence (key "<name>-<seq>") with an
// idempotent acks=all franz-go producer, round-robin over the partitions,
// at up to rate records a second with at most window records in flight,
// until stopped. Every acknowledgement goes into the ledger.
type loadProducer struct {
	t          *testing.T
	cl         *kgo.Client
	name       string
	topic      string
	partitions int32
	l          *ledger
	window     chan struct{}
	paused     atomic.Bool
	stop, done chan struct{}
	seq        atomic.Int64
}

func startLoad(t *testing.T, bootstrap, topic string, partitions int32, name string, l *ledger, rate int) *loadProducer {
	t.Helper()
	cl := testkit.Client(t, bootstrap, clientOpts(
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.DefaultProduceTopic(topic),
	)...)
	p := &loadProducer{
		t: t, cl: cl, name: name, topic: topic, partitions: partitions, l: l,
		window: make(chan struct{}, 100), stop: make(chan struct{}), done: make(chan struct{}),
	}
	go p.run(max(1, rate))
	t.Cleanup(func() { p.Stop() })
	return p
}

func (p *loadProducer) run(rate int) {
	defer close(p.done)
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-tick.C:
		}
		if p.paused.Load() {
			continue
		}
		select {
		case <-p.stop:
			return
		case p.window <- struct{}{}:
		}
		seq := p.seq.Add(1) - 1
		key := fmt.Sprintf("%s-%d", p.name, seq)
		p.l.attempt(key)
		r := &kgo.Record{Key: []byte(key), Value: bytes.Repeat([]byte{byte(seq)}, 100), Partition: int32(seq % int64(p.partitions))}
		// Background context: the promise must report what the broker
		// said, not that the test stopped waiting.
		p.cl.Produce(context.Background(), r, func(r *kgo.Record, err error) {
			p.l.record(p.name, r, err)
			<-p.window
		})
	}
}

// Pause stops new writes and waits (up to wait) until every record in
// flight is acknowledged or failed.
func (p *loadProducer) Pause(wait time.Duration) {
	p.t.Helper()
	p.paused.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := p.cl.Flush(ctx); err != nil {
		p.t.Fatalf("producer %s: records still in flight after %v: %v", p.name, wait, err)
	}
}

func (p *loadProducer) Resume() { p.paused.Store(false) }

// Stop ends the load and waits (bounded) for the records in flight.
func (p *loadProducer) Stop() {
	select {
	case <-p.stop:
		return
	default:
	}
	close(p.stop)
	<-p.done
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := p.cl.Flush(ctx); err != nil {
		p.t.Errorf("producer %s: records still in flight 60 s after stop: %v", p.name, err)
	}
}

// --- reading and checking ---

// logRecord is one record as a consumer reads it.
type logRecord struct {
	key    string
	offset int64
}

// readAll reads every partition of topic from the start to its high
// watermark (asked once, at the start) through a franz-go consumer.
func readAll(t *testing.T, bootstrap, topic string, partitions int32) map[int32][]logRecord {
	t.Helper()
	ctx := testkit.Context(t, 90*time.Second)
	adm := kadm.NewClient(testkit.Client(t, bootstrap, clientOpts()...))
	var ends kadm.ListedOffsets
	var err error
	// The end offsets come from each partition's leader; right after a
	// fault a leader may be moving, so ask until every partition answers.
	testkit.CheckFor(t, 30*time.Second, 200*time.Millisecond, func() error {
		ends, err = adm.ListEndOffsets(ctx, topic)
		if err == nil {
			err = ends.Error()
		}
		return err
	})
	want := map[int32]int64{}
	offsets := map[int32]kgo.Offset{}
	for p := range partitions {
		o, ok := ends.Lookup(topic, p)
		if !ok {
			t.Fatalf("no end offset for %s-%d", topic, p)
		}
		want[p] = o.Offset
		offsets[p] = kgo.NewOffset().At(0)
	}
	out := map[int32][]logRecord{}
	cl := testkit.Client(t, bootstrap, clientOpts(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}))...)
	defer cl.Close()
	done := func() bool {
		for p, end := range want {
			if n := len(out[p]); end > 0 && (n == 0 || out[p][n-1].offset < end-1) {
				return false
			}
		}
		return true
	}
	for !done() {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s: context done before the high watermarks %v were reached (read %d/%d/%d…)", topic, want, len(out[0]), len(out[1]), len(out[2]))
		}
		fs.EachError(func(_ string, p int32, err error) {
			t.Logf("fetch %s-%d: %v (retrying)", topic, p, err)
		})
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset < want[r.Partition] {
				out[r.Partition] = append(out[r.Partition], logRecord{string(r.Key), r.Offset})
			}
		})
	}
	return out
}

// checkLedger checks the log against the ledger: every acknowledged record
// is in the log exactly once, at the offset its acknowledgement named, so
// per-partition order of acknowledgement is order in the log; no key
// appears twice (the idempotent producer never duplicates, even the
// records it never saw acknowledged); nothing unattempted appears. It
// returns the number of acknowledged records checked.
func checkLedger(t *testing.T, l *ledger, log map[int32][]logRecord) int {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	where := map[string]logRecord{}
	for p, recs := range log {
		for _, r := range recs {
			if prev, dup := where[r.key]; dup {
				t.Errorf("key %s twice: partition %d offset %d and offset %d", r.key, p, prev.offset, r.offset)
			}
			where[r.key] = r
			if !l.attempted[r.key] {
				t.Errorf("key %s at %d-%d was never produced", r.key, p, r.offset)
			}
		}
	}
	n := 0
	for producer, parts := range l.acks {
		for p, acks := range parts {
			last := int64(-1)
			for _, a := range acks {
				n++
				r, ok := where[a.key]
				switch {
				case !ok:
					t.Errorf("acknowledged %s (partition %d offset %d) is missing", a.key, p, a.offset)
				case r.offset != a.offset:
					t.Errorf("acknowledged %s at partition %d offset %d is at offset %d", a.key, p, a.offset, r.offset)
				}
				if a.offset <= last {
					t.Errorf("producer %s partition %d: acknowledgement of %s at %d after one at %d", producer, p, a.key, a.offset, last)
				}
				last = a.offset
			}
		}
	}
	return n
}

// --- replicas ---

// isrState is a partition's leader and ISR as Metadata reports them.
type isrState struct {
	leader   int32
	replicas []int32
	isr      []int32
}

// partitionStates asks addr (one broker, raw request) for topic's
// partitions: what that broker's metadata image says now.
func partitionStates(addr, topic string) (map[int32]isrState, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := testkit.RawRequest(addr, req, 2*time.Second)
	if err != nil {
		return nil, err
	}
	out := map[int32]isrState{}
	for _, mt := range resp.(*kmsg.MetadataResponse).Topics {
		if err := kerr.ErrorForCode(mt.ErrorCode); err != nil {
			return nil, err
		}
		for _, p := range mt.Partitions {
			out[p.Partition] = isrState{leader: p.Leader, replicas: p.Replicas, isr: p.ISR}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no partitions", topic)
	}
	return out, nil
}

// waitFullISR waits until every broker at addrs reports every partition
// of the topics led and with all its replicas in sync: the state before
// the next fault may be injected without going below min.insync.replicas.
func waitFullISR(t *testing.T, addrs []string, wait time.Duration, topics ...string) {
	t.Helper()
	testkit.CheckFor(t, wait, 100*time.Millisecond, func() error {
		for _, addr := range addrs {
			for _, topic := range topics {
				st, err := partitionStates(addr, topic)
				if err != nil {
					return fmt.Errorf("%s: %w", addr, err)
				}
				for p, s := range st {
					if s.leader < 0 || len(s.isr) != len(s.replicas) {
						return fmt.Errorf("%s sees %s-%d leader %d replicas %v isr %v", addr, topic, p, s.leader, s.replicas, s.isr)
					}
				}
			}
		}
		return nil
	})
}

// sameReplicaLogs waits until every replica of each partition holds the
// same segment bytes (dirs: node id → log dir) and fails after wait.
// Replication copies batches verbatim (offsets, leader epochs, CRCs), so
// once the writes stop every replica's log must be byte-identical; the
// concatenation of the .log files is compared, so replicas may roll
// segments at different offsets. It returns the bytes per partition.
func sameReplicaLogs(t *testing.T, dirs map[int32]string, topic string, partitions int32, rf int, wait time.Duration) map[int32]int {
	t.Helper()
	sizes := map[int32]int{}
	for p := range partitions {
		name := fmt.Sprintf("%s-%d", topic, p)
		testkit.CheckFor(t, wait, 200*time.Millisecond, func() error {
			var ref []byte
			var refID int32
			found := 0
			for _, id := range slices.Sorted(maps.Keys(dirs)) {
				dir := filepath.Join(dirs[id], name)
				if _, err := os.Stat(dir); err != nil {
					continue
				}
				found++
				data, err := readSegments(dir)
				if err != nil {
					return fmt.Errorf("node %d: %w", id, err)
				}
				if err := checkBatches(data); err != nil {
					return fmt.Errorf("node %d %s: %w", id, name, err)
				}
				if ref == nil {
					ref, refID = data, id
					continue
				}
				if !bytes.Equal(ref, data) {
					return fmt.Errorf("%s: node %d has %d bytes (%s), node %d has %d (%s)", name, id, len(data), describeLog(data), refID, len(ref), describeLog(ref))
				}
			}
			if found != rf {
				return fmt.Errorf("%s: %d replicas on disk, want %d", name, found, rf)
			}
			sizes[p] = len(ref)
			return nil
		})
	}
	return sizes
}

// readSegments concatenates a partition dir's .log files in name order
// (20-digit base offsets, so name order is offset order).
func readSegments(dir string) ([]byte, error) {
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil || len(logs) == 0 {
		return nil, fmt.Errorf("no segments in %s", dir)
	}
	slices.Sort(logs)
	var all []byte
	for _, f := range logs {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		all = append(all, b...)
	}
	return all, nil
}

// batchHeader is the part of a v2 record batch header the checks use.
type batchHeader struct {
	baseOffset, lastOffset int64
	epoch                  int32
	size                   int
}

// walkBatches splits a log into batch headers; it fails on a torn tail or
// a length that does not fit.
func walkBatches(data []byte) ([]batchHeader, error) {
	var out []batchHeader
	for pos := 0; pos < len(data); {
		if len(data)-pos < 61 {
			return out, fmt.Errorf("%d trailing bytes at position %d", len(data)-pos, pos)
		}
		base := int64(binary.BigEndian.Uint64(data[pos:]))
		length := int(int32(binary.BigEndian.Uint32(data[pos+8:])))
		if length < 49 || pos+12+length > len(data) {
			return out, fmt.Errorf("batch at position %d (offset %d) has length %d, %d bytes left", pos, base, length, len(data)-pos-12)
		}
		epoch := int32(binary.BigEndian.Uint32(data[pos+12:]))
		delta := int64(int32(binary.BigEndian.Uint32(data[pos+23:])))
		out = append(out, batchHeader{baseOffset: base, lastOffset: base + delta, epoch: epoch, size: 12 + length})
		pos += 12 + length
	}
	return out, nil
}

// checkBatches checks a replica log is whole batches with strictly
// increasing offsets and non-decreasing leader epochs.
func checkBatches(data []byte) error {
	bs, err := walkBatches(data)
	if err != nil {
		return err
	}
	for i := 1; i < len(bs); i++ {
		if bs[i].baseOffset <= bs[i-1].lastOffset {
			return fmt.Errorf("batch at offset %d follows one ending at %d", bs[i].baseOffset, bs[i-1].lastOffset)
		}
		if bs[i].epoch < bs[i-1].epoch {
			return fmt.Errorf("batch at offset %d has leader epoch %d after epoch %d", bs[i].baseOffset, bs[i].epoch, bs[i-1].epoch)
		}
	}
	return nil
}

// describeLog summarises a log for failure messages: batches, last
// offset, and the offsets where the leader epoch changes.
func describeLog(data []byte) string {
	bs, err := walkBatches(data)
	if len(bs) == 0 {
		return fmt.Sprintf("no batches, %v", err)
	}
	s := fmt.Sprintf("%d batches to offset %d, epochs", len(bs), bs[len(bs)-1].lastOffset)
	for i, b := range bs {
		if i == 0 || b.epoch != bs[i-1].epoch {
			s += fmt.Sprintf(" %d@%d", b.epoch, b.baseOffset)
		}
	}
	if err != nil {
		s += fmt.Sprintf(" (%v)", err)
	}
	return s
}

// --- timings ---

// durations collects measured times and reports p50 and max.
type durations []time.Duration

func (d durations) summary() string {
	if len(d) == 0 {
		return "none"
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return fmt.Sprintf("n=%d p50=%v max=%v", len(s), s[(len(s)-1)/2].Round(time.Millisecond), s[len(s)-1].Round(time.Millisecond))
}

// probeWrite writes one acks=all record to partition with cl (a manual
// partitioner client) and returns when it is acknowledged, recording the
// ack in the ledger under producer "probe". The client retries internally
// (franz-go retries retriable errors until the context ends).
func probeWrite(ctx context.Context, cl *kgo.Client, l *ledger, topic string, partition int32, key string) error {
	l.attempt(key)
	r := &kgo.Record{Topic: topic, Partition: partition, Key: []byte(key), Value: []byte("probe")}
	// The idempotent producer does not give up a record already sent
	// when the context ends (that could reorder its sequence), so
	// ProduceSync may outlive ctx: wait for it only a little longer.
	type result struct {
		rec *kgo.Record
		err error
	}
	done := make(chan result, 1)
	go func() {
		rec, err := cl.ProduceSync(ctx, r).First()
		done <- result{rec, err}
	}()
	var res result
	select {
	case res = <-done:
	case <-ctx.Done():
		select {
		case res = <-done:
		case <-time.After(5 * time.Second):
			// Not recorded as failed: the broker may still acknowledge it,
			// and the ledger only counts acknowledged records.
			return fmt.Errorf("write of %s still unanswered 5 s after the context ended: %w", key, ctx.Err())
		}
	}
	if res.rec == nil {
		res.rec = r
	}
	l.record("probe", res.rec, res.err)
	return res.err
}

// dumpState logs what every running broker node says about topic's
// partitions, for failure messages.
func dumpState(t *testing.T, c *testkit.ProcessCluster, topics ...string) {
	t.Helper()
	for _, n := range c.Nodes() {
		if !n.IsBroker() || !n.Running() {
			continue
		}
		for _, topic := range topics {
			st, err := partitionStates(n.ClientAddr, topic)
			if err != nil {
				t.Logf("node %d: %s: %v", n.ID, topic, err)
				continue
			}
			for _, p := range slices.Sorted(maps.Keys(st)) {
				t.Logf("node %d sees %s-%d: leader %d replicas %v isr %v", n.ID, topic, p, st[p].leader, st[p].replicas, st[p].isr)
			}
		}
	}
}

// logOutputs logs every node's process output when FJORD_CLUSTER_LOGS is
// set (the harness prints it only when a test fails): for looking into
// timings of a passing run.
func logOutputs(t *testing.T, c *testkit.ProcessCluster) {
	t.Helper()
	if os.Getenv("FJORD_CLUSTER_LOGS") == "" {
		return
	}
	for _, n := range c.Nodes() {
		t.Logf("node %d output:\n%s", n.ID, n.Process().Output())
	}
}
