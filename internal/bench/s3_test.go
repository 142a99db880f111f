package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/internal/testkit"

	"github.com/fjordhq/fjord/internal/bench/s3records"
)

// TestS3Record: the records are JsonConverter envelopes that Fjord's own
// JsonConverter decodes into the ten-field order struct, with a
// Timestamp; the payload (what JsonFormat writes per line) is 250–300
// bytes.
func TestS3Record(t *testing.T) {
	conv, err := newConverters(mustConverterProps(ConvJSON, ""))
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int64{1, 2, 777, 123_456, 1_000_000} {
		_, v := s3Record(i, nil)
		schema, val, err := conv.value.ToConnectData("t", nil, v)
		if err != nil {
			t.Fatalf("record %d: %v: %s", i, err, v)
		}
		var names []string
		for _, f := range schema.Fields {
			names = append(names, f.Name)
		}
		if !slices.Equal(names, s3records.Fields) {
			t.Errorf("record %d: fields %v, want %v", i, names, s3records.Fields)
		}
		st := val.(*connect.Struct)
		if id, _ := st.Get("id"); id != i {
			t.Errorf("record %d: id %v", i, id)
		}
		if ts, _ := st.Get("created_at"); ts != time.UnixMilli(s3records.CreatedBase+37*i).UTC() {
			t.Errorf("record %d: created_at %v (%T), want the Timestamp %v", i, ts, ts, time.UnixMilli(s3records.CreatedBase+37*i).UTC())
		}
		var payload map[string]any
		p := s3records.AppendPayload(nil, i)
		if err := json.Unmarshal(p, &payload); err != nil || len(payload) != len(s3records.Fields) {
			t.Fatalf("payload %d: %v: %s", i, err, p)
		}
		if amount, _ := st.Get("amount"); amount != payload["amount"] {
			t.Errorf("record %d: amount %v, payload %v", i, amount, payload["amount"])
		}
		if len(p) < 250 || len(p) > 300 {
			t.Errorf("payload %d is %d bytes, want 250–300: %s", i, len(p), p)
		}
	}
	a, b := s3records.AppendPayload(nil, 5), s3records.AppendPayload(nil, 6)
	if bytes.Equal(a, b) || !bytes.Equal(a, s3records.AppendPayload(nil, 5)) {
		t.Error("payloads are not deterministic per record, or not different between records")
	}
}

// TestS3Layout: how records spread over partitions, which files the
// sink must write, and how a listing is checked against them.
func TestS3Layout(t *testing.T) {
	if got := s3PartitionRecords(10, 4); !slices.Equal(got, []int64{3, 3, 2, 2}) {
		t.Errorf("s3PartitionRecords(10, 4) = %v", got)
	}
	cfg := S3BenchConfig{Records: 1_000_000, Partitions: 4, FlushSize: 50_000}
	if n, r := cfg.expectedFiles(); n != 20 || r != 1_000_000 {
		t.Errorf("expectedFiles = %d, %d; want 20, 1 M", n, r)
	}
	odd := S3BenchConfig{Records: 10, Partitions: 4, FlushSize: 2}
	if n, r := odd.expectedFiles(); n != 4 || r != 8 {
		t.Errorf("10 records, 4 partitions, flush.size 2: %d files, %d records; want 4, 8", n, r)
	}
	prefixes := odd.expectedKeyPrefixes()
	want := []string{
		"topics/" + s3Topic + "/partition=0/" + s3Topic + "+0+0000000000.",
		"topics/" + s3Topic + "/partition=1/" + s3Topic + "+1+0000000000.",
		"topics/" + s3Topic + "/partition=2/" + s3Topic + "+2+0000000000.",
		"topics/" + s3Topic + "/partition=3/" + s3Topic + "+3+0000000000.",
	}
	if !slices.Equal(prefixes, want) {
		t.Fatalf("prefixes %q, want %q", prefixes, want)
	}
	listing := func(keys ...string) bucketContents {
		c := bucketContents{sizes: map[string]int64{}}
		for _, k := range keys {
			c.sizes[k] = 10
		}
		return c
	}
	good := make([]string, len(want))
	for i, p := range want {
		good[i] = p + "json"
	}
	if err := checkKeys(listing(good...), want); err != nil {
		t.Errorf("good listing: %v", err)
	}
	if err := checkKeys(listing(strings.ReplaceAll(good[0], "json", "snappy.parquet"), good[1], good[2], good[3]), want); err != nil {
		t.Errorf("parquet extension: %v", err)
	}
	for name, keys := range map[string][]string{
		"missing":   good[:3],
		"extra":     append(slices.Clone(good), "topics/"+s3Topic+"/partition=0/"+s3Topic+"+0+0000000002.json"),
		"duplicate": append(slices.Clone(good), good[0]+".keys"),
		"foreign":   append(slices.Clone(good[:3]), "elsewhere/file.json"),
		"unnamed":   append(slices.Clone(good[:3]), "no-plus-sign"),
	} {
		if err := checkKeys(listing(keys...), want); err == nil {
			t.Errorf("%s: accepted %q", name, keys)
		}
	}
}

