package cdc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
)

// The worker is SIGKILLed during the snapshot and again during streaming
// under a write load; after restarts every committed change is in the
// topic — each row's versions 1..final, none missing — and the duplicates
// (changes sent again from the uncommitted window) are counted.
func TestCrashDuringSnapshotAndStreaming(t *testing.T) {
	testkit.SkipShort(t, "process-level crash test")
	pg := testkit.StartPostgres(t)
	pg.CreateDatabase(t, "app")
	const initialRows = 30000
	pg.Exec(t, "app",
		`CREATE TABLE accounts (id int PRIMARY KEY, version int NOT NULL, balance bigint NOT NULL, note text)`,
		fmt.Sprintf(`INSERT INTO accounts SELECT g, 1, 0, md5(g::text) FROM generate_series(1, %d) g`, initialRows))

	dev := testkit.StartDevProcess(t, t.TempDir())
	dev.WaitServing(t, 60*time.Second, "")
	postConnector(t, dev.HTTPAddr, map[string]string{
		"name":              "crash",
		"connector.class":   "io.debezium.connector.postgresql.PostgresConnector",
		"database.hostname": pg.Host, "database.port": fmt.Sprint(pg.Port),
		"database.user": pg.User, "database.password": testkit.PostgresPassword, "database.dbname": "app",
		"topic.prefix": "crash", "slot.name": "crash", "publication.name": "crash",
		"max.batch.size": "256", "heartbeat.interval.ms": "1000",
	})
	topic := "crash.public.accounts"

	// 1. SIGKILL during the snapshot, once some of it is in the topic.
	waitRecords(t, dev.KafkaAddr, topic, 1000, 120*time.Second)
	dev.Kill()
	dev.Restart()
	dev.WaitServing(t, 60*time.Second, "")

	// 2. A write load: updates that bump each row's version, inserts of
	// new rows, deletes; SIGKILL in the middle of it.
	load := startLoad(t, pg.DSN("app"), initialRows, 3*time.Second)
	time.Sleep(1500 * time.Millisecond)
	dev.Kill()
	dev.Restart()
	dev.WaitServing(t, 60*time.Second, "")
	committed := load.wait(t)

	// Every committed change arrives: compare with the table.
	want := tableVersions(t, pg.DSN("app"))
	var recs []*kgo.Record
	testkit.CheckFor(t, 180*time.Second, time.Second, func() error {
		recs = readAll(t, dev.KafkaAddr, topic)
		got, _, _ := replay(t, recs)
		if d := diffVersions(want, got); d != "" {
			return fmt.Errorf("topic does not match the table yet: %s", d)
		}
		return nil
	})
	got, dups, versions := replay(t, recs)
	if d := diffVersions(want, got); d != "" {
		t.Fatal(d)
	}
	// Every version of every row after the one its snapshot read was
	// emitted (no update lost).
	for id, vs := range versions {
		final, ok := want[id]
		if !ok {
			continue // deleted
		}
		first := final.version
		for v := range vs {
			first = min(first, v)
		}
		for v := first; v <= final.version; v++ {
			if !vs[v] {
				t.Fatalf("row %d: version %d (of %d..%d) never emitted", id, v, first, final.version)
			}
		}
	}
	t.Logf("%d records for %d committed load transactions and %d initial rows; %d duplicates after 2 SIGKILLs", len(recs), committed, initialRows, dups)
	if dups > len(recs)/2 {
		t.Errorf("%d duplicates of %d records: more than the uncommitted window", dups, len(recs))
	}
}

func postConnector(t *testing.T, httpAddr string, cfg map[string]string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"name": cfg["name"], "config": cfg})
	testkit.CheckFor(t, 60*time.Second, 200*time.Millisecond, func() error {
		resp, err := http.Post("http://"+httpAddr+"/connectors", "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			var b bytes.Buffer
			b.ReadFrom(resp.Body)
			return fmt.Errorf("POST /connectors: %s %s", resp.Status, b.String())
		}
		return nil
	})
}

func waitRecords(t *testing.T, addr, topic string, n int64, wait time.Duration) {
	t.Helper()
	adm := testkit.Admin(t, addr)
	testkit.CheckFor(t, wait, 100*time.Millisecond, func() error {
		ends, err := adm.ListEndOffsets(context.Background(), topic)
		if err != nil {
			return err
		}
		var total int64
		ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
		if total < n {
			return fmt.Errorf("%s has %d records, want %d", topic, total, n)
		}
		return nil
	})
}

