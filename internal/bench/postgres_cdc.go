package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/fjordhq/fjord/internal/testkit"
)

// Connector classes the benchmark posts. The CDC source's is Debezium's,
// which Fjord's postgres-cdc answers to; the sink's is Confluent's JDBC
// sink, which Fjord's postgres-sink answers to.
const (
	CDCConnectorClass  = "io.debezium.connector.postgresql.PostgresConnector"
	SinkConnectorClass = "io.confluent.connect.jdbc.JdbcSinkConnector"
	jsonConverterClass = "org.apache.kafka.connect.json.JsonConverter"
)

// cdcTarget is a Connect worker with the broker its records go to:
// fjord dev (both in one process), or Kafka Connect 4.4 running Debezium
// 3.6 beside Apache Kafka 4.4.
type cdcTarget struct {
	column string      // ColFjord or ColDebezium
	rest   *connectRun // its REST API (create, status, delete) and CPU, for settling
	addr   string      // the broker
	adm    *kadm.Client
	alive  func() error  // an error once a process of the target exited
	procs  []*cpuSampler // the target's processes (fjord dev; Kafka's and Connect's JVMs)
}

// cpu is the CPU time the target's processes used from one instant to
// another.
func (t *cdcTarget) cpu(from, to time.Time) time.Duration {
	var d time.Duration
	for _, p := range t.procs {
		d += p.between(from, to)
	}
	return d
}

// cdcConfig is the connector JSON both workers get, in Debezium's keys.
func (x *pgRun) cdcConfig(prefix, slot, pub, table, snapshotMode string) map[string]string {
	pg := x.pg
	return map[string]string{
		"connector.class":                CDCConnectorClass,
		"tasks.max":                      "1",
		"database.hostname":              pg.Host,
		"database.port":                  strconv.Itoa(pg.Port),
		"database.user":                  pg.User,
		"database.password":              testkit.PostgresPassword,
		"database.dbname":                x.db,
		"topic.prefix":                   prefix,
		"plugin.name":                    "pgoutput",
		"slot.name":                      slot,
		"publication.name":               pub,
		"publication.autocreate.mode":    "filtered",
		"table.include.list":             "public." + table,
		"snapshot.mode":                  snapshotMode,
		"key.converter":                  jsonConverterClass,
		"key.converter.schemas.enable":   "true",
		"value.converter":                jsonConverterClass,
		"value.converter.schemas.enable": "true",
		// CDC topics are compressed in practice: a row's event is ~3 KB of
		// JSON with its schema, most of it the same for every row. Both
		// workers get it; the report says so.
		"producer.override.compression.type": "snappy",
	}
}

// cdcPhase runs one CDC phase (insert, update, snapshot) on a target:
// a fresh table (the snapshot's is shared: the same rows for everyone),
// slot, publication and topic, the connector created, timed until every
// row is in the topic, then everything dropped.
func (x *pgRun) cdcPhase(ctx context.Context, t *cdcTarget, phase string) (PgSample, error) {
	cfg := x.cfg
	suffix := t.column
	table := phaseTable(phase, suffix)
	if phase == PgPhaseSnapshot {
		table = snapshotTable
	}
	slot, pub := x.slotName(phase, suffix), x.pubName(phase, suffix)
	prefix := fmt.Sprintf("r%d%s", x.run, phase)
	topic := prefix + ".public." + table
	name := fmt.Sprintf("bench-%s-r%d", phase, x.run)
	if phase != PgPhaseSnapshot {
		if err := x.prepareStreamTable(ctx, phase, table); err != nil {
			return PgSample{}, err
		}
		defer x.dropQuietly(table, slot, pub)
	} else {
		defer x.dropQuietly("", slot, pub)
	}
	if err := x.sess.exec(ctx, "CHECKPOINT"); err != nil {
		return PgSample{}, err
	}
	if err := createCDCTopic(ctx, t.adm, topic); err != nil {
		return PgSample{}, err
	}
	mode := "no_data"
	if phase == PgPhaseSnapshot {
		mode = "initial"
	}
	config := x.cdcConfig(prefix, slot, pub, table, mode)
	config["name"] = name
	failed := func() error { return t.rest.failed(ctx, name) }

	var (
		s        PgSample
		start    time.Time
		want     int64
		loadC    chan loadResult
		stopLoad context.CancelFunc
	)
	if phase == PgPhaseSnapshot {
		want = int64(cfg.Rows)
		s = PgSample{Phase: phase, Column: t.column, Tool: "snapshot.mode=initial", Rows: want}
		x.settle(ctx, t.procs...)
		start = time.Now()
		if err := t.rest.create(ctx, name, config); err != nil {
			return PgSample{}, err
		}
		defer t.rest.remove(name)
	} else {
		load := x.load(phase, table)
		want = load.changes()
		s = PgSample{Phase: phase, Column: t.column, Tool: "snapshot.mode=no_data, streaming", Rows: want}
		if err := t.rest.create(ctx, name, config); err != nil {
			return PgSample{}, err
		}
		defer t.rest.remove(name)
		if err := x.sess.awaitSlotActive(ctx, slot, cfg.StartTimeout, failed); err != nil {
			return PgSample{}, err
		}
		loader, err := dialLoader(ctx, x.dsn())
		if err != nil {
			return PgSample{}, err
		}
		defer loader.close()
		x.settle(ctx, t.procs...)
		cfg.Log.Info("connector streaming; loading", "target", t.column, "phase", phase, "changes", want)
		// A failed phase stops its load rather than waiting for it.
		loadCtx, cancelLoad := context.WithCancel(ctx)
		defer cancelLoad()
		stopLoad = cancelLoad
		start = time.Now()
		loadC = make(chan loadResult, 1)
		go func() {
			d, err := load.run(loadCtx, loader)
			loadC <- loadResult{d, err}
		}()
	}
	first, all, err := x.awaitTopic(ctx, t, topic, want, start, failed, loadC)
	if err != nil && stopLoad != nil {
		stopLoad()
	}
	if loadC != nil {
		lr := <-loadC // the load ended: every row is visible, or awaitTopic failed
		if err == nil {
			err = lr.err
		}
		s.LoadSeconds = lr.d.Seconds()
	}
	if err != nil {
		return PgSample{}, err
	}
	s.CPUSeconds = t.cpu(start, all).Seconds()
	s = x.timed(s, start, first, all)
	if cfg.Verify && x.run == 1 {
		if err := x.verifyCDCTopic(ctx, t.addr, topic, phase); err != nil {
			return PgSample{}, fmt.Errorf("verify %s: %w", topic, err)
		}
	}
	return s, nil
}

