package sink

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/internal/testkit"
)

// BenchmarkUpsertStatements compares ways to upsert 500-row batches (one
// transaction each) of the benchmark's rows, outside the task: COPY into
// a staging table then INSERT ... SELECT ... ON CONFLICT (what the sink
// does), a multi-row INSERT ... VALUES ... ON CONFLICT with bound
// parameters, and INSERT ... SELECT FROM unnest(arrays) ON CONFLICT.
func BenchmarkUpsertStatements(b *testing.B) {
	quiet(b)
	pg := testkit.StartPostgres(b)
	ctx := context.Background()
	conn := pg.Connect(b, "postgres")
	recs := benchRecords(benchRows, 1)
	const batch = 500
	type row struct {
		id      int64
		name    string
		qty     int32
		price   float64
		created time.Time
		active  bool
	}
	all := make([]row, len(recs))
	for i, r := range recs {
		st := r.Value.(*connect.Struct)
		get := func(f string) any { return st.GetField(benchValue.Field(f)) }
		all[i] = row{get("id").(int64), get("name").(string), get("qty").(int32), get("price").(float64), get("created").(time.Time), get("active").(bool)}
	}
	const set = "name=EXCLUDED.name,qty=EXCLUDED.qty,price=EXCLUDED.price,created=EXCLUDED.created,active=EXCLUDED.active"
	run := func(b *testing.B, write func(rows []row) error) {
		var elapsed time.Duration
		for b.Loop() {
			b.StopTimer()
			resetTable(b, conn, "bench_stmt")
			b.StartTimer()
			start := time.Now()
			for i := 0; i < len(all); i += batch {
				if err := write(all[i:min(i+batch, len(all))]); err != nil {
					b.Fatal(err)
				}
			}
			elapsed += time.Since(start)
		}
		b.ReportMetric(float64(len(all)*b.N)/elapsed.Seconds(), "rows/s")
	}
	b.Run("staging-copy+insert-select", func(b *testing.B) {
		resetTable(b, conn, "bench_stmt")
		if _, err := conn.Exec(ctx, "CREATE TEMP TABLE stage ON COMMIT DELETE ROWS AS SELECT * FROM bench_stmt WITH NO DATA"); err != nil {
			b.Fatal(err)
		}
		var text []byte
		run(b, func(rows []row) error {
			text = text[:0]
			for _, r := range rows {
				text = fmt.Appendf(text, "%d\t%s\t%d\t%v\t%s\t%t\n", r.id, r.name, r.qty, r.price, r.created.Format("2006-01-02 15:04:05"), r.active)
			}
			_, err := conn.PgConn().CopyFrom(ctx, bytes.NewReader(text),
				"COPY stage FROM STDIN; INSERT INTO bench_stmt SELECT * FROM stage ON CONFLICT (id) DO UPDATE SET "+set)
			return err
		})
	})
	b.Run("multirow-values", func(b *testing.B) {
		var sql strings.Builder
		sql.WriteString("INSERT INTO bench_stmt VALUES ")
		for i := range batch {
			if i > 0 {
				sql.WriteByte(',')
			}
			fmt.Fprintf(&sql, "($%d,$%d,$%d,$%d,$%d,$%d)", 6*i+1, 6*i+2, 6*i+3, 6*i+4, 6*i+5, 6*i+6)
		}
		sql.WriteString(" ON CONFLICT (id) DO UPDATE SET " + set)
		args := make([]any, 0, 6*batch)
		run(b, func(rows []row) error {
			args = args[:0]
			for _, r := range rows {
				args = append(args, r.id, r.name, r.qty, r.price, r.created, r.active)
			}
			_, err := conn.Exec(ctx, sql.String(), args...)
			return err
		})
	})
	b.Run("unnest-arrays", func(b *testing.B) {
		ids, names, qtys, prices, createds, actives := make([]int64, 0, batch), make([]string, 0, batch), make([]int32, 0, batch),
			make([]float64, 0, batch), make([]time.Time, 0, batch), make([]bool, 0, batch)
		run(b, func(rows []row) error {
			ids, names, qtys, prices, createds, actives = ids[:0], names[:0], qtys[:0], prices[:0], createds[:0], actives[:0]
			for _, r := range rows {
				ids, names, qtys = append(ids, r.id), append(names, r.name), append(qtys, r.qty)
				prices, createds, actives = append(prices, r.price), append(createds, r.created), append(actives, r.active)
			}
			_, err := conn.Exec(ctx, `INSERT INTO bench_stmt SELECT * FROM unnest($1::bigint[], $2::text[], $3::int[], $4::float8[], $5::timestamp[], $6::bool[])
				ON CONFLICT (id) DO UPDATE SET `+set, ids, names, qtys, prices, createds, actives)
			return err
		})
	})
}
