package bench

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// mirrorClusterTarget is one of the benchmark's two clusters: `fjord dev
// --no-connect`, a single broker (its own controller) and nothing else,
// so that only the mirror under test runs Connect workers.
type mirrorClusterTarget struct {
	name, bin      string
	addr, httpAddr string
}

func (t *mirrorClusterTarget) Name() string                          { return "the " + t.name + " cluster" }
func (t *mirrorClusterTarget) Addr() string                          { return t.addr }
func (t *mirrorClusterTarget) Ports() []string                       { return []string{t.addr, t.httpAddr} }
func (t *mirrorClusterTarget) Prepare(context.Context, string) error { return nil }
func (t *mirrorClusterTarget) Command(dir string) (*exec.Cmd, error) {
	return exec.Command(t.bin, "dev", "--no-connect",
		"--data-dir", filepath.Join(dir, "data"),
		"--kafka-addr", t.addr,
		"--http-addr", t.httpAddr), nil
}

// produceMirrorRecords writes n records of size random bytes (no key) to
// topic, record i to partition i mod p, uncompressed (as Kafka's producer
// writes by default; random bytes would not shrink anyway), and waits for
// every ack.
func produceMirrorRecords(ctx context.Context, addr, topic string, n, size, p int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(1<<20),
		kgo.MaxBufferedRecords(100_000))
	if err != nil {
		return err
	}
	defer cl.Close()
	pl := newPayload(size)
	var pc produceCounter
	const slab = 4096
	var recs []kgo.Record
	for i := range n {
		if len(recs) == 0 {
			recs = make([]kgo.Record, min(slab, n-i))
		}
		r := &recs[0]
		recs = recs[1:]
		r.Value, r.Partition = pl.value(i), int32(i%p)
		cl.Produce(ctx, r, pc.promise)
	}
	if err := cl.Flush(ctx); err != nil {
		return fmt.Errorf("produce the records: %w", err)
	}
	if err := pc.err(); err != nil {
		return fmt.Errorf("produce the records: %w", err)
	}
	if got := pc.acked.Load(); got != int64(n) {
		return fmt.Errorf("produce the records: %d of %d acknowledged", got, n)
	}
	return nil
}

// mirrorFlow is one phase's replication flow: aliases no other phase
// uses, so that its remote topic, worker group (<source>-mm2), internal
// topics (mm2-*.<source>.internal on the target,
// mm2-offset-syncs.<target>.internal on the source) are all new.
type mirrorFlow struct {
	source, target string // aliases
	topic          string // the source topic
}

func (f mirrorFlow) remoteTopic() string { return f.source + "." + f.topic }

// newMirrorFlow names the flow of a mirror's phase in a run: the remote
// topic says which mirror wrote it (fjord-r1.bench-mirror).
func newMirrorFlow(column, phase string, run int, topic string) mirrorFlow {
	src := fmt.Sprintf("%s-r%d", column, run)
	if phase == MirrorPhaseLatency {
		src += "-lat"
	}
	return mirrorFlow{source: src, target: "to-" + src, topic: topic}
}

// mirrorBaseProps are the mm2.properties keys every phase shares: the
// replication factors a one-broker cluster needs, tasks.max, heartbeats
// and checkpoints off (no consumer groups to checkpoint; the benchmark
// measures the records), no ACL sync (the clusters run without an
// authorizer, so there are no ACLs to copy), then extra.
func mirrorBaseProps(tasksMax int, extra map[string]string) map[string]string {
	p := map[string]string{
		"tasks.max":                             strconv.Itoa(tasksMax),
		"emit.heartbeats.enabled":               "false",
		"emit.checkpoints.enabled":              "false",
		"sync.topic.acls.enabled":               "false",
		"replication.factor":                    "1",
		"offset-syncs.topic.replication.factor": "1",
		"checkpoints.topic.replication.factor":  "1",
		"heartbeats.topic.replication.factor":   "1",
		"offset.storage.replication.factor":     "1",
		"config.storage.replication.factor":     "1",
		"status.storage.replication.factor":     "1",
	}
	maps.Copy(p, extra)
	return p
}

// mm2Properties is the flow's mm2.properties, the same for both mirrors.
// The shared keys may start with SOURCE., TARGET. or SOURCE->TARGET.,
// which stand for the phase's aliases (the way to set, say, the source
// consumer's properties, which MM2 takes only per cluster or per flow).
func (x *mirrorBench) mm2Properties(f mirrorFlow) map[string]string {
	p := map[string]string{}
	for k, v := range x.rep.Props {
		switch {
		case strings.HasPrefix(k, "SOURCE->TARGET."):
			k = f.source + "->" + f.target + strings.TrimPrefix(k, "SOURCE->TARGET")
		case strings.HasPrefix(k, "SOURCE."):
			k = f.source + strings.TrimPrefix(k, "SOURCE")
		case strings.HasPrefix(k, "TARGET."):
			k = f.target + strings.TrimPrefix(k, "TARGET")
		}
		p[k] = v
	}
	p["clusters"] = f.source + ", " + f.target
	p[f.source+".bootstrap.servers"] = x.cfg.SourceAddr
	p[f.target+".bootstrap.servers"] = x.cfg.TargetAddr
	p[f.source+"->"+f.target+".enabled"] = "true"
	p[f.source+"->"+f.target+".topics"] = f.topic
	return p
}

// writeMM2Properties writes props as a properties file: clusters first,
// then the rest sorted.
func writeMM2Properties(path string, props map[string]string) error {
	var b strings.Builder
	b.WriteString("# generated by fjord bench mirror\n")
	if v, ok := props["clusters"]; ok {
		fmt.Fprintf(&b, "clusters = %s\n", v)
	}
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if k != "clusters" {
			fmt.Fprintf(&b, "%s = %s\n", k, props[k])
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// startMirror writes the flow's mm2.properties and starts the mirror on
// it: `fjord mirror` or `mm2.sh run` (which exec's the JVM, so the pid is
// MirrorMaker's). It returns the process and the instant before it was
// started, where the phase's clock starts.
func (x *mirrorBench) startMirror(column string, f mirrorFlow) (*running, time.Time, error) {
	dir := filepath.Join(x.cfg.Dir, "mirrors")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, time.Time{}, err
	}
	path := filepath.Join(dir, f.source+".properties")
	if err := writeMM2Properties(path, x.mm2Properties(f)); err != nil {
		return nil, time.Time{}, err
	}
	var cmd *exec.Cmd
	switch column {
	case ColMirrorFjord:
		cmd = exec.Command(x.cfg.Bin, "mirror", path)
	case ColMirrorMM2:
		cmd = exec.Command(x.cfg.MM2Script, "run", path)
	default:
		return nil, time.Time{}, fmt.Errorf("no mirror %q", column)
	}
	start := time.Now()
	r, err := startProcess(cmd, filepath.Join(dir, f.source+".log"))
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("start %s: %w", mirrorColumnName(column), err)
	}
	return r, start, nil
}

// mirrorAlive is nil while the mirror process runs.
func mirrorAlive(column string, r *running) error {
	select {
	case <-r.done:
		return fmt.Errorf("%s exited (%v): %s", mirrorColumnName(column), r.waitErr, logTail(r.logPath))
	default:
		return nil
	}
}
