package bench

// The Connect benchmark (`fjord bench connect`, connect*.go) measures what
// the Connect runtime costs next to a plain franz-go client moving the
// same records, in one run against one fresh `fjord dev` (broker, Connect
// worker, schema registry in one process). Per converter (JsonConverter
// with schemas, AvroConverter on fjord dev's registry) it runs six phases,
// one at a time, each on its own 8-partition topic and each after fjord
// dev went idle:
//
//	raw-produce  franz-go producing datagen's records, encoded beforehand
//	app-produce  the same with datagen and the converter in the timed loop
//	source       the datagen connector (one task) writing N records
//	raw-consume  franz-go reading the raw topic from the start
//	app-consume  the same, decoding every key and value with the converter
//	sink         a NullSink connector (one task) reading the source's topic
//
// The raw phases are driver processes (`fjord bench connect produce|consume`)
// configured as the worker configures its clients (acks=all, no
// compression, linger 5 ms). The connector phases are timed from outside,
// through the Kafka protocol: the source by its topic's end offsets, the
// sink by its consumer group's committed offsets (the null sink asks for a
// commit every N/20 records, the last at N), both read every --poll. Every
// phase times records after the first tenth, so that client and connector
// start-up are excluded alike (start-up and end-to-end times are reported
// on their own rows). fjord dev's CPU time is sampled every 10 ms from
// /proc, so CPU per record covers every process over the same window. The
// first run checks that the source connector wrote the same bytes as the
// drivers (the records are deterministic: one datagen seed).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connectors/nullsink"
)

// DefaultConnectSpec is the datagen value of the Connect benchmark: ten
// fields of the common types (an order), keyed by id. With JsonConverter
// and schemas it encodes to about 930 bytes of key and value, with
// AvroConverter to about 110.
const DefaultConnectSpec = "id:int64:seq,customer:string:customer-{1..100000},email:string:user{1..999999}@example.com," +
	"amount:float64:0..10000,quantity:int32:1..100,paid:boolean,created:timestamp:1700000000000..1800000000000," +
	"status:string:NEW|PAID|SHIPPED|DELIVERED|RETURNED,score:float32:0..1,note:string:16..48"

// registryPath is where `fjord dev` serves its schema registry.
const registryPath = "/schema-registry"

// ConnectConfig is one `fjord bench connect`.
type ConnectConfig struct {
	Bin            string // the fjord binary run as `fjord dev`
	Addr, HTTPAddr string // its Kafka and HTTP listeners

	Records    int     // records per phase
	WarmupFrac float64 // the first share of each phase's records is not timed
	Converters []string
	Spec       string // datagen value.schema
	Seed       int64
	Pool       int // distinct records the raw producer encodes beforehand
	Runs       int // each figure is the median over runs
	// Verify compares, in the first run, the source connector's topic
	// with the topics the raw drivers wrote (same records, byte for byte).
	Verify bool

	Dir            string
	Keep           bool          // keep each run's data dir
	Poll           time.Duration // how often a Connect phase's progress is read
	StartTimeout   time.Duration
	PhaseTimeout   time.Duration
	StopGrace      time.Duration
	Self, Env      []string // reach the driver subcommands, as Config's
	Log            *slog.Logger
	ProfileDir     string // CPU profiles of fjord dev per phase, if set
	ProfileSeconds int

	CommandLine, Note string
	Quick             bool
	RecordMachine     bool
}

// Phases of one converter's run, in the order they run. The raw ones
// are franz-go driver processes; the connect ones run in fjord dev's
// worker.
const (
	PhaseRawProduce = "raw-produce" // franz-go sends bytes encoded beforehand
	PhaseAppProduce = "app-produce" // franz-go, datagen and the converter in the timed loop
	PhaseSource     = "source"      // datagen connector → topic
	PhaseRawConsume = "raw-consume" // franz-go reads bytes
	PhaseAppConsume = "app-consume" // franz-go reads and the converter decodes
	PhaseSink       = "sink"        // topic → NullSink connector
)

