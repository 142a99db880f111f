package testkit

// Process clusters: N `fjord broker` processes (or, as the reference,
// Apache Kafka 4.4 JVMs) configured with Kafka's KRaft properties, each on
// its own loopback address, so tests can SIGKILL, stop, restart and
// network-isolate single nodes.
//
// Addresses. Node id N binds 127.0.0.(N+1) (all of 127/8 is loopback on
// Linux), on free ports: a PLAINTEXT listener for clients and, if it is a
// controller, a CONTROLLER listener. Distinct addresses make logs and
// Metadata answers easy to read and keep nodes from sharing a port space.
//
// Faults. With ProcessClusterOptions.Faults every node-to-node connection
// goes through its own faultproxy, one per directed link and purpose, so
// Isolate cuts a node off in both directions while clients still reach it
// (the interesting case: a leader cut off from its followers and the
// controller, still asked to write by a client on its side). Addresses
// are per link because a proxy in front of a node alone would only cut
// connections *to* it; the node's own connections to others (fetching as a
// follower, raft votes, heartbeats) would still flow. Two Kafka mechanisms
// make per-link addresses possible without anything Fjord-specific:
//
//   - controller.quorum.voters is local configuration. Node N's file lists
//     controller M at the proxy of link N→M (controller traffic), so N's
//     raft, registration and heartbeat traffic to M goes through it.
//   - The inter-broker listener is chosen by name by the *connecting*
//     broker: broker N fetches from leader M at M's advertised endpoint for
//     N's inter.broker.listener.name. Every broker therefore has one
//     listener per broker K, named REPLICATION_K, advertised (on broker M)
//     as the proxy of link K→M, and broker K sets
//     inter.broker.listener.name=REPLICATION_K.
//
// Apache Kafka supports both as is; Fjord must too (resolve voters from
// the local controller.quorum.voters; pick the leader's endpoint by the
// local inter.broker.listener.name among its registered listeners).

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/internal/testkit/faultproxy"
)

// ProcessClusterOptions configures StartProcessCluster.
type ProcessClusterOptions struct {
	// Nodes is the number of nodes, ids 1..Nodes (default 3).
	Nodes int
	// Roles is process.roles of every node: "broker,controller" (the
	// default), "broker" or "controller".
	Roles string
	// NodeRoles overrides Roles for single nodes, e.g. {4: "broker"} for a
	// broker-only node beside three combined ones.
	NodeRoles map[int32]string
	// Props are server properties for every node, over the harness's
	// defaults; NodeProps are per node, over Props (e.g. broker.rack).
	Props     map[string]string
	NodeProps map[int32]map[string]string
	// Faults routes node-to-node traffic through fault proxies (see the
	// file comment), which Isolate, Heal and Link act on.
	Faults bool
	// Kafka runs Apache Kafka 4.4 (jars from `scripts/kafka.sh fetch`)
	// with the same generated properties instead of `fjord broker`: the
	// reference the same test can be checked against.
	Kafka bool
}

// ProcessCluster is a running cluster of node processes.
type ProcessCluster struct {
	t         testing.TB
	opts      ProcessClusterOptions
	ClusterID string
	Dir       string
	nodes     []*ClusterNode // by id-1
	// links[from][to] are the proxies of the directed link from→to.
	links map[int32]map[int32]*clusterLink
}

// clusterLink is the proxies one node uses to reach another.
type clusterLink struct {
	controller *faultproxy.Proxy // nil if the target is not a controller
	broker     *faultproxy.Proxy // nil unless both are brokers
}

// ClusterNode is one node process of a ProcessCluster.
type ClusterNode struct {
	c     *ProcessCluster
	ID    int32
	Roles []string
	Host  string // 127.0.0.(ID+1)
	// ClientAddr is the PLAINTEXT listener (brokers only).
	ClientAddr string
	// ControllerAddr is the CONTROLLER listener (controllers only).
	ControllerAddr string
	// ReplicationAddrs are the REPLICATION_K listeners by K (Faults only).
	ReplicationAddrs map[int32]string
	DataDir          string
	ConfigPath       string
	// Props are the node's server properties as written to ConfigPath.
	Props map[string]string

	mu   sync.Mutex
	proc *Process
}

