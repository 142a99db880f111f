package bench

// The S3 sink benchmark (`fjord bench s3`, s3*.go) measures issue 6's
// goal: records through the S3 sink into a local S3 server (MinIO) beside
// a plain upload of the same bytes by the same SDK in the same run.
//
// One MinIO (a temp dir on local disk) and one `fjord dev` serve every
// run; Records JSON-envelope records are produced once, before anything
// is timed, into a topic of Partitions partitions. Each run then does,
// one after another and each on a fresh bucket:
//
//	json         an S3 sink (JsonFormat, tasks.max = Partitions) created
//	             by POST /connectors; timed from the POST until every
//	             complete file (flush.size records) is listed in the bucket
//	raw json     the same number of objects of the same sizes and keys
//	             (random bytes made beforehand) uploaded with
//	             storage.Store.Put — PutObject below s3.part.size, the
//	             SDK's upload manager above — PutConcurrency at once
//	parquet      the same sink with ParquetFormat (parquet.codec=snappy)
//	raw parquet  the raw upload of the Parquet objects' sizes
//
// JSON's ratio is sink bytes/s ÷ raw bytes/s (goal ≥ 0.7). Parquet's
// objects are far smaller than the JSON they hold, so its ratio compares
// records: Parquet records/s ÷ the records/s that the raw upload of the
// same records as JSON objects reached (the "raw json" phase of the run).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connectors/s3/storage"

	"github.com/fjordhq/fjord/internal/bench/s3records"
)

// Formats of `fjord bench s3`, and what the sink's format.class is for each.
const (
	S3FormatJSON    = "json"
	S3FormatParquet = "parquet"
)

// S3SinkConnectorClass is the connector under test.
const S3SinkConnectorClass = "io.confluent.connect.s3.S3SinkConnector"

var s3FormatClasses = map[string]string{
	S3FormatJSON:    "io.confluent.connect.s3.format.json.JsonFormat",
	S3FormatParquet: "io.confluent.connect.s3.format.parquet.ParquetFormat",
}

// s3Topic is the topic every run's sinks read.
const s3Topic = "bench-s3-orders"

// S3BenchConfig is one `fjord bench s3`.
type S3BenchConfig struct {
	Bin            string // the fjord binary run as `fjord dev`
	Addr, HTTPAddr string // fjord dev's Kafka and HTTP listeners
	MinioBin       string
	MinioAddr      string

	Records    int
	Partitions int
	FlushSize  int
	Formats    []string
	Runs       int
	// PartSize is s3.part.size for the sink and the raw upload alike
	// (0: the sink's default, 25 MiB).
	PartSize int64
	// PutConcurrency is how many objects the raw upload sends at once.
	PutConcurrency int
	Poll           time.Duration // bucket listings while a sink runs

	// ProfileDir, when set, gets a CPU profile of fjord dev per sink
	// phase, ProfileSeconds long from the POST.
	ProfileDir     string
	ProfileSeconds int

	// Limits measures loopback TCP and disk write throughput first.
	Limits        bool
	DiskTestBytes int64

	Dir                                   string
	Keep                                  bool
	StartTimeout, PhaseTimeout, StopGrace time.Duration
	Log                                   *slog.Logger

	CommandLine, Note string
	Quick             bool
	RecordMachine     bool
}

func (c *S3BenchConfig) validate() error {
	switch {
	case c.Partitions < 1:
		return fmt.Errorf("partitions %d: want ≥ 1", c.Partitions)
	case c.FlushSize < 1:
		return fmt.Errorf("flush size %d: want ≥ 1", c.FlushSize)
	case c.Records/c.Partitions < c.FlushSize:
		return fmt.Errorf("%d records over %d partitions fill no file of flush.size %d: want records ≥ partitions × flush size",
			c.Records, c.Partitions, c.FlushSize)
	case c.Runs < 1:
		return fmt.Errorf("runs %d: want ≥ 1", c.Runs)
	case c.PartSize != 0 && c.PartSize < 5<<20:
		return fmt.Errorf("part size %d: S3's smallest part is 5 MiB", c.PartSize)
	case c.PutConcurrency < 1:
		return fmt.Errorf("put concurrency %d: want ≥ 1", c.PutConcurrency)
	case c.Poll <= 0:
		return errors.New("poll interval must be > 0")
	case c.PhaseTimeout <= 0:
		return errors.New("phase timeout must be > 0")
	case len(c.Formats) == 0:
		return errors.New("no formats")
	case c.Dir == "":
		return errors.New("no data dir")
	}
	for _, f := range c.Formats {
		if _, ok := s3FormatClasses[f]; !ok {
			return fmt.Errorf("format %q: want json or parquet", f)
		}
	}
	return nil
}

