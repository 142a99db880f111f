package sink

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/internal/testkit"
)

// benchRows is the sink benchmark size.
const benchRows = 200_000

var (
	benchKey   = connect.NewStruct().Name("bench.Key").Field("id", connect.Int64Schema).Build()
	benchValue = connect.NewStruct().Name("bench.Value").
			Field("id", connect.Int64Schema).
			Field("name", connect.OptionalStringSchema).
			Field("qty", connect.Int32Schema).
			Field("price", connect.OptionalFloat64Schema).
			Field("created", connect.TimestampSchema().Build()).
			Field("active", connect.BooleanSchema).Build()
)

// benchRecords are n records of six columns, keys 0..n-1 (version v in
// the name, so an update pass changes every row).
func benchRecords(n int, v int) []*connect.Record {
	out := make([]*connect.Record, n)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range out {
		k := connect.NewStructValue(benchKey)
		k.PutFieldUnchecked(benchKey.Field("id"), int64(i))
		val := connect.NewStructValue(benchValue)
		put := func(f string, x any) { val.PutFieldUnchecked(benchValue.Field(f), x) }
		put("id", int64(i))
		put("name", fmt.Sprintf("customer %d v%d", i, v))
		put("qty", int32(i%1000))
		put("price", float64(i)*0.25)
		put("created", base.Add(time.Duration(i)*time.Second))
		put("active", i%2 == 0)
		out[i] = rec("bench", int64(i), benchKey, k, benchValue, val)
	}
	return out
}

const benchTable = `CREATE TABLE %s (id BIGINT PRIMARY KEY, name TEXT, qty INT NOT NULL, price DOUBLE PRECISION,
	created TIMESTAMP NOT NULL, active BOOLEAN NOT NULL)`

// BenchmarkSink puts 200k rows through the task (Put in batches of the
// runtime's max.poll.records, 500, then PreCommit) in upsert mode: into
// an empty table, then over existing rows (every row updated); and, for
// scale, COPY ... FROM STDIN of the same rows into the same kind of table
// (text, as psql sends it, and pgx's binary COPY).
func BenchmarkSink(b *testing.B) {
	quiet(b)
	pg := testkit.StartPostgres(b)
	ctx := context.Background()
	conn := pg.Connect(b, "postgres")
	inserts, updates := benchRecords(benchRows, 1), benchRecords(benchRows, 2)

	for _, batch := range []int{500, 3000} {
		b.Run(fmt.Sprintf("upsert-new/batch=%d", batch), func(b *testing.B) {
			benchPut(b, pg, conn, inserts, nil, batch)
		})
		b.Run(fmt.Sprintf("upsert-existing/batch=%d", batch), func(b *testing.B) {
			benchPut(b, pg, conn, updates, inserts, batch)
		})
	}
	b.Run("insert/batch=500", func(b *testing.B) {
		benchPutMode(b, pg, conn, inserts, nil, 500, "insert")
	})
	// COPY ... FROM STDIN in text format, the rows rendered beforehand (what
	// psql's \copy sends): PostgreSQL's own ingest rate.
	b.Run("copy-text-from-stdin", func(b *testing.B) { benchCopyText(b, conn, inserts, len(inserts)) })
	// The same in statements of 500 rows, one transaction each, as the
	// runtime's puts come: what batching alone costs.
	b.Run("copy-text-from-stdin-batch=500", func(b *testing.B) { benchCopyText(b, conn, inserts, 500) })
	// The same with pgx's binary COPY from Go values.
	b.Run("copy-binary-from-stdin", func(b *testing.B) {
		rowsIn := make([][]any, len(inserts))
		for i, r := range inserts {
			st := r.Value.(*connect.Struct)
			vals := make([]any, len(benchValue.Fields))
			for j := range benchValue.Fields {
				vals[j] = st.GetField(&benchValue.Fields[j])
			}
			rowsIn[i] = vals
		}
		cols := []string{"id", "name", "qty", "price", "created", "active"}
		var elapsed time.Duration
		for b.Loop() {
			b.StopTimer()
			resetTable(b, conn, "bench_copy")
			b.StartTimer()
			start := time.Now()
			n, err := conn.CopyFrom(ctx, pgx.Identifier{"bench_copy"}, cols, pgx.CopyFromRows(rowsIn))
			elapsed += time.Since(start)
			if err != nil || n != int64(len(rowsIn)) {
				b.Fatalf("copy: %d rows, %v", n, err)
			}
		}
		b.ReportMetric(float64(len(rowsIn)*b.N)/elapsed.Seconds(), "rows/s")
	})
}