// PhaseResult is one phase of one run.
type PhaseResult struct {
	Run       int    `json:"run"`
	Converter string `json:"converter"`
	Phase     string `json:"phase"`

	Records       int64   `json:"records"` // timed records
	Seconds       float64 `json:"seconds"`
	RecordsPerSec float64 `json:"records_per_sec"`
	// CPU over the timed window: fjord dev (broker, and for connect
	// phases the worker) and the driver process (raw phases).
	BrokerCPUSeconds float64 `json:"broker_cpu_seconds"`
	ClientCPUSeconds float64 `json:"client_cpu_seconds"`
	// Bytes is the key+value bytes of all records (raw produce phases).
	Bytes int64 `json:"bytes,omitempty"`
	// Connect phases: from the connector's creation (POST) to the first
	// records seen and to the last.
	FirstMs    float64 `json:"first_ms,omitempty"`
	EndToEndMs float64 `json:"end_to_end_ms,omitempty"`
}

// CPUMicrosPerRecord is the CPU time all processes spent per timed record.
func (p PhaseResult) CPUMicrosPerRecord() float64 {
	if p.Records == 0 {
		return 0
	}
	return (p.BrokerCPUSeconds + p.ClientCPUSeconds) / float64(p.Records) * 1e6
}

func (c *ConnectConfig) validate() error {
	switch {
	case c.Records < 20:
		return fmt.Errorf("records %d: want at least 20", c.Records)
	case c.WarmupFrac < 0 || c.WarmupFrac >= 0.9:
		return fmt.Errorf("warm-up fraction %g: want 0 <= f < 0.9", c.WarmupFrac)
	case c.Runs < 1:
		return fmt.Errorf("runs %d: want >= 1", c.Runs)
	case len(c.Converters) == 0:
		return errors.New("no converters to measure")
	case len(c.Self) == 0:
		return errors.New("bench connect: Config.Self is empty")
	case c.Poll <= 0:
		return fmt.Errorf("poll interval %s: want > 0", c.Poll)
	}
	for _, cv := range c.Converters {
		if _, err := ConverterProps(cv, "http://registry"); err != nil {
			return err
		}
	}
	return nil
}

// RunConnect runs the Connect benchmark: per run, a fresh `fjord dev`,
// then for each converter the six phases. A run that fails is reported
// with what it measured and the error; the others still count.
func RunConnect(ctx context.Context, cfg ConnectConfig) (*ConnectReport, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	rep := &ConnectReport{
		Command: cfg.CommandLine, Date: time.Now().UTC(), Runs: cfg.Runs, Quick: cfg.Quick, Note: cfg.Note,
		Records: cfg.Records, Warmup: cfg.warmup(), Partitions: Partitions, Spec: cfg.Spec, Seed: cfg.Seed,
		Converters: cfg.Converters, Pool: cfg.Pool,
	}
	if cfg.RecordMachine {
		rep.Machine = ReadMachine(nil)
	}
	for run := 1; run <= cfg.Runs; run++ {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		cfg.Log.Info("connect benchmark", "run", run, "of", cfg.Runs, "records", cfg.Records)
		x := &connectRun{cfg: &cfg, run: run, rep: rep}
		if err := x.execute(ctx); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			cfg.Log.Error("connect benchmark run failed", "run", run, "err", err)
			rep.Errors = append(rep.Errors, fmt.Sprintf("run %d: %v", run, err))
		}
	}
	rep.build()
	return rep, nil
}

func (c *ConnectConfig) warmup() int { return int(float64(c.Records) * c.WarmupFrac) }

// connectRun is one run: one fjord dev process and its clients.
type connectRun struct {
	cfg *ConnectConfig
	run int
	rep *ConnectReport

	dev      *running
	cpu      *cpuSampler
	adm      *kadm.Client
	http     *http.Client
	base     string // http://HTTPAddr
	registry string
}

func (x *connectRun) execute(ctx context.Context) error {
	cfg := x.cfg
	dir := filepath.Join(cfg.Dir, fmt.Sprintf("connect-run%d", x.run))
	if !cfg.Keep {
		defer os.RemoveAll(dir)
	}
	target := &fjordTarget{bin: cfg.Bin, addr: cfg.Addr, httpAddr: cfg.HTTPAddr}
	dev, err := startTarget(ctx, target, dir, cfg.StartTimeout)
	if err != nil {
		return err
	}
	x.dev = dev
	defer dev.stop(cfg.StopGrace)
	x.base = "http://" + cfg.HTTPAddr
	x.registry = x.base + registryPath
	x.http = &http.Client{Timeout: 30 * time.Second}
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.Addr))
	if err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	defer cl.Close()
	x.adm = kadm.NewClient(cl)
	if err := x.awaitConnect(ctx); err != nil {
		return err
	}
	x.cpu = startCPUSampler(dev.pid(), 10*time.Millisecond)
	defer x.cpu.stop()
	cfg.Log.Info("fjord dev serving Connect", "pid", dev.pid(), "startup", dev.startup.Round(time.Millisecond))
	for _, conv := range cfg.Converters {
		if err := x.converter(ctx, conv); err != nil {
			return fmt.Errorf("%s: %w", conv, err)
		}
	}
	return nil
}

