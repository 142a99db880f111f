package testkit

import (
	"fmt"
	"log/slog"
	"maps"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fjordhq/fjord/broker"
)

// InProcCluster is a cluster of Fjord nodes in the test process: every
// node combines the broker and controller roles (process.roles=
// broker,controller), with its own data dir and loopback listeners. It is
// the fast kind of cluster test; StartProcessCluster runs real processes.
type InProcCluster struct {
	t      testing.TB
	Nodes  []*InProcNode
	voters string
}

// InProcNode is one node of an InProcCluster.
type InProcNode struct {
	c        *InProcCluster
	ID       int32
	Server   *broker.Server // nil while stopped
	Addr     string         // client listener
	CtrlAddr string         // controller listener
	DataDir  string
	props    map[string]string
	done     chan error
}

// StartInProcCluster starts n combined nodes (ids 1..n) and waits until
// every broker is unfenced. props override the defaults (Kafka names) on
// every node.
func StartInProcCluster(t testing.TB, n int, props map[string]string) *InProcCluster {
	t.Helper()
	c := &InProcCluster{t: t}
	var voters []string
	for i := 1; i <= n; i++ {
		node := &InProcNode{c: c, ID: int32(i), Addr: FreeAddr(t), CtrlAddr: FreeAddr(t), DataDir: t.TempDir()}
		c.Nodes = append(c.Nodes, node)
		voters = append(voters, fmt.Sprintf("%d@%s", i, node.CtrlAddr))
	}
	c.voters = strings.Join(voters, ",")
	for _, node := range c.Nodes {
		node.props = map[string]string{
			"node.id":                          fmt.Sprint(node.ID),
			"process.roles":                    "broker,controller",
			"controller.quorum.voters":         c.voters,
			"controller.listener.names":        "CONTROLLER",
			"listener.security.protocol.map":   "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
			"listeners":                        "PLAINTEXT://" + node.Addr + ",CONTROLLER://" + node.CtrlAddr,
			"inter.broker.listener.name":       "PLAINTEXT",
			"log.dirs":                         node.DataDir,
			"offsets.topic.replication.factor": fmt.Sprint(min(n, 3)),
			"offsets.topic.num.partitions":     "10",
			"group.initial.rebalance.delay.ms": "0",
			"default.replication.factor":       fmt.Sprint(min(n, 3)),
			"broker.session.timeout.ms":        "1500",
			"broker.heartbeat.interval.ms":     "250",
			"replica.fetch.backoff.ms":         "100",
		}
		maps.Copy(node.props, props)
	}
	c.startAll(c.Nodes)
	t.Cleanup(c.Close)
	return c
}

// startAll starts nodes concurrently: a broker of a cluster returns from
// broker.New only once a quorum of controllers runs and unfenced it.
func (c *InProcCluster) startAll(nodes []*InProcNode) {
	c.t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, len(nodes))
	for i, node := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = node.start()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			c.t.Fatal(err)
		}
	}
}

func (n *InProcNode) start() error {
	level := slog.LevelWarn
	if os.Getenv("FJORD_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})).With("node", n.ID)
	cfg, err := broker.ConfigFromProperties(n.props, logger)
	if err != nil {
		return fmt.Errorf("node %d config: %w", n.ID, err)
	}
	srv, err := broker.New(cfg)
	if err != nil {
		return fmt.Errorf("start node %d: %w", n.ID, err)
	}
	n.Server = srv
	n.done = make(chan error, 1)
	go func() { n.done <- srv.Serve() }()
	return nil
}

// Bootstrap is the client bootstrap list (every running node).
func (c *InProcCluster) Bootstrap() string {
	var addrs []string
	for _, n := range c.Nodes {
		if n.Server != nil {
			addrs = append(addrs, n.Addr)
		}
	}
	return strings.Join(addrs, ",")
}

// Node returns the node with id.
func (c *InProcCluster) Node(id int32) *InProcNode { return c.Nodes[id-1] }

// Close stops every running node.
func (c *InProcCluster) Close() {
	var wg sync.WaitGroup
	for _, n := range c.Nodes {
		wg.Add(1)
		go func() { defer wg.Done(); n.Stop() }()
	}
	wg.Wait()
}

// Stop closes the node cleanly (controlled shutdown); idempotent.
func (n *InProcNode) Stop() {
	if n.Server == nil {
		return
	}
	if err := n.Server.Close(); err != nil {
		n.c.t.Errorf("close node %d: %v", n.ID, err)
	}
	select {
	case <-n.done:
	case <-time.After(20 * time.Second):
		n.c.t.Errorf("node %d: Serve did not return after Close", n.ID)
	}
	n.Server = nil
}

// Start starts a stopped node again on its data dir and addresses, and
// waits until the controller unfenced it.
func (n *InProcNode) Start() {
	n.c.t.Helper()
	n.c.startAll([]*InProcNode{n})
}