type loadResult struct {
	d   time.Duration
	err error
}

// awaitTopic reads the topic's end offset every Poll until it holds want
// records, and returns when the first and the last arrived. It fails
// when the connector or its task fails, the worker exits, the load fails
// or PhaseTimeout passes; more records than want are duplicates.
func (x *pgRun) awaitTopic(ctx context.Context, t *cdcTarget, topic string, want int64, start time.Time,
	failed func() error, loadC chan loadResult) (first, all time.Time, err error) {
	cfg := x.cfg
	deadline := start.Add(cfg.PhaseTimeout)
	lastStatus, lastLog := time.Now(), time.Now()
	var n int64
	for {
		got, cerr := topicEnd(ctx, t.adm, topic)
		now := time.Now()
		if cerr == nil {
			n = got
			if n > 0 && first.IsZero() {
				first = now
			}
			if n >= want {
				all = now
				break
			}
		}
		if err := t.alive(); err != nil {
			return first, all, err
		}
		if loadC != nil {
			select {
			case lr := <-loadC:
				loadC <- lr // awaited again by the caller
				if lr.err != nil {
					return first, all, lr.err
				}
			default:
			}
		}
		if now.Sub(lastStatus) > 500*time.Millisecond {
			lastStatus = now
			if err := failed(); err != nil {
				return first, all, err
			}
		}
		if now.Sub(lastLog) > 5*time.Second {
			lastLog = now
			cfg.Log.Info("waiting for rows in the topic", "target", t.column, "topic", topic, "rows", n, "of", want)
		}
		if now.After(deadline) {
			return first, all, fmt.Errorf("%d of %d rows in %s after %s (last error: %v)", n, want, topic, cfg.PhaseTimeout, cerr)
		}
		if !sleepCtx(ctx, cfg.Poll) { // polling the topic's end, as a lag monitor does
			return first, all, ctx.Err()
		}
	}
	if n > want {
		return first, all, fmt.Errorf("%s holds %d records, %d rows changed (duplicates)", topic, n, want)
	}
	return first, all, nil
}

// topicEnd is the sum of topic's end offsets (0 while it is unknown).
func topicEnd(ctx context.Context, adm *kadm.Client, topic string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	offs, err := adm.ListEndOffsets(ctx, topic)
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
}

// createCDCTopic creates the connector's table topic beforehand, with one
// partition as both brokers would auto-create it, so that neither pays
// for auto-creation inside the timed window.
func createCDCTopic(ctx context.Context, adm *kadm.Client, topic string) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	resp, err := adm.CreateTopic(ctx, 1, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	for {
		md, err := adm.Metadata(ctx, topic)
		if err == nil {
			if td, ok := md.Topics[topic]; ok && td.Err == nil && len(td.Partitions) == 1 && td.Partitions[0].Leader >= 0 {
				return nil
			}
		}
		if !sleepCtx(ctx, 50*time.Millisecond) { // polling metadata
			return fmt.Errorf("topic %s has no leader: %w", topic, ctx.Err())
		}
	}
}

// hasPlugin asks a worker whether it can run a connector class. GET
// /connector-plugins lists canonical classes only, while Fjord's
// connectors also answer to the classes they stand in for (Debezium's,
// Confluent's); the plugin's config endpoint resolves those names as
// POST /connectors does (200, or 404 "Unknown plugin").
func (x *connectRun) hasPlugin(ctx context.Context, class string) (bool, error) {
	code, body, err := x.do(ctx, http.MethodGet, "/connector-plugins/"+url.PathEscape(class)+"/config", nil)
	switch {
	case err != nil:
		return false, err
	case code == http.StatusOK:
		return true, nil
	case code == http.StatusNotFound:
		return false, nil
	}
	return false, fmt.Errorf("GET /connector-plugins/%s/config: %d %s", class, code, oneLine(body, 300))
}