func resetTable(b *testing.B, conn *pgx.Conn, name string) {
	ctx := context.Background()
	if _, err := conn.Exec(ctx, "DROP TABLE IF EXISTS "+name); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf(benchTable, name)); err != nil {
		b.Fatal(err)
	}
}

func benchPut(b *testing.B, pg *testkit.Postgres, conn *pgx.Conn, recs, preload []*connect.Record, batch int) {
	benchPutMode(b, pg, conn, recs, preload, batch, "upsert")
}

func benchPutMode(b *testing.B, pg *testkit.Postgres, conn *pgx.Conn, recs, preload []*connect.Record, batch int, mode string) {
	ctx := context.Background()
	props := pgProps(pg, "postgres", "insert.mode", mode, "pk.mode", "record_key", "table.name.format", "bench_put")
	var elapsed time.Duration
	for b.Loop() {
		b.StopTimer()
		resetTable(b, conn, "bench_put")
		task, _ := startTask(b, props, false)
		if preload != nil {
			for i := 0; i < len(preload); i += 3000 {
				if err := task.Put(ctx, preload[i:min(i+3000, len(preload))]); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.StartTimer()
		start := time.Now()
		offsets := map[connect.TopicPartition]int64{}
		for i := 0; i < len(recs); i += batch {
			part := recs[i:min(i+batch, len(recs))]
			if err := task.Put(ctx, part); err != nil {
				b.Fatal(err)
			}
			offsets[connect.TopicPartition{Topic: "bench"}] = part[len(part)-1].Offset + 1
		}
		got, err := task.PreCommit(ctx, offsets)
		elapsed += time.Since(start)
		b.StopTimer()
		if err != nil || got[connect.TopicPartition{Topic: "bench"}] != int64(len(recs)) {
			b.Fatalf("precommit: %v %v", got, err)
		}
		var n int64
		var names int64
		if err := conn.QueryRow(ctx, "SELECT count(*), count(*) FILTER (WHERE name LIKE '%v2') FROM bench_put").Scan(&n, &names); err != nil || n != int64(len(recs)) {
			b.Fatalf("table has %d rows (%v), want %d", n, err, len(recs))
		}
		if preload != nil && names != n {
			b.Fatalf("%d of %d rows updated", names, n)
		}
		task.Stop()
		b.StartTimer()
	}
	b.ReportMetric(float64(len(recs)*b.N)/elapsed.Seconds(), "rows/s")
}

func benchCopyText(b *testing.B, conn *pgx.Conn, recs []*connect.Record, batch int) {
	ctx := context.Background()
	var texts [][]byte
	for i := 0; i < len(recs); i += batch {
		var text []byte
		for _, r := range recs[i:min(i+batch, len(recs))] {
			st := r.Value.(*connect.Struct)
			get := func(f string) any { return st.GetField(benchValue.Field(f)) }
			text = fmt.Appendf(text, "%d\t%s\t%d\t%v\t%s\t%t\n", get("id"), get("name"), get("qty"), get("price"),
				get("created").(time.Time).Format("2006-01-02 15:04:05"), get("active"))
		}
		texts = append(texts, text)
	}
	var elapsed time.Duration
	for b.Loop() {
		b.StopTimer()
		resetTable(b, conn, "bench_copy")
		b.StartTimer()
		start := time.Now()
		for _, text := range texts {
			if _, err := conn.PgConn().CopyFrom(ctx, bytes.NewReader(text), "COPY bench_copy FROM STDIN"); err != nil {
				b.Fatal(err)
			}
		}
		elapsed += time.Since(start)
	}
	b.ReportMetric(float64(len(recs)*b.N)/elapsed.Seconds(), "rows/s")
}

// quiet drops the tasks' info logs (one per start) from benchmark output.
func quiet(b *testing.B) {
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	b.Cleanup(func() { slog.SetDefault(prev) })
}