// awaitConnect waits until the worker answers its REST API (it has
// joined its group and read the config topic) and the registry answers.
func (x *connectRun) awaitConnect(ctx context.Context) error {
	deadline := time.Now().Add(x.cfg.StartTimeout)
	var last error
	for _, path := range []string{"/connectors", registryPath + "/subjects"} {
		for {
			code, body, err := x.do(ctx, http.MethodGet, path, nil)
			if err == nil && code == http.StatusOK {
				break
			}
			last = fmt.Errorf("GET %s: %d %s %v", path, code, body, err)
			if err := x.devAlive(); err != nil {
				return err
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("fjord dev's Connect worker or registry not ready after %s: %w", x.cfg.StartTimeout, last)
			}
			if !sleepCtx(ctx, 20*time.Millisecond) { // polling readiness
				return ctx.Err()
			}
		}
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (x *connectRun) devAlive() error {
	select {
	case <-x.dev.done:
		return fmt.Errorf("fjord dev exited (%v): %s", x.dev.waitErr, logTail(x.dev.logPath))
	default:
		return nil
	}
}

// do sends one REST request and returns the status and body.
func (x *connectRun) do(ctx context.Context, method, path string, body any) (int, string, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, "", err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, x.base+path, rd)
	if err != nil {
		return 0, "", err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := x.http.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, strings.TrimSpace(string(b)), nil
}

// converter runs the six phases for one converter.
func (x *connectRun) converter(ctx context.Context, conv string) error {
	cfg := x.cfg
	topic := func(kind string) string { return fmt.Sprintf("cb-%s-%s", conv, kind) }
	for _, kind := range []string{"raw", "app", "connect"} {
		if err := createTopic(ctx, cfg.Addr, topic(kind)); err != nil {
			return err
		}
	}
	record := func(p PhaseResult) {
		p.Run, p.Converter = x.run, conv
		x.rep.Phases = append(x.rep.Phases, p)
		cfg.Log.Info("phase", "converter", conv, "phase", p.Phase, "rec/s", int(p.RecordsPerSec),
			"cpu_us_per_rec", round2(p.CPUMicrosPerRecord()), "broker_cpu_s", round2(p.BrokerCPUSeconds),
			"client_cpu_s", round2(p.ClientCPUSeconds))
	}
	raw, err := x.driver(ctx, "produce", PhaseRawProduce, conv, topic("raw"), false, 0)
	if err != nil {
		return err
	}
	record(raw)
	app, err := x.driver(ctx, "produce", PhaseAppProduce, conv, topic("app"), true, 0)
	if err != nil {
		return err
	}
	record(app)
	src, err := x.source(ctx, conv, topic("connect"))
	if err != nil {
		return err
	}
	record(src)
	for _, c := range []struct {
		phase, topic string
		convert      bool
		bytes        int64
	}{{PhaseRawConsume, topic("raw"), false, raw.Bytes}, {PhaseAppConsume, topic("app"), true, app.Bytes}} {
		p, err := x.driver(ctx, "consume", c.phase, conv, c.topic, c.convert, c.bytes)
		if err != nil {
			return err
		}
		record(p)
	}
	sink, err := x.sink(ctx, conv, topic("connect"))
	if err != nil {
		return err
	}
	record(sink)
	if cfg.Verify && x.run == 1 {
		against := []string{topic("app")}
		if cfg.Pool >= cfg.Records {
			against = append(against, topic("raw"))
		}
		for _, t := range against {
			if err := sameRecords(ctx, cfg.Addr, topic("connect"), t, cfg.Records); err != nil {
				return fmt.Errorf("verify: %w", err)
			}
		}
		x.rep.Verified = append(x.rep.Verified, fmt.Sprintf("%s: %s = %s", conv, topic("connect"), strings.Join(against, " = ")))
		cfg.Log.Info("verified: the source connector wrote the raw drivers' records", "converter", conv, "topics", against)
	}
	return nil
}

// driver runs one raw driver process and reads the broker's CPU use over
// its timed window.
func (x *connectRun) driver(ctx context.Context, mode, phase, conv, topic string, convert bool, expectBytes int64) (PhaseResult, error) {
	cfg := x.cfg
	args := []string{"--brokers", cfg.Addr, "--topic", topic, "--records", strconv.Itoa(cfg.Records),
		"--warmup", strconv.Itoa(cfg.warmup()), "--converter", conv, "--registry", x.registry,
		"--schema", cfg.Spec, "--seed", strconv.FormatInt(cfg.Seed, 10), "--pool", strconv.Itoa(cfg.Pool),
		"--convert=" + strconv.FormatBool(convert), "--expect-bytes", strconv.FormatInt(expectBytes, 10),
		"--timeout", cfg.PhaseTimeout.String()}
	x.settle(ctx)
	stopProfile := x.profile(ctx, conv, phase)
	res, err := runConnectDriver(ctx, cfg, mode, args)
	stopProfile()
	if err != nil {
		return PhaseResult{}, fmt.Errorf("%s: %w", phase, err)
	}
	if err := x.devAlive(); err != nil {
		return PhaseResult{}, err
	}
	from, to := time.Unix(0, res.StartUnixNano), time.Unix(0, res.EndUnixNano)
	p := PhaseResult{Phase: phase, Records: res.Records, Seconds: res.Seconds, RecordsPerSec: res.RecordsPerSec,
		ClientCPUSeconds: res.ClientCPUSeconds, BrokerCPUSeconds: x.cpu.between(from, to).Seconds()}
	if mode == "produce" {
		p.Bytes = res.TotalBytes
	}
	return p, nil
}

// runConnectDriver runs `bench connect produce|consume` as a child
// process and decodes the JSON line it prints last.
func runConnectDriver(ctx context.Context, cfg *ConnectConfig, mode string, args []string) (ConnectResult, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.PhaseTimeout+30*time.Second)
	defer cancel()
	full := append(append(append([]string{}, cfg.Self[1:]...), "connect", mode), args...)
	cmd := exec.CommandContext(ctx, cfg.Self[0], full...)
	cmd.Env = append(os.Environ(), cfg.Env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	dieWithParent(cmd)
	if err := cmd.Run(); err != nil {
		return ConnectResult{}, fmt.Errorf("%s driver: %w: %s", mode, err, tail(stderr.Bytes(), 1500))
	}
	lines := bytes.Split(bytes.TrimSpace(stdout.Bytes()), []byte("\n"))
	var res ConnectResult
	if err := json.Unmarshal(lines[len(lines)-1], &res); err != nil {
		return ConnectResult{}, fmt.Errorf("%s driver printed %q: %w", mode, tail(stdout.Bytes(), 300), err)
	}
	if res.Mode != mode || res.Records <= 0 || res.EndUnixNano <= res.StartUnixNano {
		return ConnectResult{}, fmt.Errorf("%s driver result %+v is not a %s result", mode, res, mode)
	}
	return res, nil
}

// source runs the datagen connector into topic and times it from the
// broker's side: the topic's end offsets, read every Poll.
func (x *connectRun) source(ctx context.Context, conv, topic string) (PhaseResult, error) {
	cfg := x.cfg
	name := "bench-source-" + conv
	config := DatagenProps(topic, cfg.Spec, cfg.Seed, cfg.Records)
	config["connector.class"] = "datagen"
	config["tasks.max"] = "1"
	return x.connectPhase(ctx, PhaseSource, conv, name, config, func(ctx context.Context) (int64, error) {
		offs, err := x.adm.ListEndOffsets(ctx, topic)
		if err != nil {
			return 0, err
		}
		var n int64
		offs.Each(func(o kadm.ListedOffset) {
			if o.Err == nil {
				n += o.Offset
			}
		})
		return n, offs.Error()
	})
}

// sinkCommits is how many offset commits the null sink asks for over a
// phase: its progress, as the benchmark sees it, moves in these steps.
const sinkCommits = 20

// sink runs a NullSink connector over topic (which the source filled)
// and times it from the consumer group's committed offsets: the sink
// asks for a commit every Records/sinkCommits records, the last when it
// has them all.
func (x *connectRun) sink(ctx context.Context, conv, topic string) (PhaseResult, error) {
	cfg := x.cfg
	name := "bench-sink-" + conv
	config := map[string]string{
		"connector.class": nullsink.ConnectorClass, "topics": topic, "tasks.max": "1",
		nullsink.CommitEveryConfig: strconv.Itoa(commitEvery(cfg.Records)),
	}
	group := "connect-" + name
	return x.connectPhase(ctx, PhaseSink, conv, name, config, func(ctx context.Context) (int64, error) {
		offs, err := x.adm.FetchOffsets(ctx, group)
		if err != nil {
			return 0, err
		}
		var n int64
		offs.Each(func(o kadm.OffsetResponse) {
			if o.Topic == topic && o.Err == nil && o.At > 0 {
				n += o.At
			}
		})
		return n, nil
	})
}

// commitEvery is the largest step of at most n/sinkCommits records that
// divides n, so that the sink's last requested commit lands on n.
func commitEvery(n int) int {
	for k := sinkCommits; k > 1; k-- {
		if n%k == 0 {
			return n / k
		}
	}
	return n
}

// connectPhase creates the connector, reads count every Poll until it
// reaches Records, and deletes the connector. The timed window runs from
// the first reading at or past the warm-up share to the first reading
// of all records, so that connector start-up (rebalances, task start,
// group join) is excluded as the raw drivers exclude client start-up;
// the start-up and end-to-end times are reported beside it.
func (x *connectRun) connectPhase(ctx context.Context, phase, conv, name string, config map[string]string,
	count func(context.Context) (int64, error)) (PhaseResult, error) {
	cfg := x.cfg
	for k, v := range mustConverterProps(conv, x.registry) {
		config[k] = v
	}
	config["name"] = name
	x.settle(ctx)
	stopProfile := x.profile(ctx, conv, phase)
	defer stopProfile()
	posted := time.Now()
	if err := x.create(ctx, name, config); err != nil {
		return PhaseResult{}, fmt.Errorf("%s: %w", phase, err)
	}
	defer x.remove(name)

	want, warm := int64(cfg.Records), int64(cfg.warmup())
	var (
		first, warmAt, endAt time.Time
		warmN, lastN         int64
		lastStatus           = time.Now()
	)
	deadline := posted.Add(cfg.PhaseTimeout)
	for {
		n, err := count(ctx)
		now := time.Now()
		if err == nil {
			lastN = n
			if n > 0 && first.IsZero() {
				first = now
			}
			if n >= warm && warmAt.IsZero() && n < want {
				warmAt, warmN = now, n
			}
			if n >= want {
				endAt = now
				break
			}
		}
		if err := x.devAlive(); err != nil {
			return PhaseResult{}, err
		}
		if now.Sub(lastStatus) > 500*time.Millisecond {
			lastStatus = now
			if err := x.failed(ctx, name); err != nil {
				return PhaseResult{}, fmt.Errorf("%s: %w", phase, err)
			}
		}
		if now.After(deadline) {
			return PhaseResult{}, fmt.Errorf("%s: %d of %d records after %s (last error: %v)", phase, lastN, want, cfg.PhaseTimeout, err)
		}
		if !sleepCtx(ctx, cfg.Poll) { // polling progress, as a lag monitor does
			return PhaseResult{}, ctx.Err()
		}
	}
	if lastN > want {
		return PhaseResult{}, fmt.Errorf("%s: %d records, want %d (duplicates)", phase, lastN, want)
	}
	if warmAt.IsZero() {
		return PhaseResult{}, fmt.Errorf("%s: all %d records arrived before a reading past the warm-up; use more records", phase, want)
	}
	secs := max(endAt.Sub(warmAt).Seconds(), 1e-9)
	return PhaseResult{Phase: phase, Records: want - warmN, Seconds: secs, RecordsPerSec: float64(want-warmN) / secs,
		BrokerCPUSeconds: x.cpu.between(warmAt, endAt).Seconds(),
		FirstMs:          ms(first.Sub(posted)), EndToEndMs: ms(endAt.Sub(posted))}, nil
}

func mustConverterProps(conv, registry string) map[string]string {
	p, err := ConverterProps(conv, registry)
	if err != nil {
		panic(err) // validated by ConnectConfig.validate
	}
	return p
}

// create POSTs a connector, retrying while the worker rebalances (409).
func (x *connectRun) create(ctx context.Context, name string, config map[string]string) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, body, err := x.do(ctx, http.MethodPost, "/connectors", map[string]any{"name": name, "config": config})
		switch {
		case err == nil && code == http.StatusCreated:
			return nil
		case err == nil && code != http.StatusConflict && code < 500:
			return fmt.Errorf("create connector %s: %d %s", name, code, body)
		case time.Now().After(deadline):
			return fmt.Errorf("create connector %s: %d %s %v", name, code, body, err)
		}
		if !sleepCtx(ctx, 100*time.Millisecond) { // the worker is rebalancing
			return ctx.Err()
		}
	}
}

