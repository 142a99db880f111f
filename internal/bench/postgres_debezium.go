package bench

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// debeziumStack is the reference the CDC source is measured against:
// Apache Kafka 4.4 (one KRaft node, as `bench run` starts it) and a Kafka
// Connect 4.4 distributed worker with Debezium 3.6.1 on its plugin path,
// each a JVM of its own. It is started once per invocation (JVM and
// plugin start-up take tens of seconds) and idles while the other
// targets run; every phase uses fresh topics, slots and connectors.
type debeziumStack struct {
	kafka    *running
	connect  *running
	kafkaCPU *cpuSampler
	cl       *kgo.Client
	target   *cdcTarget
	java     string // `java -version`'s first line
}

// connectJVMOpts are what bin/connect-distributed.sh gives the worker:
// its heap, and kafka-run-class.sh's KAFKA_JVM_PERFORMANCE_OPTS.
var connectJVMOpts = append([]string{"-Xms256M", "-Xmx2G"}, kafkaJVMOpts[2:]...)

func startDebeziumStack(ctx context.Context, cfg *PostgresBenchConfig, dir string) (_ *debeziumStack, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for _, a := range []string{cfg.ConnectAddr} {
		if err := portFree(a); err != nil {
			return nil, fmt.Errorf("Kafka Connect: %w", err)
		}
	}
	script := func(arg string) (string, error) {
		cmd := exec.CommandContext(ctx, cfg.DebeziumScript, arg)
		cmd.Stderr = os.Stderr // download progress
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("%s %s: %w", cfg.DebeziumScript, arg, err)
		}
		return strings.TrimSpace(string(out)), nil
	}
	if _, err := script("fetch"); err != nil {
		return nil, err
	}
	classpath, err := script("classpath")
	if err != nil {
		return nil, err
	}
	pluginDir, err := script("plugin-dir")
	if err != nil {
		return nil, err
	}
	s := &debeziumStack{}
	defer func() {
		if err != nil {
			s.stop(cfg.StopGrace)
		}
	}()
	kt := &kafkaTarget{script: cfg.KafkaScript, addr: cfg.KafkaAddr, log: cfg.Log}
	if err := kt.Prepare(ctx, dir); err != nil {
		return nil, err
	}
	if s.kafka, err = startTarget(ctx, kt, filepath.Join(dir, "kafka-run"), cfg.StartTimeout); err != nil {
		return nil, err
	}
	cfg.Log.Info("Apache Kafka 4.4 serving", "addr", cfg.KafkaAddr, "startup", s.kafka.startup.Round(time.Millisecond))
	s.kafkaCPU = startCPUSampler(s.kafka.pid(), 10*time.Millisecond)

	// plugin.path holds one plugin: a link to Debezium's jars, loaded in
	// its own class loader as in a production install.
	plugins := filepath.Join(dir, "plugins")
	if err := os.MkdirAll(plugins, 0o755); err != nil {
		return nil, err
	}
	link := filepath.Join(plugins, "debezium-connector-postgres")
	_ = os.Remove(link)
	if err := os.Symlink(pluginDir, link); err != nil {
		return nil, err
	}
	props := filepath.Join(dir, "worker.properties")
	worker := connectWorkerProperties(cfg.KafkaAddr, cfg.ConnectAddr, plugins)
	maps.Copy(worker, cfg.ConnectProps)
	if err := writeProperties(props, worker); err != nil {
		return nil, err
	}
	log4j := filepath.Join(dir, "connect-log4j2.yaml")
	if err := os.WriteFile(log4j, []byte(connectLog4j), 0o644); err != nil {
		return nil, err
	}
	args := append(append([]string{}, connectJVMOpts...), "-Dlog4j2.configurationFile="+log4j,
		"-cp", classpath, "org.apache.kafka.connect.cli.ConnectDistributed", props)
	cmd := exec.Command("java", args...)
	connectStart := time.Now()
	if s.connect, err = startProcess(cmd, filepath.Join(dir, "connect.log")); err != nil {
		return nil, fmt.Errorf("start Kafka Connect: %w", err)
	}
	rest := &connectRun{cfg: &ConnectConfig{StartTimeout: cfg.StartTimeout, Log: cfg.Log}, dev: s.connect,
		http: &http.Client{Timeout: 30 * time.Second}, base: "http://" + cfg.ConnectAddr}
	if err := awaitPlugin(ctx, rest, CDCConnectorClass, cfg.StartTimeout, s.alive); err != nil {
		return nil, err
	}
	cfg.Log.Info("Kafka Connect 4.4 serving Debezium", "rest", rest.base, "pid", s.connect.pid(),
		"startup", time.Since(connectStart).Round(time.Millisecond))
	rest.cpu = startCPUSampler(s.connect.pid(), 10*time.Millisecond)
	if s.cl, err = kgo.NewClient(kgo.SeedBrokers(cfg.KafkaAddr)); err != nil {
		return nil, err
	}
	s.target = &cdcTarget{column: ColDebezium, rest: rest, addr: cfg.KafkaAddr, adm: kadm.NewClient(s.cl), alive: s.alive,
		procs: []*cpuSampler{s.kafkaCPU, rest.cpu}}
	if out, err := exec.Command("java", "-version").CombinedOutput(); err == nil {
		s.java, _, _ = strings.Cut(strings.TrimSpace(string(out)), "\n")
	}
	return s, nil
}

