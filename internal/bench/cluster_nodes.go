package bench

import (
	"context"
	cryptorand "crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A benchCluster is N `fjord broker` processes in combined roles
// (process.roles=broker,controller), node id i on 127.0.0.(i+1) — the
// layout internal/testkit.StartProcessCluster uses, without its fault
// proxies (the benchmark measures the plain path). Every node binds the
// same three ports on its own address: client (PLAINTEXT), controller,
// and HTTP (/debug/pprof for profiling a slow run). A one-node cluster
// is the RF 1 baseline, so that both sides run the same code (raft
// metadata, replica.Leader), only with nobody to replicate to.
type benchCluster struct {
	bin   string
	dir   string
	nodes []*benchNode
	props map[string]string // extra server properties for every node
	// kafka, when set, runs Apache Kafka 4.4 JVMs with the same generated
	// properties instead of `fjord broker`: the reference.
	kafka *kafkaRuntime
}

// kafkaRuntime is what running Kafka nodes takes: the jars, and the
// cluster id the storage of every node is formatted with.
type kafkaRuntime struct {
	classpath string
	clusterID string
}

type benchNode struct {
	id         int32
	host       string
	clientAddr string
	ctrlAddr   string
	httpAddr   string
	dataDir    string
	configPath string
	logPath    string

	cmd     *exec.Cmd
	done    chan struct{} // closed when the current process exited
	waitErr error
	runs    int // how many times the node was started (log file suffix)
}

// newBenchCluster lays out n nodes under dir with ports base (client),
// base+1 (controller), base+2 (HTTP) on each node's address, and writes
// their server.properties.
func newBenchCluster(bin, dir string, n, base int, extra map[string]string, kafka *kafkaRuntime) (*benchCluster, error) {
	if n < 1 || n > 200 {
		return nil, fmt.Errorf("cluster of %d nodes: want 1..200", n)
	}
	c := &benchCluster{bin: bin, dir: dir, props: extra, kafka: kafka}
	for i := 1; i <= n; i++ {
		host := "127.0.0." + strconv.Itoa(i+1)
		nd := &benchNode{
			id:         int32(i),
			host:       host,
			clientAddr: net.JoinHostPort(host, strconv.Itoa(base)),
			ctrlAddr:   net.JoinHostPort(host, strconv.Itoa(base+1)),
			httpAddr:   net.JoinHostPort(host, strconv.Itoa(base+2)),
			dataDir:    filepath.Join(dir, "node-"+strconv.Itoa(i)),
		}
		nd.configPath = filepath.Join(nd.dataDir, "server.properties")
		c.nodes = append(c.nodes, nd)
	}
	for _, nd := range c.nodes {
		if err := os.MkdirAll(nd.dataDir, 0o755); err != nil {
			return nil, fmt.Errorf("node %d dir: %w", nd.id, err)
		}
		if err := writeClusterProperties(nd.configPath, c.nodeProperties(nd)); err != nil {
			return nil, err
		}
	}
	if kafka != nil {
		if err := c.formatKafka(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// formatKafka writes a quiet log4j2 config and runs Kafka's storage
// format on every node (a JVM each, so in parallel).
func (c *benchCluster) formatKafka() error {
	const log4j = `Configuration:
  Appenders:
    Console: { name: STDOUT, PatternLayout: { pattern: "[%d] %p %m (%c)%n" } }
  Loggers:
    Root: { level: WARN, AppenderRef: [ { ref: STDOUT } ] }
    Logger: [ { name: kafka.server.KafkaServer, level: INFO }, { name: kafka.server.BrokerServer, level: INFO } ]
`
	errs := make([]error, len(c.nodes))
	var wg sync.WaitGroup
	for i, nd := range c.nodes {
		if err := os.WriteFile(filepath.Join(nd.dataDir, "log4j2.yaml"), []byte(log4j), 0o644); err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			out, err := exec.CommandContext(ctx, "java", "-cp", c.kafka.classpath, "kafka.tools.StorageTool",
				"format", "-t", c.kafka.clusterID, "-c", nd.configPath).CombinedOutput()
			if err != nil {
				errs[i] = fmt.Errorf("format kafka node %d: %w: %s", nd.id, err, tail(out, 1500))
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// newKafkaUUID is a random Kafka Uuid in its text form (URL-safe base64,
// no padding), never starting with '-' as Kafka's Uuid.randomUuid avoids.
func newKafkaUUID() string {
	for {
		var b [16]byte
		_, _ = cryptorand.Read(b[:]) // never fails
		if s := base64.RawURLEncoding.EncodeToString(b[:]); s[0] != '-' {
			return s
		}
	}
}

// nodeProperties is node nd's server.properties: Kafka's KRaft keys, and
// Fjord's defaults for everything else (broker.session.timeout.ms etc.),
// since the benchmark measures what a user gets.
func (c *benchCluster) nodeProperties(nd *benchNode) map[string]string {
	var voters []string
	for _, m := range c.nodes {
		voters = append(voters, fmt.Sprintf("%d@%s", m.id, m.ctrlAddr))
	}
	rf := strconv.Itoa(min(3, len(c.nodes)))
	p := map[string]string{
		"offsets.topic.replication.factor":         rf,
		"transaction.state.log.replication.factor": rf,
		"transaction.state.log.min.isr":            "1",
		"group.initial.rebalance.delay.ms":         "0",
	}
	maps.Copy(p, c.props)
	maps.Copy(p, map[string]string{
		"process.roles":                  "broker,controller",
		"node.id":                        strconv.Itoa(int(nd.id)),
		"controller.quorum.voters":       strings.Join(voters, ","),
		"controller.listener.names":      "CONTROLLER",
		"listeners":                      "PLAINTEXT://" + nd.clientAddr + ",CONTROLLER://" + nd.ctrlAddr,
		"advertised.listeners":           "PLAINTEXT://" + nd.clientAddr,
		"inter.broker.listener.name":     "PLAINTEXT",
		"listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
		"log.dirs":                       filepath.Join(nd.dataDir, "data"),
	})
	return p
}

func writeClusterProperties(path string, props map[string]string) error {
	var b strings.Builder
	b.WriteString("# generated by fjord bench cluster\n")
	for _, k := range slices.Sorted(maps.Keys(props)) {
		fmt.Fprintf(&b, "%s=%s\n", k, props[k])
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ports are every address the cluster binds; all must be free first, or
// we would measure (or kill) somebody else's broker.
func (c *benchCluster) ports() []string {
	var out []string
	for _, nd := range c.nodes {
		out = append(out, nd.clientAddr, nd.ctrlAddr, nd.httpAddr)
	}
	return out
}

func (c *benchCluster) seed() string { return c.nodes[0].clientAddr }

func (c *benchCluster) node(id int32) *benchNode {
	if id < 1 || int(id) > len(c.nodes) {
		return nil
	}
	return c.nodes[id-1]
}

// start starts every node, then waits until each of them lists all
// nodes as registered and unfenced; it returns how long that took.
func (c *benchCluster) start(ctx context.Context, timeout time.Duration) (time.Duration, error) {
	for _, a := range c.ports() {
		if err := portFree(a); err != nil {
			return 0, err
		}
	}
	begin := time.Now()
	for _, nd := range c.nodes {
		if err := c.startNode(nd); err != nil {
			c.stop(5 * time.Second)
			return 0, err
		}
	}
	if err := c.waitReady(ctx, timeout); err != nil {
		c.stop(5 * time.Second)
		return 0, err
	}
	return time.Since(begin), nil
}

// startNode starts (or restarts) one node's process.
func (c *benchCluster) startNode(nd *benchNode) error {
	nd.runs++
	nd.logPath = filepath.Join(nd.dataDir, fmt.Sprintf("broker-%d.log", nd.runs))
	logf, err := os.Create(nd.logPath)
	if err != nil {
		return fmt.Errorf("node %d log: %w", nd.id, err)
	}
	defer logf.Close() // the child holds its own descriptor
	var cmd *exec.Cmd
	if c.kafka != nil {
		// Kafka's own start script defaults (heap, G1), as `bench run`.
		args := append(append([]string{}, kafkaJVMOpts...),
			"-Dlog4j2.configurationFile="+filepath.Join(nd.dataDir, "log4j2.yaml"),
			"-cp", c.kafka.classpath, "kafka.Kafka", nd.configPath)
		cmd = exec.Command("java", args...)
	} else {
		cmd = exec.Command(c.bin, "broker", "--config", nd.configPath, "--http-addr", nd.httpAddr)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start node %d: %w", nd.id, err)
	}
	done := make(chan struct{})
	nd.cmd, nd.done = cmd, done
	go func() { nd.waitErr = cmd.Wait(); close(done) }()
	return nil
}

func (nd *benchNode) running() bool {
	if nd.cmd == nil {
		return false
	}
	select {
	case <-nd.done:
		return false
	default:
		return true
	}
}

func (nd *benchNode) pid() int { return nd.cmd.Process.Pid }

// kill sends SIGKILL and waits until the process is reaped; it returns
// the moment the signal was sent.
func (nd *benchNode) kill() (time.Time, error) {
	t0 := time.Now()
	if err := nd.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return t0, fmt.Errorf("kill node %d: %w", nd.id, err)
	}
	select {
	case <-nd.done:
		return t0, nil
	case <-time.After(10 * time.Second):
		return t0, fmt.Errorf("node %d survived SIGKILL for 10 s", nd.id)
	}
}

// stop ends the node with SIGTERM (a controlled shutdown), SIGKILL after
// grace.
func (nd *benchNode) stop(grace time.Duration) {
	if !nd.running() {
		return
	}
	_ = nd.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-nd.done:
	case <-time.After(grace):
		_ = nd.cmd.Process.Kill()
		<-nd.done
	}
}

// stop stops every node at once: one at a time, each controlled shutdown
// would wait for leaderships to move to the nodes still running.
func (c *benchCluster) stop(grace time.Duration) {
	for _, nd := range c.nodes {
		if nd.running() {
			_ = nd.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	for _, nd := range c.nodes {
		nd.stop(grace)
	}
}

// exited returns an error naming the first node whose process is gone.
func (c *benchCluster) exited() error {
	for _, nd := range c.nodes {
		if nd.cmd != nil && !nd.running() {
			return fmt.Errorf("node %d exited (%v): %s", nd.id, nd.waitErr, logTail(nd.logPath))
		}
	}
	return nil
}

// waitReady polls until every running node sees every node registered
// and unfenced (DescribeCluster with fenced brokers included, v2).
func (c *benchCluster) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := c.exited()
		if err == nil {
			err = c.ready()
		}
		if err == nil {
			return nil
		}
		if c.exited() != nil || time.Now().After(deadline) {
			return fmt.Errorf("cluster of %d not ready within %s: %w", len(c.nodes), timeout, err)
		}
		if !sleepCtx(ctx, 50*time.Millisecond) { // polling cluster state
			return ctx.Err()
		}
	}
}

func (c *benchCluster) ready() error {
	for _, nd := range c.nodes {
		req := kmsg.NewPtrDescribeClusterRequest()
		req.IncludeFencedBrokers = true
		resp, err := rawRequest(nd.clientAddr, req, 2*time.Second)
		if err != nil {
			return fmt.Errorf("node %d: %w", nd.id, err)
		}
		r := resp.(*kmsg.DescribeClusterResponse)
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			return fmt.Errorf("node %d: DescribeCluster: %w", nd.id, err)
		}
		unfenced := 0
		for _, b := range r.Brokers {
			if !b.IsFenced {
				unfenced++
			}
		}
		if unfenced != len(c.nodes) {
			return fmt.Errorf("node %d sees %d of %d brokers unfenced", nd.id, unfenced, len(c.nodes))
		}
	}
	return nil
}

// activeController asks the controller listeners of running nodes which
// node is the active controller (DescribeCluster with endpoint type
// controllers, KIP-919); -1 if none answers.
func (c *benchCluster) activeController() int32 {
	for _, nd := range c.nodes {
		if !nd.running() {
			continue
		}
		req := kmsg.NewPtrDescribeClusterRequest()
		req.EndpointType = 2
		resp, err := rawRequest(nd.ctrlAddr, req, time.Second)
		if err != nil {
			continue
		}
		if r := resp.(*kmsg.DescribeClusterResponse); r.ErrorCode == 0 && r.ControllerID >= 0 {
			return r.ControllerID
		}
	}
	return -1
}

// partState is one partition as a broker's Metadata answer shows it.
type partState struct {
	leader int32
	isr    []int32
}

// topicState asks a running node (the first that answers) for topic's
// partitions.
func (c *benchCluster) topicState(topic string) (map[int32]partState, error) {
	var errs []error
	for _, nd := range c.nodes {
		if !nd.running() {
			continue
		}
		st, err := topicStateAt(nd.clientAddr, topic)
		if err == nil {
			return st, nil
		}
		errs = append(errs, fmt.Errorf("node %d: %w", nd.id, err))
	}
	if len(errs) == 0 {
		return nil, errors.New("no node is running")
	}
	return nil, errors.Join(errs...)
}

func topicStateAt(addr, topic string) (map[int32]partState, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := rawRequest(addr, req, 2*time.Second)
	if err != nil {
		return nil, err
	}
	for _, t := range resp.(*kmsg.MetadataResponse).Topics {
		if t.Topic == nil || *t.Topic != topic {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return nil, err
		}
		st := map[int32]partState{}
		for _, p := range t.Partitions {
			st[p.Partition] = partState{leader: p.Leader, isr: p.ISR}
		}
		return st, nil
	}
	return nil, kerr.UnknownTopicOrPartition
}

// waitFullISR polls until every one of topic's partitions has a leader
// and rf replicas in sync.
func (c *benchCluster) waitFullISR(ctx context.Context, topic string, partitions, rf int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		st, err := c.topicState(topic)
		if err == nil {
			err = fullISR(st, partitions, rf)
		}
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("topic %s not fully in sync within %s: %w", topic, timeout, err)
		}
		if !sleepCtx(ctx, 50*time.Millisecond) { // polling metadata
			return ctx.Err()
		}
	}
}

func fullISR(st map[int32]partState, partitions, rf int) error {
	if len(st) != partitions {
		return fmt.Errorf("%d partitions, want %d", len(st), partitions)
	}
	for p, s := range st {
		if s.leader < 0 {
			return fmt.Errorf("partition %d has no leader", p)
		}
		if len(s.isr) != rf {
			return fmt.Errorf("partition %d has ISR %v, want %d replicas", p, s.isr, rf)
		}
	}
	return nil
}

// rawRequest sends req on a fresh connection at the highest version both
// kmsg and the server support (ApiVersions v0 first) and returns the
// answer: no client cache or retry between us and what the node says now.
func rawRequest(addr string, req kmsg.Request, timeout time.Duration) (kmsg.Response, error) {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return nil, err
	}
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("fjord-bench-cluster"))
	av := kmsg.NewPtrApiVersionsRequest()
	av.SetVersion(0) // every Kafka server answers v0, with a v0 header
	if _, err := conn.Write(f.AppendRequest(nil, av, 1)); err != nil {
		return nil, err
	}
	body, err := readFrame(conn, 1<<20)
	if err != nil {
		return nil, fmt.Errorf("ApiVersions: %w", err)
	}
	if len(body) < 4 {
		return nil, errors.New("ApiVersions: short response")
	}
	avr := av.ResponseKind().(*kmsg.ApiVersionsResponse)
	avr.SetVersion(0)
	if err := avr.ReadFrom(body[4:]); err != nil {
		return nil, fmt.Errorf("decode ApiVersions: %w", err)
	}
	version := int16(-1)
	for _, k := range avr.ApiKeys {
		if k.ApiKey == req.Key() && k.MinVersion <= req.MaxVersion() {
			version = min(k.MaxVersion, req.MaxVersion())
		}
	}
	if version < 0 {
		return nil, fmt.Errorf("%s: %w", kmsg.NameForKey(req.Key()), kerr.UnsupportedVersion)
	}
	req.SetVersion(version)
	if _, err := conn.Write(f.AppendRequest(nil, req, 2)); err != nil {
		return nil, err
	}
	if body, err = readFrame(conn, 64<<20); err != nil {
		return nil, fmt.Errorf("%s: %w", kmsg.NameForKey(req.Key()), err)
	}
	if req.IsFlexible() {
		body, err = skipResponseHeader(body, 2)
	} else if len(body) < 4 {
		err = errors.New("short response")
	} else {
		body = body[4:]
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", kmsg.NameForKey(req.Key()), err)
	}
	resp := req.ResponseKind()
	resp.SetVersion(version)
	if err := resp.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("decode %s response: %w", kmsg.NameForKey(req.Key()), err)
	}
	return resp, nil
}