// IsBroker reports whether the node has the broker role.
func (n *ClusterNode) IsBroker() bool { return slices.Contains(n.Roles, "broker") }

// IsController reports whether the node has the controller role.
func (n *ClusterNode) IsController() bool { return slices.Contains(n.Roles, "controller") }

// LogDir is the node's log.dirs.
func (n *ClusterNode) LogDir() string { return n.Props["log.dirs"] }

// Process is the node's current process.
func (n *ClusterNode) Process() *Process {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.proc
}

// StartProcessCluster writes every node's server.properties, starts the
// nodes and returns without waiting for them: call WaitReady.
func StartProcessCluster(t testing.TB, o ProcessClusterOptions) *ProcessCluster {
	t.Helper()
	c, err := newProcessCluster(t.TempDir(), o)
	if err != nil {
		t.Fatalf("process cluster: %v", err)
	}
	c.t = t
	if o.Faults {
		if err := c.startProxies(); err != nil {
			t.Fatalf("process cluster: %v", err)
		}
		t.Cleanup(c.closeProxies)
	}
	for _, n := range c.nodes {
		n.Props = c.nodeProperties(n)
		if err := writeProperties(n.ConfigPath, n.Props); err != nil {
			t.Fatalf("process cluster: %v", err)
		}
	}
	if o.Kafka {
		c.formatKafka(t)
	}
	for _, n := range c.nodes {
		n.start()
	}
	return c
}

// newProcessCluster lays the nodes out: ids, roles, addresses, dirs. It
// binds nothing but the probes that find free ports.
func newProcessCluster(dir string, o ProcessClusterOptions) (*ProcessCluster, error) {
	if o.Nodes == 0 {
		o.Nodes = 3
	}
	if o.Nodes < 1 || o.Nodes > 200 {
		return nil, fmt.Errorf("Nodes %d: want 1..200 (node N binds 127.0.0.N+1)", o.Nodes)
	}
	if o.Roles == "" {
		o.Roles = "broker,controller"
	}
	c := &ProcessCluster{opts: o, Dir: dir, ClusterID: newKafkaUUID()}
	controllers := 0
	for i := 1; i <= o.Nodes; i++ {
		id := int32(i)
		roles := o.Roles
		if r, ok := o.NodeRoles[id]; ok {
			roles = r
		}
		n := &ClusterNode{c: c, ID: id, Host: "127.0.0." + strconv.Itoa(i+1)}
		for _, r := range strings.Split(roles, ",") {
			r = strings.TrimSpace(r)
			if r != "broker" && r != "controller" {
				return nil, fmt.Errorf("node %d: role %q: want broker, controller or both", id, r)
			}
			n.Roles = append(n.Roles, r)
		}
		n.DataDir = filepath.Join(dir, "node-"+strconv.Itoa(i))
		n.ConfigPath = filepath.Join(n.DataDir, "server.properties")
		if err := os.MkdirAll(n.DataDir, 0o755); err != nil {
			return nil, err
		}
		var err error
		if n.IsBroker() {
			if n.ClientAddr, err = freeAddrOn(n.Host); err != nil {
				return nil, err
			}
		}
		if n.IsController() {
			controllers++
			if n.ControllerAddr, err = freeAddrOn(n.Host); err != nil {
				return nil, err
			}
		}
		c.nodes = append(c.nodes, n)
	}
	if controllers == 0 {
		return nil, errors.New("no node has the controller role")
	}
	if o.Faults {
		for _, n := range c.brokers() {
			n.ReplicationAddrs = map[int32]string{}
			for _, k := range c.brokers() {
				addr, err := freeAddrOn(n.Host)
				if err != nil {
					return nil, err
				}
				n.ReplicationAddrs[k.ID] = addr
			}
		}
	}
	return c, nil
}