// remove deletes a connector and waits until the worker forgot it, so
// that its task (stopping, committing its offsets) does not run beside
// the next phase.
func (x *connectRun) remove(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if code, body, err := x.do(ctx, http.MethodDelete, "/connectors/"+name, nil); err != nil || code != http.StatusNoContent {
		x.cfg.Log.Warn("could not delete connector", "connector", name, "code", code, "body", body, "err", err)
		return
	}
	for {
		code, _, err := x.do(ctx, http.MethodGet, "/connectors/"+name+"/status", nil)
		if err == nil && code == http.StatusNotFound {
			return
		}
		if !sleepCtx(ctx, 20*time.Millisecond) { // polling the deletion
			x.cfg.Log.Warn("connector still listed after deletion", "connector", name)
			return
		}
	}
}

// settle waits until fjord dev is idle (under a tenth of a core over a
// quarter second), at most 15 s, so that each phase starts from the same
// state: no leftover work of the previous phase (a stopping task's
// offset commit, garbage collection) is measured in the next.
func (x *connectRun) settle(ctx context.Context) {
	const window = 250 * time.Millisecond
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		from := time.Now()
		if !sleepCtx(ctx, window) {
			return
		}
		if x.cpu.between(from, time.Now()) < window/10 {
			return
		}
	}
	x.cfg.Log.Warn("fjord dev still busy before the next phase; measuring anyway")
}

