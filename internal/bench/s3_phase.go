package bench

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fjordhq/fjord/connectors/s3/storage"
)

// Columns of the S3 report.
const (
	ColS3Raw  = "raw"  // storage.Store.Put of the same object sizes
	ColS3Sink = "sink" // the S3 sink in fjord dev
)

// sinkResult is a sink phase's sample and what it left in the bucket.
type sinkResult struct {
	sample  S3Sample
	objects bucketContents
}

// sinkConfig is the connector's configuration: Confluent's keys, the
// sink's defaults for everything the benchmark does not name.
func (x *s3Bench) sinkConfig(name, format, bucket string) map[string]string {
	cfg := x.cfg
	c := x.endpoint.props(bucket)
	for k, v := range map[string]string{
		"name":                           name,
		"connector.class":                S3SinkConnectorClass,
		"tasks.max":                      strconv.Itoa(cfg.Partitions),
		"topics":                         s3Topic,
		"storage.class":                  "io.confluent.connect.s3.storage.S3Storage",
		"format.class":                   s3FormatClasses[format],
		"flush.size":                     strconv.Itoa(cfg.FlushSize),
		"key.converter":                  "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":                jsonConverterClass,
		"value.converter.schemas.enable": "true",
	} {
		c[k] = v
	}
	if format == S3FormatParquet {
		c["parquet.codec"] = "snappy"
	}
	return c
}

// expectedKeyPrefixes are the keys of the complete files, up to their
// extension: DefaultPartitioner's topics/T/partition=P/T+P+OFFSET, the
// start offset zero-padded to 10 digits (Confluent's naming).
func (c *S3BenchConfig) expectedKeyPrefixes() []string {
	var out []string
	for p, n := range s3PartitionRecords(c.Records, c.Partitions) {
		for off := int64(0); off+int64(c.FlushSize) <= n; off += int64(c.FlushSize) {
			out = append(out, fmt.Sprintf("topics/%s/partition=%d/%s+%d+%010d.", s3Topic, p, s3Topic, p, off))
		}
	}
	return out
}

// checkKeys reports whether the listing holds exactly one object per
// expected key prefix and nothing else.
func checkKeys(c bucketContents, prefixes []string) error {
	matched := map[string]string{}
	for key := range c.sizes {
		i := strings.LastIndexByte(key, '+')
		dot := -1
		if i >= 0 {
			dot = strings.IndexByte(key[i:], '.')
		}
		if dot < 0 {
			return fmt.Errorf("object %s is not named as the sink names its files (topics/T/partition=P/T+P+OFFSET.ext)", key)
		}
		p := key[:i+dot+1]
		if other, dup := matched[p]; dup {
			return fmt.Errorf("two objects for one file: %s and %s", other, key)
		}
		matched[p] = key
	}
	for _, p := range prefixes {
		if _, ok := matched[p]; !ok {
			have := make([]string, 0, 3)
			for _, k := range matched {
				if len(have) < 3 {
					have = append(have, k)
				}
			}
			return fmt.Errorf("no object %s* among the %d listed (e.g. %s)", p, len(matched), strings.Join(have, ", "))
		}
	}
	if len(matched) != len(prefixes) {
		return fmt.Errorf("%d objects listed, want %d", len(matched), len(prefixes))
	}
	return nil
}