// expectedFiles is, per partition, how many complete files the sink
// writes (the rest of a partition's records stay in an open file, which
// no rotation closes), and how many records those files hold.
func (c *S3BenchConfig) expectedFiles() (objects int, records int64) {
	for _, n := range s3PartitionRecords(c.Records, c.Partitions) {
		files := n / int64(c.FlushSize)
		objects += int(files)
		records += files * int64(c.FlushSize)
	}
	return objects, records
}

// RunS3Bench runs the benchmark. A phase that fails is reported with its
// error and the others still run.
func RunS3Bench(ctx context.Context, cfg S3BenchConfig) (*S3Report, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	objects, records := cfg.expectedFiles()
	rep := &S3Report{
		Command: cfg.CommandLine, Date: time.Now().UTC(), Runs: cfg.Runs, Quick: cfg.Quick, Note: cfg.Note,
		Records: cfg.Records, Partitions: cfg.Partitions, FlushSize: cfg.FlushSize, Formats: cfg.Formats,
		Objects: objects, FileRecords: records, PartSize: cfg.PartSize, PutConcurrency: cfg.PutConcurrency,
		PollMs: ms(cfg.Poll),
	}
	if rep.PartSize == 0 {
		rep.PartSize = storage.DefaultPartSize
	}
	k, v := s3Record(1, nil)
	rep.EnvelopeBytes, rep.PayloadBytes = len(k)+len(v), len(s3records.AppendPayload(nil, 1))
	if cfg.RecordMachine {
		rep.Machine = ReadMachine(nil)
	}

	rep.Minio = minioVersion(cfg.MinioBin)
	cfg.Log.Info("starting MinIO", "bin", cfg.MinioBin, "version", rep.Minio, "addr", cfg.MinioAddr)
	minio, err := startMinio(ctx, cfg.MinioBin, filepath.Join(cfg.Dir, "minio"), cfg.MinioAddr, cfg.StartTimeout)
	if err != nil {
		return nil, err
	}
	defer minio.stop(cfg.StopGrace)
	if cfg.Limits {
		measureS3Limits(&cfg, rep, minio.dataDir)
	}

	dir := filepath.Join(cfg.Dir, "fjord")
	dev, err := startTarget(ctx, &fjordTarget{bin: cfg.Bin, addr: cfg.Addr, httpAddr: cfg.HTTPAddr}, dir, cfg.StartTimeout)
	if err != nil {
		return nil, err
	}
	defer dev.stop(cfg.StopGrace)
	rest := &connectRun{cfg: &ConnectConfig{StartTimeout: cfg.StartTimeout, Log: cfg.Log,
		ProfileDir: cfg.ProfileDir, ProfileSeconds: cfg.ProfileSeconds},
		dev: dev, http: &http.Client{Timeout: 30 * time.Second}, base: "http://" + cfg.HTTPAddr}
	if err := rest.awaitConnect(ctx); err != nil {
		return nil, err
	}
	has, err := rest.hasPlugin(ctx, S3SinkConnectorClass)
	if err != nil {
		return nil, err
	}
	if !has {
		return nil, fmt.Errorf("fjord dev has no %s (GET /connector-plugins/%s/config: 404)", S3SinkConnectorClass, S3SinkConnectorClass)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.Addr))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	if err := createS3Topic(ctx, kadm.NewClient(cl), s3Topic, cfg.Partitions); err != nil {
		return nil, err
	}
	cfg.Log.Info("producing the records (not timed)", "topic", s3Topic, "records", cfg.Records, "partitions", cfg.Partitions)
	produced := time.Now()
	if err := produceS3Records(ctx, cfg.Addr, s3Topic, cfg.Records, cfg.Partitions, cfg.PhaseTimeout); err != nil {
		return nil, err
	}
	cfg.Log.Info("produced", "seconds", round2(time.Since(produced).Seconds()))

	x := &s3Bench{cfg: &cfg, rep: rep, rest: rest, minio: minio,
		endpoint: s3Endpoint{url: minio.url(), partSize: cfg.PartSize},
		devCPU:   startCPUSampler(dev.pid(), 10*time.Millisecond),
		minioCPU: startCPUSampler(minio.pid(), 10*time.Millisecond)}
	defer x.devCPU.stop()
	defer x.minioCPU.stop()
	// sampleLoad fills a cluster report's Load; borrow one for ours.
	load := &ClusterReport{}
	stopLoad := sampleLoad(load)
	defer stopLoad()
	for run := 1; run <= cfg.Runs; run++ {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		cfg.Log.Info("S3 benchmark", "run", run, "of", cfg.Runs, "records", cfg.Records)
		x.run = run
		for _, f := range cfg.Formats {
			if err := x.format(ctx, f); err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				x.fail(f, err)
			}
		}
	}
	stopLoad()
	rep.Load = load.Load
	rep.build()
	return rep, nil
}