// startProxies starts the proxies of every directed link.
func (c *ProcessCluster) startProxies() error {
	c.links = map[int32]map[int32]*clusterLink{}
	for _, from := range c.nodes {
		c.links[from.ID] = map[int32]*clusterLink{}
		for _, to := range c.nodes {
			if from == to {
				continue
			}
			l := &clusterLink{}
			var err error
			if to.IsController() {
				if l.controller, err = faultproxy.Listen("127.0.0.1:0", to.ControllerAddr); err != nil {
					return err
				}
			}
			if from.IsBroker() && to.IsBroker() {
				if l.broker, err = faultproxy.Listen("127.0.0.1:0", to.ReplicationAddrs[from.ID]); err != nil {
					return err
				}
			}
			c.links[from.ID][to.ID] = l
		}
	}
	return nil
}

func (c *ProcessCluster) closeProxies() {
	for _, m := range c.links {
		for _, l := range m {
			for _, p := range []*faultproxy.Proxy{l.controller, l.broker} {
				if p != nil {
					p.Close()
				}
			}
		}
	}
}

// replicationListener names the listener broker k uses to reach others.
func replicationListener(k int32) string { return "REPLICATION_" + strconv.Itoa(int(k)) }

// clusterDefaults are the harness's server properties before Props: fast
// group joins, internal topics replicated like the test's data, and
// failure detection tuned for tests (Kafka's 2 s / 9 s heartbeat and
// session make every failover test wait 9 s).
func (c *ProcessCluster) clusterDefaults() map[string]string {
	rf := strconv.Itoa(min(3, len(c.brokers())))
	return map[string]string{
		"offsets.topic.replication.factor":         rf,
		"transaction.state.log.replication.factor": rf,
		"transaction.state.log.min.isr":            "1",
		"group.initial.rebalance.delay.ms":         "0",
		"broker.heartbeat.interval.ms":             "500",
		"broker.session.timeout.ms":                "3000",
		"num.partitions":                           "1",
	}
}

// nodeProperties generates node n's server.properties.
func (c *ProcessCluster) nodeProperties(n *ClusterNode) map[string]string {
	p := c.clusterDefaults()
	maps.Copy(p, c.opts.Props)
	maps.Copy(p, c.opts.NodeProps[n.ID])

	var voters []string
	for _, m := range c.nodes {
		if !m.IsController() {
			continue
		}
		addr := m.ControllerAddr
		if c.opts.Faults && m != n {
			addr = c.links[n.ID][m.ID].controller.Addr()
		}
		voters = append(voters, fmt.Sprintf("%d@%s", m.ID, addr))
	}
	var listeners, advertised []string
	protocols := []string{"CONTROLLER:PLAINTEXT"}
	if n.IsBroker() {
		listeners = append(listeners, "PLAINTEXT://"+n.ClientAddr)
		advertised = append(advertised, "PLAINTEXT://"+n.ClientAddr)
		protocols = append(protocols, "PLAINTEXT:PLAINTEXT")
	}
	if n.IsController() {
		listeners = append(listeners, "CONTROLLER://"+n.ControllerAddr)
	}
	interBroker := "PLAINTEXT"
	if c.opts.Faults && n.IsBroker() {
		interBroker = replicationListener(n.ID)
		for _, k := range c.brokers() {
			name := replicationListener(k.ID)
			listeners = append(listeners, name+"://"+n.ReplicationAddrs[k.ID])
			adv := n.ReplicationAddrs[k.ID]
			if k != n {
				adv = c.links[k.ID][n.ID].broker.Addr()
			}
			advertised = append(advertised, name+"://"+adv)
			protocols = append(protocols, name+":PLAINTEXT")
		}
	}
	p["process.roles"] = strings.Join(n.Roles, ",")
	p["node.id"] = strconv.Itoa(int(n.ID))
	p["controller.quorum.voters"] = strings.Join(voters, ",")
	p["controller.listener.names"] = "CONTROLLER"
	p["listeners"] = strings.Join(listeners, ",")
	if len(advertised) > 0 {
		p["advertised.listeners"] = strings.Join(advertised, ",")
		p["inter.broker.listener.name"] = interBroker
	}
	p["listener.security.protocol.map"] = strings.Join(protocols, ",")
	p["log.dirs"] = filepath.Join(n.DataDir, "data")
	return p
}