// failed reports a FAILED connector or task, with its trace.
func (x *connectRun) failed(ctx context.Context, name string) error {
	code, body, err := x.do(ctx, http.MethodGet, "/connectors/"+name+"/status", nil)
	if err != nil || code != http.StatusOK {
		return nil // not known yet (rebalancing); the deadline catches a worker that never answers
	}
	var st struct {
		Connector struct{ State, Trace string }
		Tasks     []struct {
			ID           int
			State, Trace string
		}
	}
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		return fmt.Errorf("status of %s: %w: %s", name, err, body)
	}
	if st.Connector.State == "FAILED" {
		return fmt.Errorf("connector %s failed: %s", name, oneLine(st.Connector.Trace, 1500))
	}
	for _, t := range st.Tasks {
		if t.State == "FAILED" {
			return fmt.Errorf("task %s-%d failed: %s", name, t.ID, oneLine(t.Trace, 1500))
		}
	}
	return nil
}

// profile captures a CPU profile of fjord dev for ProfileSeconds from
// now, when profiling was asked for; the returned func waits for it so
// that it never overlaps the next phase.
func (x *connectRun) profile(ctx context.Context, conv, phase string) func() {
	cfg := x.cfg
	if cfg.ProfileDir == "" {
		return func() {}
	}
	done := make(chan struct{})
	path := filepath.Join(cfg.ProfileDir, fmt.Sprintf("run%d-%s-%s.pprof", x.run, conv, phase))
	go func() {
		defer close(done)
		cl := &http.Client{Timeout: time.Duration(cfg.ProfileSeconds+30) * time.Second}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet,
			fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", x.base, cfg.ProfileSeconds), nil)
		if err == nil {
			var resp *http.Response
			if resp, err = cl.Do(req); err == nil {
				var b []byte
				b, err = io.ReadAll(resp.Body)
				resp.Body.Close()
				if err == nil && resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("%s: %s", resp.Status, b)
				}
				if err == nil {
					err = os.WriteFile(path, b, 0o644)
				}
			}
		}
		if err != nil {
			cfg.Log.Warn("CPU profile failed", "phase", phase, "err", err)
			return
		}
		cfg.Log.Info("CPU profile written", "file", path)
	}()
	return func() { <-done }
}