// TestS3ObjectChecks: the read-back checks accept what the sink should
// write and refuse a wrong count or a different first record.
func TestS3ObjectChecks(t *testing.T) {
	var lines [][]byte
	for i := int64(1); i <= 7; i += 2 { // partition 0 of 2: records 1, 3, 5, 7
		lines = append(lines, s3records.AppendPayload(nil, i))
	}
	obj := append(bytes.Join(lines, []byte("\n")), '\n')
	if err := checkJSONObject(obj, 4); err != nil {
		t.Errorf("JSON object: %v", err)
	}
	if err := checkJSONObject(obj, 3); err == nil {
		t.Error("JSON: a wrong line count was accepted")
	}
	if err := checkJSONObject(bytes.Join(lines[1:], []byte("\n")), 3); err == nil {
		t.Error("JSON: a file not starting at record 1 was accepted")
	}

	type order struct {
		ID         int64   `parquet:"id"`
		OrderID    string  `parquet:"order_id"`
		CustomerID int64   `parquet:"customer_id"`
		Customer   string  `parquet:"customer"`
		Email      string  `parquet:"email"`
		Amount     float64 `parquet:"amount"`
		Currency   string  `parquet:"currency"`
		Status     string  `parquet:"status"`
		CreatedAt  int64   `parquet:"created_at,timestamp(millisecond)"`
		Note       *string `parquet:"note,optional"`
	}
	write := func(rows []order) []byte {
		var buf bytes.Buffer
		w := parquet.NewGenericWriter[order](&buf, parquet.Compression(&parquet.Snappy))
		if _, err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	note := "x"
	rows := []order{{ID: 1, CreatedAt: s3records.CreatedBase + 37, Note: &note}, {ID: 3, CreatedAt: s3records.CreatedBase + 3*37}}
	if err := checkParquetObject(write(rows), 2); err != nil {
		t.Errorf("Parquet object: %v", err)
	}
	if err := checkParquetObject(write(rows), 3); err == nil {
		t.Error("Parquet: a wrong row count was accepted")
	}
	if err := checkParquetObject(write(rows[1:]), 1); err == nil {
		t.Error("Parquet: a file not starting at record 1 was accepted")
	}
}

// TestS3Report renders a report from known samples: medians, sink ÷ raw
// with JSON's goal mark, Parquet's ratio against the raw upload of the
// JSON objects, and the goal line.
func TestS3Report(t *testing.T) {
	rep := &S3Report{Command: "fjord bench s3", Runs: 3, Records: 1_000_000, Partitions: 4, FlushSize: 50_000,
		Formats: []string{S3FormatJSON, S3FormatParquet}, Objects: 20, FileRecords: 1_000_000, PartSize: 25 << 20,
		PutConcurrency: 4, PollMs: 50, EnvelopeBytes: 1012, PayloadBytes: 281, Minio: "v0.0.0-x",
		Limits: Limits{LoopbackMBps: 3000, DiskWriteMBps: 900}}
	add := func(format, col string, bytes int64, secs ...float64) {
		for i, s := range secs {
			rep.Samples = append(rep.Samples, S3Sample{Run: i + 1, Format: format, Column: col, Objects: 20, Bytes: bytes,
				Records: 1_000_000, Seconds: s, FirstMs: 900, UploaderCPUSeconds: 2, MinioCPUSeconds: 1, RunQueueSeconds: 0.5})
		}
	}
	add(S3FormatJSON, ColS3Raw, 280_000_000, 1, 1.2, 0.8)  // 280 MB/s median
	add(S3FormatJSON, ColS3Sink, 280_000_000, 4, 3.5, 5)   // 70 MB/s median: 0.25
	add(S3FormatParquet, ColS3Raw, 60_000_000, 0.2)        // 300 MB/s
	add(S3FormatParquet, ColS3Sink, 60_000_000, 8, 10, 12) // 100 k rec/s vs JSON's raw 1 M: 0.10
	rep.Errors = []string{"run 2: parquet: | pipes | are escaped"}
	rep.build()
	md := rep.Markdown()
	for _, want := range []string{
		"| JSON: topic → bucket, POST → every file listed (raw: Store.Put of the same objects) | MB/s | 280 | 70.0 | 0.25 ✗ |",
		"| JSON: records in those files per second | rec/s | 1,000,000 | 250,000 | 0.25 |",
		"| JSON: POST → first file listed | ms | — | 900 | — |",
		"| JSON: CPU per record of the uploader (sink: fjord dev; raw: the bench process) | µs | 2.00 | 2.00 | 1.00 |",
		"| JSON: threads of the uploader and MinIO waiting for a CPU, on average (run queue) | threads | 0.50 | 0.12 | 0.25 |",
		"| Parquet: records, POST → every file listed (raw: Store.Put of the same records as the JSON objects) | rec/s | 1,000,000 | 100,000 | 0.10 |",
		"| Parquet: bytes of the Parquet files (raw: Store.Put of the same Parquet-sized objects) | MB/s | 300 | 6.00 | 0.02 |",
		"Goal (issue 6, JSON ≥ 0.7 × raw): JSON 0.25 × the raw upload's MB/s ✗; Parquet 0.10 × the raw upload's records/s of the same records as JSON (no goal).",
		"- Objects (median size): JSON 14.0 MB, Parquet (snappy) 3.0 MB",
		"flush.size=50,000: 20 complete files, 1 M records, per phase; s3.part.size 25 MiB",
		"- **Failed:** run 2: parquet: / pipes / are escaped",
		"loopback TCP 3000 MB/s",
		"MinIO v0.0.0-x",
		"1,012 B per record in the topic, key included, 281 B of payload",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q\n%s", want, md)
		}
	}
	if len(rep.Table) != len(s3RowSpecs) {
		t.Errorf("%d rows, want %d", len(rep.Table), len(s3RowSpecs))
	}

	met := &S3Report{Formats: []string{S3FormatJSON}}
	met.Samples = []S3Sample{{Format: S3FormatJSON, Column: ColS3Raw, Bytes: 100, Records: 10, Seconds: 1},
		{Format: S3FormatJSON, Column: ColS3Sink, Bytes: 100, Records: 10, Seconds: 1.25}}
	met.build()
	if md := met.Markdown(); !strings.Contains(md, "JSON 0.80 × the raw upload's MB/s ✓") || strings.Contains(md, "Parquet") {
		t.Errorf("JSON-only report:\n%s", md)
	}
	none := &S3Report{Formats: []string{S3FormatParquet}}
	none.build()
	if md := none.Markdown(); !strings.Contains(md, "Parquet not measured") {
		t.Errorf("empty Parquet report:\n%s", md)
	}
}