// measureS3Limits measures the machine's loopback TCP and the disk under
// MinIO's data directory, for reading the figures against.
func measureS3Limits(cfg *S3BenchConfig, rep *S3Report, dir string) {
	var err error
	if rep.Limits.LoopbackMBps, err = MeasureLoopback(time.Second); err != nil {
		cfg.Log.Warn("loopback measurement failed", "err", err)
	}
	if rep.Limits.DiskWriteMBps, err = MeasureDiskWrite(dir, cfg.DiskTestBytes); err != nil {
		cfg.Log.Warn("disk measurement failed", "err", err)
	}
	rep.Limits.DiskDir = dir
}

// s3Bench is the state every run shares.
type s3Bench struct {
	cfg      *S3BenchConfig
	rep      *S3Report
	run      int
	rest     *connectRun
	minio    *minioServer
	endpoint s3Endpoint
	devCPU   *cpuSampler
	minioCPU *cpuSampler
	payload  []byte // the raw upload's bytes, random, grown to the largest object
	verified map[string]bool
}

func (x *s3Bench) fail(what string, err error) {
	x.cfg.Log.Error("failed", "run", x.run, "what", what, "err", err)
	x.rep.Errors = append(x.rep.Errors, fmt.Sprintf("run %d: %s: %v", x.run, what, err))
}

func (x *s3Bench) record(s S3Sample) {
	s.Run = x.run
	x.rep.Samples = append(x.rep.Samples, s)
	x.cfg.Log.Info("measured", "run", x.run, "format", s.Format, "column", s.Column, "objects", s.Objects,
		"MB/s", round2(s.MBps()), "rec/s", int64(s.RecordsPerSec()), "seconds", round2(s.Seconds))
}

// format runs one format's sink phase and the raw upload of the same
// object sizes, each on a bucket of its own, removed afterwards.
func (x *s3Bench) format(ctx context.Context, f string) error {
	bucket := fmt.Sprintf("bench-r%d-%s", x.run, f)
	sink, err := x.sinkPhase(ctx, f, bucket)
	if err != nil {
		return fmt.Errorf("sink: %w", err)
	}
	x.record(sink.sample)
	raw, err := x.rawPhase(ctx, f, bucket+"-raw", sink.objects)
	if err != nil {
		return fmt.Errorf("raw upload: %w", err)
	}
	x.record(raw)
	return nil
}

// settle waits until fjord dev and MinIO are idle — together under a
// tenth of a core over a quarter second — at most 15 s, so that a phase
// does not measure what the previous one left running (a deleted task
// stopping, MinIO's background work after deletes, garbage collection).
func (x *s3Bench) settle(ctx context.Context) {
	const window = 250 * time.Millisecond
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		from := time.Now()
		if !sleepCtx(ctx, window) {
			return
		}
		now := time.Now()
		if x.devCPU.between(from, now)+x.minioCPU.between(from, now) < window/10 {
			return
		}
	}
	x.cfg.Log.Warn("fjord dev or MinIO still busy before the next phase; measuring anyway")
}

// alive is nil while both servers run.
func (x *s3Bench) alive() error {
	if err := x.rest.devAlive(); err != nil {
		return err
	}
	return x.minio.alive()
}

// cleanup removes a phase's bucket (not timed), unless --keep asked to
// keep the data.
func (x *s3Bench) cleanup(bucket string) {
	if x.cfg.Keep {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := x.endpoint.store(ctx, bucket)
	if err == nil {
		err = dropBucket(ctx, st)
	}
	if err != nil {
		x.cfg.Log.Warn("could not remove the bucket", "bucket", bucket, "err", err)
	}
}

// procCPU is this process's CPU time so far (the raw upload runs here).
func procCPU() time.Duration {
	c, err := ProcessCPU(os.Getpid())
	if err != nil {
		return 0
	}
	return c
}

// sortedSizes are a listing's object sizes in key order.
func sortedSizes(c bucketContents) (keys []string, sizes []int64) {
	keys = make([]string, 0, len(c.sizes))
	for k := range c.sizes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		sizes = append(sizes, c.sizes[k])
	}
	return keys, sizes
}