// connectWorkerProperties are `fjord dev`'s worker settings (Kafka's
// connect-distributed.properties sample, replication factor 1, offsets
// flushed every 10 s, no scheduled rebalance delay), so that both workers
// run the connector alike.
func connectWorkerProperties(kafkaAddr, restAddr, pluginPath string) map[string]string {
	host, port, _ := net.SplitHostPort(restAddr)
	return map[string]string{
		"bootstrap.servers":                 kafkaAddr,
		"group.id":                          "bench-debezium",
		"key.converter":                     jsonConverterClass,
		"value.converter":                   jsonConverterClass,
		"key.converter.schemas.enable":      "true",
		"value.converter.schemas.enable":    "true",
		"offset.storage.topic":              "connect-offsets",
		"offset.storage.replication.factor": "1",
		"config.storage.topic":              "connect-configs",
		"config.storage.replication.factor": "1",
		"status.storage.topic":              "connect-status",
		"status.storage.replication.factor": "1",
		"offset.flush.interval.ms":          "10000",
		"listeners":                         "http://" + restAddr,
		"rest.advertised.host.name":         host,
		"rest.advertised.port":              port,
		"plugin.path":                       pluginPath,
		"scheduled.rebalance.max.delay.ms":  "0",
	}
}

// connectLog4j keeps the worker's log to warnings (failures reach the
// benchmark through the REST status and its trace).
const connectLog4j = `Configuration:
  Appenders:
    Console: { name: STDOUT, PatternLayout: { pattern: "[%d] %p %m (%c)%n" } }
  Loggers:
    Root: { level: WARN, AppenderRef: [ { ref: STDOUT } ] }
`

// startProcess starts cmd with its output in logPath, killed with us.
func startProcess(cmd *exec.Cmd, logPath string) (*running, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child holds its own descriptor
	cmd.Stdout, cmd.Stderr = logf, logf
	dieWithParent(cmd)
	r := &running{cmd: cmd, logPath: logPath, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { r.waitErr = cmd.Wait(); close(r.done) }()
	return r, nil
}

// awaitPlugin waits until the worker's REST API knows class.
func awaitPlugin(ctx context.Context, rest *connectRun, class string, timeout time.Duration, alive func() error) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		ok, err := rest.hasPlugin(ctx, class)
		if err == nil && ok {
			return nil
		}
		last = err
		if err == nil {
			last = fmt.Errorf("%s is an unknown plugin", class)
		}
		if err := alive(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("Kafka Connect not serving %s after %s: %v: %s", class, timeout, last, logTail(rest.dev.logPath))
		}
		if !sleepCtx(ctx, 250*time.Millisecond) { // polling the REST API
			return ctx.Err()
		}
	}
}

// alive reports a JVM of the stack that exited, with its log's end.
func (s *debeziumStack) alive() error {
	for _, p := range []struct {
		name string
		r    *running
	}{{"Apache Kafka", s.kafka}, {"Kafka Connect", s.connect}} {
		if p.r == nil {
			continue
		}
		select {
		case <-p.r.done:
			return fmt.Errorf("%s exited (%v): %s", p.name, p.r.waitErr, logTail(p.r.logPath))
		default:
		}
	}
	return nil
}

// writeProperties writes a Java properties file, keys sorted.
func writeProperties(path string, props map[string]string) error {
	var b strings.Builder
	b.WriteString("# generated by fjord bench postgres\n")
	for _, k := range slices.Sorted(maps.Keys(props)) {
		fmt.Fprintf(&b, "%s=%s\n", k, props[k])
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// samplers are the CPU samplers of the stack's JVMs.
func (s *debeziumStack) samplers() []*cpuSampler {
	return []*cpuSampler{s.kafkaCPU, s.target.rest.cpu}
}

func (s *debeziumStack) stop(grace time.Duration) {
	if s.target != nil && s.target.rest.cpu != nil {
		s.target.rest.cpu.stop()
	}
	if s.kafkaCPU != nil {
		s.kafkaCPU.stop()
	}
	if s.cl != nil {
		s.cl.Close()
	}
	if s.connect != nil {
		s.connect.stop(grace)
	}
	if s.kafka != nil {
		s.kafka.stop(grace)
	}
}