// sinkPhase creates the sink on a fresh bucket and times it from the
// POST until every complete file is listed (ListObjectsV2 every Poll).
func (x *s3Bench) sinkPhase(ctx context.Context, format, bucket string) (sinkResult, error) {
	cfg := x.cfg
	st, err := x.endpoint.store(ctx, bucket)
	if err != nil {
		return sinkResult{}, err
	}
	if err := st.CreateBucket(ctx); err != nil {
		return sinkResult{}, err
	}
	defer x.cleanup(bucket)
	name := fmt.Sprintf("bench-s3-r%d-%s", x.run, format)
	config := x.sinkConfig(name, format, bucket)
	prefixes := cfg.expectedKeyPrefixes()
	want, wantRecords := cfg.expectedFiles()

	x.settle(ctx)
	x.rest.run = x.run
	waitProfile := x.rest.profile(ctx, format, "sink")
	defer waitProfile()
	queued := runQueueWait(x.rest.dev.pid()) + runQueueWait(x.minio.pid())
	posted := time.Now()
	if err := x.rest.create(ctx, name, config); err != nil {
		return sinkResult{}, err
	}
	defer x.rest.remove(name)

	var (
		c                   bucketContents
		first, end          time.Time
		lastStatus, lastLog = posted, posted
		lerr                error
	)
	deadline := posted.Add(cfg.PhaseTimeout)
	for {
		var got bucketContents
		got, lerr = listBucket(ctx, st)
		now := time.Now()
		if lerr == nil {
			c = got
			if c.objects() > 0 && first.IsZero() {
				first = now
			}
			if c.objects() >= want {
				end = now
				break
			}
		}
		if err := x.alive(); err != nil {
			return sinkResult{}, err
		}
		if now.Sub(lastStatus) > 500*time.Millisecond {
			lastStatus = now
			if err := x.rest.failed(ctx, name); err != nil {
				return sinkResult{}, err
			}
		}
		if now.Sub(lastLog) > 5*time.Second {
			lastLog = now
			cfg.Log.Info("waiting for the sink", "format", format, "objects", c.objects(), "of", want, "MB", c.bytes/1e6)
		}
		if now.After(deadline) {
			return sinkResult{}, fmt.Errorf("%d of %d objects in the bucket after %s (last listing error: %v)", c.objects(), want, cfg.PhaseTimeout, lerr)
		}
		if !sleepCtx(ctx, cfg.Poll) { // listing the bucket, the only progress a sink shows outside
			return sinkResult{}, ctx.Err()
		}
	}
	queued = runQueueWait(x.rest.dev.pid()) + runQueueWait(x.minio.pid()) - queued
	devCPU, minioCPU := x.devCPU.between(posted, end), x.minioCPU.between(posted, end)
	if err := checkKeys(c, prefixes); err != nil {
		return sinkResult{}, err
	}
	if !x.verified[format] {
		v, err := verifyObject(ctx, st, format, c, cfg)
		if err != nil {
			return sinkResult{}, fmt.Errorf("check the contents: %w", err)
		}
		if x.verified == nil {
			x.verified = map[string]bool{}
		}
		x.verified[format] = true
		x.rep.Verified = append(x.rep.Verified, v)
	}
	return sinkResult{objects: c, sample: S3Sample{
		Format: format, Column: ColS3Sink, Objects: c.objects(), Bytes: c.bytes, Records: wantRecords,
		Seconds: max(end.Sub(posted).Seconds(), 1e-9), FirstMs: ms(first.Sub(posted)),
		UploaderCPUSeconds: devCPU.Seconds(), MinioCPUSeconds: minioCPU.Seconds(), RunQueueSeconds: max(queued.Seconds(), 0),
	}}, nil
}

// rawPhase uploads objects of the sizes the sink wrote, under the same
// keys, into a fresh bucket with storage.Store.Put, PutConcurrency at
// once, from random bytes made before the clock starts.
func (x *s3Bench) rawPhase(ctx context.Context, format, bucket string, like bucketContents) (S3Sample, error) {
	cfg := x.cfg
	st, err := x.endpoint.store(ctx, bucket)
	if err != nil {
		return S3Sample{}, err
	}
	if err := st.CreateBucket(ctx); err != nil {
		return S3Sample{}, err
	}
	defer x.cleanup(bucket)
	keys, sizes := sortedSizes(like)
	var largest int64
	for _, s := range sizes {
		largest = max(largest, s)
	}
	x.growPayload(largest)

	x.settle(ctx)
	ctx, cancel := context.WithTimeout(ctx, cfg.PhaseTimeout)
	defer cancel()
	queued := runQueueWait(os.Getpid()) + runQueueWait(x.minio.pid())
	cpu0, start := procCPU(), time.Now()
	if err := putAll(ctx, st, keys, sizes, x.payload, cfg.PutConcurrency); err != nil {
		return S3Sample{}, err
	}
	end := time.Now()
	queued = runQueueWait(os.Getpid()) + runQueueWait(x.minio.pid()) - queued
	ownCPU := procCPU() - cpu0
	minioCPU := x.minioCPU.between(start, end)

	got, err := listBucket(ctx, st)
	if err != nil {
		return S3Sample{}, err
	}
	if got.objects() != like.objects() || got.bytes != like.bytes {
		return S3Sample{}, fmt.Errorf("the bucket holds %d objects, %d bytes after the upload; want %d, %d",
			got.objects(), got.bytes, like.objects(), like.bytes)
	}
	_, records := cfg.expectedFiles()
	return S3Sample{Format: format, Column: ColS3Raw, Objects: got.objects(), Bytes: got.bytes, Records: records,
		Seconds: max(end.Sub(start).Seconds(), 1e-9), UploaderCPUSeconds: ownCPU.Seconds(), MinioCPUSeconds: minioCPU.Seconds(),
		RunQueueSeconds: max(queued.Seconds(), 0)}, nil
}

// growPayload makes the raw upload's bytes at least n long: random, so
// that nothing on the way can compress them.
func (x *s3Bench) growPayload(n int64) {
	if int64(len(x.payload)) >= n {
		return
	}
	x.payload = make([]byte, n)
	var seed [32]byte
	copy(seed[:], "fjord bench s3 raw upload")
	_, _ = rand.NewChaCha8(seed).Read(x.payload) // never fails
}

// putAll uploads object i as keys[i] with the first sizes[i] bytes of
// payload, at most concurrency at once; the first error cancels the rest.
func putAll(ctx context.Context, st *storage.Store, keys []string, sizes []int64, payload []byte, concurrency int) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	sem := make(chan struct{}, concurrency)
	for i, key := range keys {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			// A bytes.Reader is a ReaderAt and a Seeker: Put sends it in
			// place, part by part above the part size, without copying.
			if err := st.Put(ctx, key, bytes.NewReader(payload[:sizes[i]]), sizes[i], nil); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
				cancel()
			}
		})
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		first = ctx.Err()
	}
	return first
}