// readAll reads a topic to its current end.
func readAll(t *testing.T, addr, topic string) []*kgo.Record {
	t.Helper()
	adm := testkit.Admin(t, addr)
	ends, err := adm.ListEndOffsets(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	var want int64
	ends.Each(func(o kadm.ListedOffset) { want += o.Offset })
	cl := testkit.Client(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	defer cl.Close()
	ctx := testkit.Context(t, 60*time.Second)
	var out []*kgo.Record
	for int64(len(out)) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records of %s", len(out), want, topic)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Partition != out[j].Partition {
			return out[i].Partition < out[j].Partition
		}
		return out[i].Offset < out[j].Offset
	})
	return out
}

type rowState struct {
	version int
	balance int64
}

// replay applies the change events in order and returns the resulting
// rows, the number of duplicate events, and the versions seen per row.
func replay(t *testing.T, recs []*kgo.Record) (map[int]rowState, int, map[int]map[int]bool) {
	rows := map[int]rowState{}
	versions := map[int]map[int]bool{}
	seen := map[string]bool{}
	dups := 0
	for _, r := range recs {
		if r.Value == nil {
			continue
		}
		e := decodeEvent(t, r)
		id := int(e.Key["id"].(float64))
		if e.op() == "d" {
			k := fmt.Sprintf("d/%d/%v", id, e.source()["lsn"])
			if seen[k] {
				dups++
			}
			seen[k] = true
			delete(rows, id)
			continue
		}
		a := e.after()
		st := rowState{version: int(a["version"].(float64)), balance: int64(a["balance"].(float64))}
		k := fmt.Sprintf("%s/%d/%d", e.op(), id, st.version)
		if seen[k] {
			dups++
		}
		seen[k] = true
		if versions[id] == nil {
			versions[id] = map[int]bool{}
		}
		versions[id][st.version] = true
		rows[id] = st
	}
	return rows, dups, versions
}

func tableVersions(t *testing.T, dsn string) map[int]rowState {
	t.Helper()
	ctx := testkit.Context(t, 30*time.Second)
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	rows, err := c.Query(ctx, `SELECT id, version, balance FROM accounts`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]rowState{}
	for rows.Next() {
		var id int
		var st rowState
		if err := rows.Scan(&id, &st.version, &st.balance); err != nil {
			t.Fatal(err)
		}
		out[id] = st
	}
	return out
}

func diffVersions(want, got map[int]rowState) string {
	for id, w := range want {
		if g, ok := got[id]; !ok || g != w {
			return fmt.Sprintf("row %d: table %+v, topic %+v (present %v)", id, w, g, ok)
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			return fmt.Sprintf("row %d is in the topic but deleted from the table", id)
		}
	}
	return ""
}

// load runs pgbench-style transactions for a bounded time on 2
// connections: each updates a few random rows (version+1), inserts one and
// sometimes deletes one.
type load struct {
	wg        sync.WaitGroup
	mu        sync.Mutex
	committed int
	err       error
}

func startLoad(t *testing.T, dsn string, initialRows int, d time.Duration) *load {
	l := &load{}
	deadline := time.Now().Add(d)
	for w := 0; w < 2; w++ {
		l.wg.Add(1)
		go func(w int) {
			defer l.wg.Done()
			ctx := context.Background()
			c, err := pgx.Connect(ctx, dsn)
			if err != nil {
				l.fail(err)
				return
			}
			defer c.Close(ctx)
			rnd := rand.New(rand.NewPCG(uint64(w), 42))
			next := initialRows + 1 + w*1_000_000
			for i := 0; i < 100_000 && time.Now().Before(deadline); i++ {
				tx, err := c.Begin(ctx)
				if err != nil {
					l.fail(err)
					return
				}
				for j := 0; j < 3; j++ {
					id := 1 + rnd.IntN(initialRows)
					if _, err := tx.Exec(ctx, `UPDATE accounts SET version = version + 1, balance = balance + $2 WHERE id = $1`, id, rnd.IntN(100)-50); err != nil {
						tx.Rollback(ctx)
						l.fail(err)
						return
					}
				}
				if _, err := tx.Exec(ctx, `INSERT INTO accounts VALUES ($1, 1, 0, 'new')`, next); err != nil {
					tx.Rollback(ctx)
					l.fail(err)
					return
				}
				next++
				if i%10 == 0 {
					if _, err := tx.Exec(ctx, `DELETE FROM accounts WHERE id = $1`, 1+rnd.IntN(initialRows)); err != nil {
						tx.Rollback(ctx)
						l.fail(err)
						return
					}
				}
				if err := tx.Commit(ctx); err != nil {
					l.fail(err)
					return
				}
				l.mu.Lock()
				l.committed++
				l.mu.Unlock()
			}
		}(w)
	}
	return l
}

func (l *load) fail(err error) {
	l.mu.Lock()
	if l.err == nil {
		l.err = err
	}
	l.mu.Unlock()
}

func (l *load) wait(t *testing.T) int {
	t.Helper()
	l.wg.Wait()
	if l.err != nil {
		t.Fatalf("load: %v", l.err)
	}
	return l.committed
}