func TestReplaceS3Block(t *testing.T) {
	others := beginMarker + "\nbroker\n" + endMarker + "\n\n" + connectBeginMarker + "\nconnect\n" + connectEndMarker + "\n\n" +
		postgresBeginMarker + "\npg\n" + postgresEndMarker + "\n"
	doc, err := ReplaceS3Block("# B\n\n"+others, "one\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "# B\n\n" + others + "\n" + s3BeginMarker + "\none\n" + s3EndMarker + "\n"; doc != want {
		t.Fatalf("append:\n%q\nwant\n%q", doc, want)
	}
	doc2, err := ReplaceS3Block(doc+"after\n", "two")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(doc2, s3BeginMarker+"\ntwo\n"+s3EndMarker+"\nafter\n") || strings.Contains(doc2, "one") ||
		!strings.HasPrefix(doc2, "# B\n\n"+others) {
		t.Fatalf("replace:\n%s", doc2)
	}
	// The other benchmarks' rewrites leave the S3 block alone.
	doc3, err := ReplacePostgresBlock(doc2, "pg 2")
	if err == nil {
		doc3, err = ReplaceConnectBlock(doc3, "connect 2")
	}
	if err != nil || !strings.Contains(doc3, s3BeginMarker+"\ntwo\n") || !strings.Contains(doc3, "pg 2") {
		t.Fatalf("other rewrites: %v\n%s", err, doc3)
	}
	for _, bad := range []string{
		s3EndMarker + "\n" + s3BeginMarker,
		s3BeginMarker + "\n",
		s3BeginMarker + "\n" + s3EndMarker + s3BeginMarker + "\n" + s3EndMarker,
	} {
		if _, err := ReplaceS3Block(bad, "x"); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

// TestS3BenchConfigValidate: the orchestrator refuses what it cannot
// run, before starting anything.
func TestS3BenchConfigValidate(t *testing.T) {
	ok := S3BenchConfig{Records: 1000, Partitions: 4, FlushSize: 250, Runs: 1, PutConcurrency: 4,
		Poll: time.Millisecond, PhaseTimeout: time.Minute, Formats: []string{"json", "parquet"}, Dir: "d"}
	if err := ok.validate(); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*S3BenchConfig){
		"partitions":  func(c *S3BenchConfig) { c.Partitions = 0 },
		"flush":       func(c *S3BenchConfig) { c.FlushSize = 0 },
		"no file":     func(c *S3BenchConfig) { c.FlushSize = 251 },
		"runs":        func(c *S3BenchConfig) { c.Runs = 0 },
		"part size":   func(c *S3BenchConfig) { c.PartSize = 1 << 20 },
		"concurrency": func(c *S3BenchConfig) { c.PutConcurrency = 0 },
		"poll":        func(c *S3BenchConfig) { c.Poll = 0 },
		"timeout":     func(c *S3BenchConfig) { c.PhaseTimeout = 0 },
		"format":      func(c *S3BenchConfig) { c.Formats = []string{"avro"} },
		"none":        func(c *S3BenchConfig) { c.Formats = nil },
		"dir":         func(c *S3BenchConfig) { c.Dir = "" },
	} {
		c := ok
		c.Formats = slices.Clone(ok.Formats)
		mut(&c)
		if c.validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := RunS3Bench(context.Background(), S3BenchConfig{}); err == nil {
		t.Error("RunS3Bench ran an empty config")
	}
}

// TestRunQueueWait: schedstat's second field, summed over a process's
// threads; nothing for a process that does not exist.
func TestRunQueueWait(t *testing.T) {
	if got := parseSchedstatWait([]byte("123456 7890000 42\n")); got != 7890*time.Microsecond {
		t.Errorf("parseSchedstatWait = %v", got)
	}
	for _, bad := range []string{"", "1", "1 x 2", "1 -5 2"} {
		if got := parseSchedstatWait([]byte(bad)); got != 0 {
			t.Errorf("parseSchedstatWait(%q) = %v", bad, got)
		}
	}
	if got := runQueueWait(1 << 30); got != 0 {
		t.Errorf("runQueueWait of no process = %v", got)
	}
	if _, err := os.Stat("/proc/self/task"); err == nil && runQueueWait(os.Getpid()) < 0 {
		t.Error("negative run-queue wait")
	}
}

// minioBin is the repository's MinIO build (scripts/s3-server.sh).
func minioBin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(testkit.RepoRoot(t), ".cache", "bin", "minio")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no MinIO at %s: build it with scripts/s3-server.sh (%v)", bin, err)
	}
	return bin
}

