package bench

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
)

// sinkPhase fills a topic with Rows JSON records (JsonConverter with
// schemas: key {id}, value the sink table's columns; untimed), then
// creates the JDBC-compatible sink upserting them into the table COPY
// filled before (emptied again). Progress is the table's row count, read
// every DBPoll on a connection of its own. As in `bench connect`, the
// rate is timed from the first reading past the warm-up share to the
// first reading of every row, so that task start-up and the consumer
// group's join are left out; from creation to the last row is reported
// beside it. The table is then checked against the rows' sums.
func (x *pgRun) sinkPhase(ctx context.Context, t *cdcTarget) (PgSample, error) {
	cfg := x.cfg
	topic := fmt.Sprintf("sink-r%d", x.run)
	name := fmt.Sprintf("bench-sink-r%d", x.run)
	if err := x.sess.exec(ctx, "TRUNCATE "+ident(sinkTable)); err != nil {
		return PgSample{}, err
	}
	if err := createTopic(ctx, t.addr, topic); err != nil {
		return PgSample{}, err
	}
	cfg.Log.Info("producing the sink's records", "topic", topic, "records", cfg.Rows)
	if err := produceSinkRecords(ctx, t.addr, topic, cfg.Rows); err != nil {
		return PgSample{}, err
	}
	poller, err := dialPG(ctx, x.dsn())
	if err != nil {
		return PgSample{}, err
	}
	defer poller.close()
	// A count must not spawn parallel workers: it would compete with the
	// sink for the machine's cores.
	if err := poller.exec(ctx, "SET max_parallel_workers_per_gather = 0"); err != nil {
		return PgSample{}, err
	}
	if err := x.sess.exec(ctx, "CHECKPOINT"); err != nil {
		return PgSample{}, err
	}
	config := map[string]string{
		"name":                           name,
		"connector.class":                SinkConnectorClass,
		"tasks.max":                      "1",
		"topics":                         topic,
		"connection.url":                 x.pg.JDBCURL(x.db),
		"connection.user":                x.pg.User,
		"connection.password":            testkit.PostgresPassword,
		"insert.mode":                    "upsert",
		"pk.mode":                        "record_key",
		"pk.fields":                      "id",
		"table.name.format":              sinkTable,
		"auto.create":                    "false",
		"auto.evolve":                    "false",
		"key.converter":                  jsonConverterClass,
		"key.converter.schemas.enable":   "true",
		"value.converter":                jsonConverterClass,
		"value.converter.schemas.enable": "true",
	}
	x.settle(ctx, t.procs...)
	posted := time.Now()
	if err := t.rest.create(ctx, name, config); err != nil {
		return PgSample{}, err
	}
	defer t.rest.remove(name)

	want, warm := int64(cfg.Rows), int64(float64(cfg.Rows)*cfg.WarmupFrac)
	var (
		first, warmAt, endAt time.Time
		warmN, n             int64
		lastStatus, lastLog  = time.Now(), time.Now()
	)
	deadline := posted.Add(cfg.PhaseTimeout)
	for {
		got, cerr := poller.count(ctx, sinkTable)
		now := time.Now()
		if cerr == nil {
			n = got
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
		if err := t.alive(); err != nil {
			return PgSample{}, err
		}
		if now.Sub(lastStatus) > 500*time.Millisecond {
			lastStatus = now
			if err := t.rest.failed(ctx, name); err != nil {
				return PgSample{}, err
			}
		}
		if now.Sub(lastLog) > 5*time.Second {
			lastLog = now
			cfg.Log.Info("waiting for the sink", "rows", n, "of", want)
		}
		if now.After(deadline) {
			return PgSample{}, fmt.Errorf("%d of %d rows in %s after %s (last error: %v)", n, want, sinkTable, cfg.PhaseTimeout, cerr)
		}
		if !sleepCtx(ctx, cfg.DBPoll) { // polling the table, the only progress a sink shows outside
			return PgSample{}, ctx.Err()
		}
	}
	if err := x.checkSinkTable(ctx); err != nil {
		return PgSample{}, err
	}
	if warmAt.IsZero() {
		return PgSample{}, fmt.Errorf("all %d rows arrived before a reading past the warm-up (%d rows); use more rows or a shorter --db-poll", want, warm)
	}
	secs := max(endAt.Sub(warmAt).Seconds(), 1e-9)
	return PgSample{Run: x.run, Phase: PgPhaseSink, Column: t.column, Tool: "JdbcSinkConnector insert.mode=upsert",
		Rows: want - warmN, Seconds: secs, RowsPerSec: float64(want-warmN) / secs, CPUSeconds: t.cpu(warmAt, endAt).Seconds(),
		FirstMs: ms(first.Sub(posted)), AllMs: ms(endAt.Sub(posted))}, nil
}

// Schemas of the sink's records, as JsonConverter writes them.
const (
	sinkKeySchema   = `{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"}],"optional":false,"name":"bench.sink.Key"}`
	sinkValueSchema = `{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"},` +
		`{"type":"string","optional":false,"field":"customer"},{"type":"string","optional":false,"field":"email"},` +
		`{"type":"double","optional":false,"field":"amount"},{"type":"int32","optional":false,"field":"quantity"},` +
		`{"type":"boolean","optional":false,"field":"paid"},{"type":"string","optional":false,"field":"status"},` +
		`{"type":"string","optional":false,"field":"note"}],"optional":false,"name":"bench.sink.Value"}`
)

// sinkRecord encodes row i of the sink's data as JsonConverter would
// (%q quotes as JSON does: the strings are plain ASCII).
func sinkRecord(i int64) (key, value []byte) {
	r := sinkRow(i)
	key = fmt.Appendf(nil, `{"schema":%s,"payload":{"id":%d}}`, sinkKeySchema, i)
	value = fmt.Appendf(nil, `{"schema":%s,"payload":{"id":%d,"customer":%q,"email":%q,"amount":%s,"quantity":%d,"paid":%t,"status":%q,"note":%q}}`,
		sinkValueSchema, i, r[1], r[2], strconv.FormatFloat(r[3].(float64), 'g', -1, 64), r[4], r[5], r[6], r[7])
	return key, value
}

// produceSinkRecords writes rows 1..n to topic and waits for every ack.
func produceSinkRecords(ctx context.Context, addr, topic string, n int) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	var pc produceCounter
	for i := int64(1); i <= int64(n); i++ {
		k, v := sinkRecord(i)
		cl.Produce(ctx, &kgo.Record{Key: k, Value: v}, pc.promise)
	}
	if err := cl.Flush(ctx); err != nil {
		return fmt.Errorf("produce the sink's records: %w", err)
	}
	if err := pc.err(); err != nil {
		return fmt.Errorf("produce the sink's records: %w", err)
	}
	return nil
}