// writeProperties writes a Java properties file, keys sorted.
func writeProperties(path string, props map[string]string) error {
	keys := slices.Sorted(maps.Keys(props))
	var b strings.Builder
	b.WriteString("# generated by internal/testkit.StartProcessCluster\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, props[k])
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// freeAddrOn finds a free TCP port on host (a loopback address).
func freeAddrOn(host string) (string, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", fmt.Errorf("find a free port on %s: %w", host, err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// newKafkaUUID is a random Kafka Uuid in its text form (URL-safe base64,
// no padding), never starting with '-' (Kafka's Uuid.randomUuid avoids it
// so the id cannot be mistaken for a command-line flag).
func newKafkaUUID() string {
	for {
		var b [16]byte
		rand.Read(b[:])
		s := base64.RawURLEncoding.EncodeToString(b[:])
		if s[0] != '-' {
			return s
		}
	}
}

func (c *ProcessCluster) brokers() []*ClusterNode {
	var out []*ClusterNode
	for _, n := range c.nodes {
		if n.IsBroker() {
			out = append(out, n)
		}
	}
	return out
}

// Nodes returns every node in id order.
func (c *ProcessCluster) Nodes() []*ClusterNode { return slices.Clone(c.nodes) }

// Node returns node id; the test fails if there is none.
func (c *ProcessCluster) Node(id int32) *ClusterNode {
	c.t.Helper()
	if id < 1 || int(id) > len(c.nodes) {
		c.t.Fatalf("no node %d in a %d-node cluster", id, len(c.nodes))
	}
	return c.nodes[id-1]
}

// Bootstrap is every broker's client address, comma-separated (the form
// of --bootstrap-server).
func (c *ProcessCluster) Bootstrap() string { return strings.Join(c.Seeds(), ",") }

// Seeds is every broker's client address (the form of kgo.SeedBrokers).
func (c *ProcessCluster) Seeds() []string {
	var addrs []string
	for _, n := range c.brokers() {
		addrs = append(addrs, n.ClientAddr)
	}
	return addrs
}

// Link returns the proxies of the directed link from→to: controller
// traffic (nil if to is not a controller) and inter-broker traffic (nil
// unless both are brokers). The test fails without Faults.
func (c *ProcessCluster) Link(from, to int32) (controller, broker *faultproxy.Proxy) {
	c.t.Helper()
	if !c.opts.Faults {
		c.t.Fatal("Link needs ProcessClusterOptions.Faults")
	}
	l := c.links[from][to]
	if l == nil {
		c.t.Fatalf("no link %d→%d", from, to)
	}
	return l.controller, l.broker
}

// proxiesOf are the proxies of every link to or from node id.
func (c *ProcessCluster) proxiesOf(id int32) []*faultproxy.Proxy {
	c.t.Helper()
	if !c.opts.Faults {
		c.t.Fatal("Isolate and Heal need ProcessClusterOptions.Faults")
	}
	var out []*faultproxy.Proxy
	for from, m := range c.links {
		for to, l := range m {
			if from != id && to != id {
				continue
			}
			for _, p := range []*faultproxy.Proxy{l.controller, l.broker} {
				if p != nil {
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// --- node processes ---

func (n *ClusterNode) start() {
	c := n.c
	c.t.Helper()
	var p *Process
	if c.opts.Kafka {
		p = startKafkaProcess(c.t, kafkaJava(c.t, n, "kafka.Kafka", n.ConfigPath)...)
	} else {
		p = StartProcess(c.t, "broker", "--config", n.ConfigPath)
	}
	n.mu.Lock()
	n.proc = p
	n.mu.Unlock()
}

// Kill sends SIGKILL and waits for the process to die.
func (n *ClusterNode) Kill() { n.Process().Kill() }

// Stop sends SIGTERM and waits (up to 30 s, then SIGKILL) for the exit;
// it returns the exit error, nil for a clean exit.
func (n *ClusterNode) Stop() error { return n.Process().Stop(30 * time.Second) }

// Restart starts the node again on the same config and data (killing it
// first if it still runs).
func (n *ClusterNode) Restart() {
	n.c.t.Helper()
	n.Process().Restart()
}

// Running reports whether the node's process is alive.
func (n *ClusterNode) Running() bool { return !n.Process().Exited() }

// Isolate cuts every link to and from the node (a network partition: no
// resets, connections held) while clients still reach its PLAINTEXT
// listener. Needs Faults.
func (n *ClusterNode) Isolate() {
	n.c.t.Helper()
	for _, p := range n.c.proxiesOf(n.ID) {
		p.Partition()
	}
}

// Heal ends Isolate: held connections and bytes flow again.
func (n *ClusterNode) Heal() {
	n.c.t.Helper()
	for _, p := range n.c.proxiesOf(n.ID) {
		p.Heal()
	}
}

// --- Apache Kafka as the reference ---

// kafkaLibs is where scripts/kafka.sh puts the Kafka 4.4 jars.
func kafkaLibs(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("KAFKA_CACHE")
	if dir == "" {
		dir = filepath.Join(RepoRoot(t), ".cache", "kafka-4.4")
	}
	libs := filepath.Join(dir, "libs")
	if _, err := os.Stat(filepath.Join(libs, "kafka_2.13-4.4.0.jar")); err != nil {
		t.Fatalf("Apache Kafka 4.4 jars not found in %s: run `scripts/kafka.sh fetch` first", libs)
	}
	return libs
}

// kafkaJava is the java command line running class main for node n, with
// a small heap (several JVMs share a 2-core test machine) and quiet logs.
func kafkaJava(t testing.TB, n *ClusterNode, main string, args ...string) []string {
	t.Helper()
	log4j := filepath.Join(n.DataDir, "log4j2.yaml")
	if _, err := os.Stat(log4j); err != nil {
		const cfg = `Configuration:
  Appenders:
    Console: { name: STDOUT, PatternLayout: { pattern: "[%d] %p %m (%c)%n" } }
  Loggers:
    Root: { level: WARN, AppenderRef: [ { ref: STDOUT } ] }
`
		if err := os.WriteFile(log4j, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return append([]string{
		"-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dlog4j2.configurationFile=" + log4j,
		"-cp", filepath.Join(kafkaLibs(t), "*"), main,
	}, args...)
}

// startKafkaProcess runs java with args as a Process (Kill, Stop, Restart
// and the failure-time output dump as for fjord processes).
func startKafkaProcess(t testing.TB, args ...string) *Process {
	t.Helper()
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatalf("java not found (Java 17 runs the Kafka reference): %v", err)
	}
	p := &Process{t: t, bin: java, args: args, output: &syncBuffer{}}
	p.start()
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("kafka %s output:\n%s", args[len(args)-1], p.output.String())
		}
	})
	return p
}

// formatKafka runs Kafka's storage format on every node, in parallel (each
// is a JVM start), with the cluster's id.
func (c *ProcessCluster) formatKafka(t testing.TB) {
	t.Helper()
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatalf("java not found (Java 17 runs the Kafka reference): %v", err)
	}
	errs := make([]error, len(c.nodes))
	var wg sync.WaitGroup
	for i, n := range c.nodes {
		args := kafkaJava(t, n, "kafka.tools.StorageTool", "format", "-t", c.ClusterID, "-c", n.ConfigPath)
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if out, err := exec.CommandContext(ctx, java, args...).CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("format node %d: %v\n%s", n.ID, err, out)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

// --- readiness and state, read over the Kafka protocol ---

// WaitReady waits until every broker node is registered and unfenced
// (DescribeCluster with fenced brokers included) and a controller answers
// as active, failing the test after wait or if a node's process exits.
func (c *ProcessCluster) WaitReady(t testing.TB, wait time.Duration) {
	t.Helper()
	deadline := time.Now().Add(wait)
	var err error
	for {
		for _, n := range c.nodes {
			if n.Process().Exited() {
				t.Fatalf("node %d exited while waiting for the cluster; output:\n%s", n.ID, n.Process().LastRun())
			}
		}
		if err = c.ready(); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster not ready after %v: %v", wait, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (c *ProcessCluster) ready() error {
	want := map[int32]bool{}
	for _, n := range c.brokers() {
		want[n.ID] = true
	}
	for _, n := range c.brokers() {
		brokers, err := DescribeClusterBrokers(n.ClientAddr, 2*time.Second)
		if err != nil {
			return fmt.Errorf("node %d: %w", n.ID, err)
		}
		got := map[int32]bool{}
		for _, b := range brokers {
			if b.IsFenced {
				return fmt.Errorf("node %d sees broker %d fenced", n.ID, b.NodeID)
			}
			got[b.NodeID] = true
		}
		if !maps.Equal(got, want) {
			return fmt.Errorf("node %d sees brokers %v, want %v", n.ID, sortedKeys(got), sortedKeys(want))
		}
	}
	if _, err := c.activeController(); err != nil {
		return err
	}
	return nil
}

func sortedKeys(m map[int32]bool) []int32 {
	out := slices.Collect(maps.Keys(m))
	slices.Sort(out)
	return out
}

// DescribeClusterBrokers asks addr for the brokers it knows, fenced ones
// included (DescribeCluster v2; before v2 fenced brokers are not listed).
func DescribeClusterBrokers(addr string, timeout time.Duration) ([]kmsg.DescribeClusterResponseBroker, error) {
	req := kmsg.NewPtrDescribeClusterRequest()
	req.IncludeFencedBrokers = true
	resp, err := RawRequest(addr, req, timeout)
	if err != nil {
		return nil, err
	}
	r := resp.(*kmsg.DescribeClusterResponse)
	if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
		return nil, fmt.Errorf("DescribeCluster: %w", err)
	}
	return r.Brokers, nil
}

// ActiveController returns the id of the active controller, as a
// controller listener reports it (DescribeCluster with endpoint type
// controllers, KIP-919). Brokers cannot be asked: in KRaft they name a
// random live broker as "controller" in Metadata and DescribeCluster.
func (c *ProcessCluster) ActiveController(t testing.TB) int32 {
	t.Helper()
	id, err := c.activeController()
	if err != nil {
		t.Fatalf("active controller: %v", err)
	}
	return id
}

func (c *ProcessCluster) activeController() (int32, error) {
	var errs []error
	for _, n := range c.nodes {
		if !n.IsController() || n.Process().Exited() {
			continue
		}
		req := kmsg.NewPtrDescribeClusterRequest()
		req.EndpointType = 2
		resp, err := RawRequest(n.ControllerAddr, req, 2*time.Second)
		if err == nil {
			r := resp.(*kmsg.DescribeClusterResponse)
			err = kerr.ErrorForCode(r.ErrorCode)
			if err == nil && r.ControllerID >= 0 {
				return r.ControllerID, nil
			}
			if err == nil {
				err = errors.New("no active controller yet")
			}
		}
		errs = append(errs, fmt.Errorf("controller %d: %w", n.ID, err))
	}
	if len(errs) == 0 {
		return -1, errors.New("no controller node is running")
	}
	return -1, errors.Join(errs...)
}

// LeaderOf returns the leader of topic's partition as the first running
// broker that answers Metadata reports it (-1: no leader), failing the
// test if none answers or the partition is unknown.
func (c *ProcessCluster) LeaderOf(t testing.TB, topic string, partition int32) int32 {
	t.Helper()
	var errs []error
	for _, n := range c.brokers() {
		if n.Process().Exited() {
			continue
		}
		leader, err := leaderOf(n.ClientAddr, topic, partition)
		if err == nil {
			return leader
		}
		errs = append(errs, fmt.Errorf("node %d: %w", n.ID, err))
	}
	t.Fatalf("leader of %s-%d: %v", topic, partition, errors.Join(errs...))
	return -1
}

func leaderOf(addr, topic string, partition int32) (int32, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := RawRequest(addr, req, 2*time.Second)
	if err != nil {
		return -1, err
	}
	for _, t := range resp.(*kmsg.MetadataResponse).Topics {
		if t.Topic == nil || *t.Topic != topic {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return -1, err
		}
		for _, p := range t.Partitions {
			if p.Partition == partition {
				return p.Leader, nil
			}
		}
	}
	return -1, kerr.UnknownTopicOrPartition
}

// --- one request on a fresh connection ---

// RawRequest sends req to addr on a new connection, at the highest
// version both kmsg and the server support (asked with ApiVersions first),
// and returns the response: no client library, no retries, no metadata
// cache, so a test sees exactly what that node answers now.
func RawRequest(addr string, req kmsg.Request, timeout time.Duration) (kmsg.Response, error) {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return nil, err
	}
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("testkit"))
	// ApiVersions v0: the one version every Kafka server answers, with a
	// plain (v0) response header.
	av := kmsg.NewPtrApiVersionsRequest()
	av.SetVersion(0)
	body, err := roundTripFrame(conn, f.AppendRequest(nil, av, 1), 1, false)
	if err != nil {
		return nil, fmt.Errorf("ApiVersions: %w", err)
	}
	avr := av.ResponseKind().(*kmsg.ApiVersionsResponse)
	avr.SetVersion(0)
	if err := avr.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("decode ApiVersions: %w", err)
	}
	if err := kerr.ErrorForCode(avr.ErrorCode); err != nil {
		return nil, fmt.Errorf("ApiVersions: %w", err)
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
	body, err = roundTripFrame(conn, f.AppendRequest(nil, req, 2), 2, req.IsFlexible())
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

// roundTripFrame writes one request frame and reads one response frame,
// returning its body after the response header (v1 for flexible requests:
// correlation id then tagged fields, which must be empty).
func roundTripFrame(conn net.Conn, frame []byte, corrID int32, flexible bool) ([]byte, error) {
	if _, err := conn.Write(frame); err != nil {
		return nil, err
	}
	var size [4]byte
	if _, err := io.ReadFull(conn, size[:]); err != nil {
		return nil, err
	}
	n := int(uint32(size[0])<<24 | uint32(size[1])<<16 | uint32(size[2])<<8 | uint32(size[3]))
	if n < 4 || n > 64<<20 {
		return nil, fmt.Errorf("response frame of %d bytes", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(conn, body); err != nil {
		return nil, err
	}
	got := int32(uint32(body[0])<<24 | uint32(body[1])<<16 | uint32(body[2])<<8 | uint32(body[3]))
	if got != corrID {
		return nil, fmt.Errorf("correlation id %d, want %d", got, corrID)
	}
	body = body[4:]
	if flexible {
		if len(body) == 0 || body[0] != 0 {
			return nil, errors.New("response header carries tagged fields")
		}
		body = body[1:]
	}
	return body, nil
}