// TestS3RawUpload starts the benchmark's own MinIO and runs the raw
// upload's pieces: objects below and above the part size (multipart) go
// in with their exact sizes and bytes, and dropBucket leaves nothing.
func TestS3RawUpload(t *testing.T) {
	testkit.SkipShort(t, "starts MinIO")
	ctx := testkit.Context(t, time.Minute)
	m, err := startMinio(ctx, minioBin(t), t.TempDir(), "127.0.0.1:"+freePort(t), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer m.stop(5 * time.Second)
	ep := s3Endpoint{url: m.url(), partSize: 5 << 20}
	st, err := ep.store(ctx, "raw-test")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateBucket(ctx); err != nil {
		t.Fatal(err)
	}
	x := &s3Bench{}
	sizes := []int64{6<<20 + 123, 1000, 0, 5 << 20}
	x.growPayload(6<<20 + 123)
	keys := []string{"a/multipart", "b/small", "c/empty", "d/exactly-one-part"}
	if err := putAll(ctx, st, keys, sizes, x.payload, 2); err != nil {
		t.Fatal(err)
	}
	c, err := listBucket(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	gotKeys, gotSizes := sortedSizes(c)
	if !slices.Equal(gotKeys, keys) || !slices.Equal(gotSizes, sizes) {
		t.Fatalf("listed %v %v, want %v %v", gotKeys, gotSizes, keys, sizes)
	}
	b, err := st.ReadAll(ctx, "a/multipart")
	if err != nil || !bytes.Equal(b, x.payload[:sizes[0]]) {
		t.Fatalf("the multipart object's bytes differ from what was sent (%v)", err)
	}
	// A failing upload (no such bucket) is an error, not a silent skip.
	gone, err := ep.store(ctx, "no-such-bucket")
	if err != nil {
		t.Fatal(err)
	}
	if err := putAll(ctx, gone, keys[:2], sizes[:2], x.payload, 2); err == nil {
		t.Error("uploads into a missing bucket succeeded")
	}
	if err := dropBucket(ctx, st); err != nil {
		t.Fatal(err)
	}
	if err := st.CheckBucket(ctx); err == nil {
		t.Error("the bucket still exists after dropBucket")
	}
	if err := m.alive(); err != nil {
		t.Fatal(err)
	}
}

// TestQuickS3Bench is the end-to-end smoke test of `fjord bench s3
// --quick` (with fewer records): a real MinIO, a real `fjord dev` (built
// from cmd/fjord) with its S3 sink. Both formats and both columns must be
// measured, both formats' first files read back and checked, nothing may
// fail, and --write must add the S3 block to BENCHMARKS.md without
// touching the other blocks.
func TestQuickS3Bench(t *testing.T) {
	testkit.SkipShort(t, "starts MinIO and fjord dev for ~30 s")
	bin := testkit.FjordBinary(t)
	dir := t.TempDir()
	benchFile := filepath.Join(dir, "BENCHMARKS.md")
	others := "# Benchmarks\n\npreamble\n\n" + connectBeginMarker + "\nconnect table\n" + connectEndMarker + "\n\n" +
		postgresBeginMarker + "\npostgres table\n" + postgresEndMarker + "\n"
	if err := os.WriteFile(benchFile, []byte(others), 0o644); err != nil {
		t.Fatal(err)
	}
	const records, flush = 40_000, 2_500
	jsonFile := filepath.Join(dir, "report.json")
	cmd := NewCommand(testSelf(t), []string{childEnv, childGORACE})
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"s3", "--quick", "--records", fmt.Sprint(records), "--flush-size", fmt.Sprint(flush),
		"--fjord-bin", bin, "--minio-bin", minioBin(t),
		"--fjord-port", freePort(t), "--fjord-http-port", freePort(t), "--minio-port", freePort(t),
		"--dir", filepath.Join(dir, "data"),
		"--write", "--benchmarks-file", benchFile,
		"--json", jsonFile,
	})
	start := time.Now()
	if err := cmd.Execute(); err != nil {
		t.Fatalf("bench s3: %v\n%s", err, out.String())
	}
	md := out.String()
	t.Logf("took %s\n%s", time.Since(start).Round(time.Millisecond), md)

	var rep S3Report
	b, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	for _, e := range rep.Errors {
		t.Errorf("failed: %s", e)
	}
	for _, f := range []string{S3FormatJSON, S3FormatParquet} {
		for _, col := range []string{ColS3Sink, ColS3Raw} {
			var found bool
			for _, s := range rep.Samples {
				if s.Format != f || s.Column != col {
					continue
				}
				found = true
				if s.Objects != 16 || s.Records != records || s.Bytes <= 0 || s.Seconds <= 0 || s.UploaderCPUSeconds <= 0 {
					t.Errorf("%s %s: %+v; want 16 objects of %d records in all", f, col, s, records)
				}
			}
			if !found {
				t.Errorf("%s %s not measured", f, col)
			}
		}
	}
	if len(rep.Verified) != 2 {
		t.Errorf("read back %v, want both formats", rep.Verified)
	}
	if !strings.Contains(md, "Goal (issue 6, JSON ≥ 0.7 × raw): JSON ") {
		t.Error("goal line missing")
	}
	doc, err := os.ReadFile(benchFile)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(doc); !strings.HasPrefix(s, others) ||
		!strings.Contains(s, s3BeginMarker+"\n## S3 sink (issue 6)") || !strings.HasSuffix(s, s3EndMarker+"\n") {
		t.Errorf("BENCHMARKS.md not updated as expected:\n%s", s)
	}
}
