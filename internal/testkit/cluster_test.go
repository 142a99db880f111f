package testkit

import (
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/fjordhq/fjord/broker"
)

// TestClusterProperties checks the generated server.properties of a
// 3-node combined cluster without starting anything: Kafka's KRaft keys,
// one loopback address per node, and the data dirs.
func TestClusterProperties(t *testing.T) {
	c, err := newProcessCluster(t.TempDir(), ProcessClusterOptions{
		Props:     map[string]string{"min.insync.replicas": "2", "broker.session.timeout.ms": "6000"},
		NodeProps: map[int32]map[string]string{2: {"broker.rack": "b"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.nodes) != 3 {
		t.Fatalf("%d nodes, want 3 by default", len(c.nodes))
	}
	var voters []string
	for _, n := range c.nodes {
		voters = append(voters, strings.Join([]string{itoa(n.ID), "@", n.ControllerAddr}, ""))
	}
	for _, n := range c.nodes {
		host := "127.0.0." + itoa(n.ID+1)
		if !strings.HasPrefix(n.ClientAddr, host+":") || !strings.HasPrefix(n.ControllerAddr, host+":") {
			t.Errorf("node %d listens on %s and %s, want host %s", n.ID, n.ClientAddr, n.ControllerAddr, host)
		}
		p := c.nodeProperties(n)
		want := map[string]string{
			"process.roles":                    "broker,controller",
			"node.id":                          itoa(n.ID),
			"controller.quorum.voters":         strings.Join(voters, ","),
			"controller.listener.names":        "CONTROLLER",
			"listeners":                        "PLAINTEXT://" + n.ClientAddr + ",CONTROLLER://" + n.ControllerAddr,
			"advertised.listeners":             "PLAINTEXT://" + n.ClientAddr,
			"inter.broker.listener.name":       "PLAINTEXT",
			"listener.security.protocol.map":   "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
			"log.dirs":                         n.DataDir + "/data",
			"offsets.topic.replication.factor": "3",
			"min.insync.replicas":              "2",    // Props
			"broker.session.timeout.ms":        "6000", // Props over the harness default
		}
		if n.ID == 2 {
			want["broker.rack"] = "b"
		}
		for k, v := range want {
			if p[k] != v {
				t.Errorf("node %d: %s=%q, want %q", n.ID, k, p[k], v)
			}
		}
		if n.ID != 2 && p["broker.rack"] != "" {
			t.Errorf("node %d has broker.rack %q: NodeProps leaked", n.ID, p["broker.rack"])
		}
		checkFjordAccepts(t, n.ID, p)
	}
}

// checkFjordAccepts parses props as `fjord broker --config` does.
func checkFjordAccepts(t *testing.T, id int32, props map[string]string) {
	t.Helper()
	if _, err := broker.ConfigFromProperties(props, slog.New(slog.DiscardHandler)); err != nil {
		t.Errorf("node %d: fjord refuses the generated properties: %v", id, err)
	}
}

// TestClusterPropertiesFaults checks the per-link addresses: node N reaches
// controller M and broker M only through the proxies of link N→M, so
// partitioning a node's links cuts both directions.
func TestClusterPropertiesFaults(t *testing.T) {
	c, err := newProcessCluster(t.TempDir(), ProcessClusterOptions{
		Nodes: 4, Faults: true, NodeRoles: map[int32]string{4: "broker"},
	})
	if err != nil {
		t.Fatal(err)
	}
	c.t = t
	if err := c.startProxies(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.closeProxies)
	for _, n := range c.nodes {
		p := c.nodeProperties(n)
		if got, want := p["inter.broker.listener.name"], "REPLICATION_"+itoa(n.ID); got != want {
			t.Errorf("node %d: inter.broker.listener.name=%s, want %s", n.ID, got, want)
		}
		// Voters: itself directly, the others through link n→m.
		for _, v := range strings.Split(p["controller.quorum.voters"], ",") {
			id, addr, _ := strings.Cut(v, "@")
			m := c.Node(int32(atoi(t, id)))
			if !m.IsController() {
				t.Errorf("node %d lists broker-only node %s as a voter", n.ID, id)
				continue
			}
			if m == n {
				if addr != n.ControllerAddr {
					t.Errorf("node %d lists itself at %s, want its own %s", n.ID, addr, n.ControllerAddr)
				}
				continue
			}
			ctl, _ := c.Link(n.ID, m.ID)
			if addr != ctl.Addr() || ctl.Target() != m.ControllerAddr {
				t.Errorf("node %d reaches controller %d at %s, want the proxy %s → %s", n.ID, m.ID, addr, ctl.Addr(), m.ControllerAddr)
			}
		}
		if strings.Contains(p["controller.quorum.voters"], "4@") {
			t.Errorf("node %d: the broker-only node is a voter: %s", n.ID, p["controller.quorum.voters"])
		}
		// Advertised REPLICATION_k of node n is the proxy of link k→n.
		adv := map[string]string{}
		for _, l := range strings.Split(p["advertised.listeners"], ",") {
			name, addr, _ := strings.Cut(l, "://")
			adv[name] = addr
		}
		for _, k := range c.nodes {
			got := adv["REPLICATION_"+itoa(k.ID)]
			if k == n {
				if got != n.ReplicationAddrs[n.ID] {
					t.Errorf("node %d advertises its own REPLICATION listener as %s, want %s", n.ID, got, n.ReplicationAddrs[n.ID])
				}
				continue
			}
			_, br := c.Link(k.ID, n.ID)
			if got != br.Addr() || br.Target() != n.ReplicationAddrs[k.ID] {
				t.Errorf("node %d advertises REPLICATION_%d as %s, want the proxy %s → %s", n.ID, k.ID, got, br.Addr(), n.ReplicationAddrs[k.ID])
			}
		}
		if adv["PLAINTEXT"] != n.ClientAddr {
			t.Errorf("node %d: clients reach it at %s, want directly %s", n.ID, adv["PLAINTEXT"], n.ClientAddr)
		}
		if !strings.Contains(p["listener.security.protocol.map"], "REPLICATION_4:PLAINTEXT") {
			t.Errorf("node %d: listener.security.protocol.map=%s lacks REPLICATION_4", n.ID, p["listener.security.protocol.map"])
		}
		checkFjordAccepts(t, n.ID, p)
	}
	// Isolating node 2 cuts every link touching it and no other.
	c.Node(2).Isolate()
	for from, m := range c.links {
		for to, l := range m {
			cut := from == 2 || to == 2
			if l.controller != nil && l.controller.Partitioned() != cut {
				t.Errorf("link %d→%d controller partitioned=%v after Isolate(2)", from, to, !cut)
			}
			if l.broker != nil && l.broker.Partitioned() != cut {
				t.Errorf("link %d→%d broker partitioned=%v after Isolate(2)", from, to, !cut)
			}
		}
	}
	c.Node(2).Heal()
	for _, p := range c.proxiesOf(2) {
		if p.Partitioned() {
			t.Fatal("a link of node 2 is still partitioned after Heal")
		}
	}
}

func TestClusterOptionsRefused(t *testing.T) {
	for _, o := range []ProcessClusterOptions{
		{Roles: "broker"},
		{Roles: "broker,zookeeper"},
		{Nodes: 300},
	} {
		if _, err := newProcessCluster(t.TempDir(), o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

func itoa(i int32) string { return strconv.Itoa(int(i)) }

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
