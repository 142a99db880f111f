package sink

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/internal/testkit/faultproxy"
)

// TestBadRecords: records the sink cannot write go to the errant record
// reporter with the reason, and the rest of their put is written; without
// a reporter the put fails with the reason.
func TestBadRecords(t *testing.T) {
	pg := testkit.StartPostgres(t)
	pg.Exec(t, "postgres", "CREATE TABLE strict (id BIGINT PRIMARY KEY, name TEXT NOT NULL CHECK (name <> 'forbidden'), n INT NOT NULL, m JSONB)")
	props := pgProps(pg, "postgres", "pk.mode", "record_value", "pk.fields", "id", "insert.mode", "upsert", "table.name.format", "strict")
	good := func(off, id int64) *connect.Record {
		return rec("t", off, nil, nil, valueSchema, value(id, fmt.Sprint("ok", id), 1))
	}
	bad := []struct {
		name   string
		r      *connect.Record
		reason string
	}{
		{"nul", rec("t", 1, nil, nil, valueSchema, value(2, "a\x00b", 1)), "NUL character"},
		{"null-into-not-null", rec("t", 3, nil, nil, valueSchema, structOf(valueSchema, "id", int64(4), "n", int32(1))), "violates not-null constraint"},
		{"check", rec("t", 5, nil, nil, valueSchema, value(6, "forbidden", 1)), "violates check constraint"},
		{"schemaless", rec("t", 7, nil, nil, nil, map[string]any{"id": int64(8)}), "requires records with a non-null Struct or String value"},
		{"unmappable", rec("t", 9, nil, nil, connect.NewStruct().Field("id", connect.Int64Schema).
			Field("m", connect.NewMap(connect.StringSchema, connect.StringSchema).Build()).Build(), nil), "doesn't have a mapping"},
	}
	bad[4].r.Value = structOf(bad[4].r.ValueSchema, "id", int64(10), "m", map[string]any{"a": "b"})

	task, tc := startTask(t, props, true)
	batch := []*connect.Record{good(0, 1)}
	for i, b := range bad {
		batch = append(batch, b.r, good(int64(2*i+2), int64(100+i)))
	}
	put(t, task, batch...)
	if len(tc.reported) != len(bad) {
		t.Fatalf("reported %d records, want %d: %v", len(tc.reported), len(bad), tc.errs)
	}
	for i, b := range bad {
		found := false
		for j, r := range tc.reported {
			if r == b.r {
				found = true
				if !strings.Contains(tc.errs[j].Error(), b.reason) {
					t.Errorf("%s: reported with %q, want %q", b.name, tc.errs[j], b.reason)
				}
			}
		}
		if !found {
			t.Errorf("%s (record %d) not reported", b.name, i)
		}
	}
	wantRows(t, rows(t, pg, "postgres", "SELECT id FROM strict ORDER BY id"), "1", "100", "101", "102", "103", "104")

	for _, b := range bad {
		t.Run("no-reporter/"+b.name, func(t *testing.T) {
			task, _ := startTask(t, props, false)
			err := task.Put(context.Background(), []*connect.Record{good(20, 20), b.r})
			var re *connect.RetriableError
			if err == nil || errors.As(err, &re) || !strings.Contains(err.Error(), b.reason) {
				t.Fatalf("put: %v, want a failure with %q", err, b.reason)
			}
		})
	}
	if got := rows(t, pg, "postgres", "SELECT count(*) FROM strict WHERE id = 20"); got[0] != "0" {
		t.Fatal("a failed put left rows behind")
	}
}

// TestConnectionLoss: a connection reset makes Put ask to be retried
// (retry.backoff.ms); PreCommit holds the failed records' partition back
// until the retried Put succeeds; max.retries bounds the retries.
func TestConnectionLoss(t *testing.T) {
	pg := testkit.StartPostgres(t)
	proxy := faultproxy.Start(t, net.JoinHostPort(pg.Host, strconv.Itoa(pg.Port)))
	url := "jdbc:postgresql://" + proxy.Addr() + "/postgres?sslmode=disable"
	props := pgProps(pg, "postgres", "connection.url", url, "auto.create", "true", "pk.mode", "record_key",
		"insert.mode", "upsert", "retry.backoff.ms", "1234", "max.retries", "2", "connection.attempts", "1")
	task, tc := startTask(t, props, true)
	ctx := context.Background()
	tp := connect.TopicPartition{Topic: "lossy"}
	r := func(off, id int64) *connect.Record {
		return rec("lossy", off, keySchema, key(id), valueSchema, value(id, fmt.Sprint("v", off), int32(off)))
	}
	put(t, task, r(0, 1))

	proxy.Reset() // the connection dies between puts
	batch := []*connect.Record{r(1, 1), r(2, 2)}
	err := task.Put(ctx, batch)
	var re *connect.RetriableError
	if !errors.As(err, &re) {
		t.Fatalf("put after a reset: %v, want a RetriableError", err)
	}
	if tc.timeout != 1234*time.Millisecond {
		t.Errorf("timeout asked %v, want retry.backoff.ms", tc.timeout)
	}
	if got, _ := task.PreCommit(ctx, map[connect.TopicPartition]int64{tp: 3}); got[tp] != 1 {
		t.Fatalf("PreCommit after a failed put lets %d through, want 1", got[tp])
	}
	put(t, task, batch...) // the runtime's retry
	if got, _ := task.PreCommit(ctx, map[connect.TopicPartition]int64{tp: 3}); got[tp] != 3 {
		t.Fatalf("PreCommit after the retry lets %d through, want 3", got[tp])
	}
	wantRows(t, textRows(t, pg, "postgres", "lossy", "id"), jrow(1, "v1", 1), jrow(2, "v2", 2))

	// Down for good: two retries, then the task fails.
	proxy.Close()
	for i := range 3 {
		err = task.Put(ctx, []*connect.Record{r(3, 3)})
		if i < 2 && !errors.As(err, &re) {
			t.Fatalf("attempt %d: %v, want a RetriableError", i, err)
		}
	}
	if err == nil || errors.As(err, &re) || !strings.Contains(err.Error(), "failing after 2 retries") {
		t.Fatalf("put past max.retries: %v", err)
	}
	if len(tc.reported) != 0 {
		t.Fatalf("connection errors reported %d records to the reporter", len(tc.reported))
	}
}

// TestLossyLink: with connections dropping at random, retried puts (as
// the runtime retries them) end with every record written once.
func TestLossyLink(t *testing.T) {
	pg := testkit.StartPostgres(t)
	proxy := faultproxy.Start(t, net.JoinHostPort(pg.Host, strconv.Itoa(pg.Port)))
	url := "jdbc:postgresql://" + proxy.Addr() + "/postgres?sslmode=disable"
	props := pgProps(pg, "postgres", "connection.url", url, "auto.create", "true", "pk.mode", "kafka",
		"insert.mode", "upsert", "max.retries", "1000", "connection.attempts", "5", "connection.backoff.ms", "10")
	task, _ := startTask(t, props, false)
	put(t, task, rec("lossy2", 0, nil, nil, valueSchema, value(0, "first", 0))) // table created before the faults
	proxy.Drop(0.05)
	ctx := testkit.Context(t, 60*time.Second)
	retries := 0
	const n = 2000
	for from := int64(1); from < n; from += 100 {
		var batch []*connect.Record
		for off := from; off < min(from+100, n); off++ {
			batch = append(batch, rec("lossy2", off, nil, nil, valueSchema, value(off, "v", int32(off))))
		}
		for {
			err := task.Put(ctx, batch)
			if err == nil {
				break
			}
			var re *connect.RetriableError
			if !errors.As(err, &re) || ctx.Err() != nil {
				t.Fatalf("put: %v", err)
			}
			retries++
		}
	}
	proxy.Drop(0)
	if retries == 0 {
		t.Fatal("no put failed: the link was not lossy")
	}
	wantRows(t, rows(t, pg, "postgres", "SELECT count(*), count(DISTINCT __connect_offset), min(__connect_offset), max(__connect_offset) FROM lossy2"),
		fmt.Sprintf("%d|%d|0|%d", n, n, n-1))
	t.Logf("%d puts retried", retries)
}

// TestTableChangedUnderTheSink: a table dropped (or a column renamed)
// behind the sink's back costs one retry; auto.create and auto.evolve
// then make it fit again.
func TestTableChangedUnderTheSink(t *testing.T) {
	pg := testkit.StartPostgres(t)
	task, tc := startTask(t, pgProps(pg, "postgres", "auto.create", "true", "auto.evolve", "true", "pk.mode", "record_key",
		"insert.mode", "upsert", "retry.backoff.ms", "0"), true)
	r := func(off, id int64) *connect.Record {
		return rec("moving", off, keySchema, key(id), valueSchema, value(id, fmt.Sprint("v", off), int32(off)))
	}
	put(t, task, r(0, 1))
	for i, change := range []string{"DROP TABLE moving", "ALTER TABLE moving RENAME COLUMN name TO old_name"} {
		pg.Exec(t, "postgres", change)
		batch := []*connect.Record{r(int64(i+1), 2)}
		err := task.Put(context.Background(), batch)
		var re *connect.RetriableError
		if !errors.As(err, &re) {
			t.Fatalf("%s: put %v, want a RetriableError", change, err)
		}
		put(t, task, batch...)
	}
	wantRows(t, rows(t, pg, "postgres", "SELECT id, name, n FROM moving ORDER BY id"), "2|v2|2")
	if len(tc.reported) != 0 {
		t.Fatalf("%d records reported", len(tc.reported))
	}
}

// TestSocketTimeout: with pgjdbc's socketTimeout (a driver property), a
// put stuck on a partitioned link gives up and asks to be retried. The
// abandoned write may still land when the link heals (its bytes were
// sent): upserts make the retry harmless.
func TestSocketTimeout(t *testing.T) {
	pg := testkit.StartPostgres(t)
	proxy := faultproxy.Start(t, net.JoinHostPort(pg.Host, strconv.Itoa(pg.Port)))
	props := pgProps(pg, "postgres", "connection.url", "jdbc:postgresql://"+proxy.Addr()+"/postgres?sslmode=disable",
		"connection.socketTimeout", "1", "auto.create", "true", "pk.mode", "kafka", "insert.mode", "upsert")
	task, _ := startTask(t, props, false)
	put(t, task, rec("stuck", 0, nil, nil, valueSchema, value(1, "a", 1)))
	proxy.Partition()
	start := time.Now()
	err := task.Put(context.Background(), []*connect.Record{rec("stuck", 1, nil, nil, valueSchema, value(2, "b", 2))})
	var re *connect.RetriableError
	if !errors.As(err, &re) || time.Since(start) > 5*time.Second {
		t.Fatalf("put on a partitioned link: %v after %v", err, time.Since(start))
	}
	proxy.Heal()
	put(t, task, rec("stuck", 1, nil, nil, valueSchema, value(2, "b", 2)))
	wantRows(t, rows(t, pg, "postgres", "SELECT count(*) FROM stuck"), "2")
}

// TestConnectionAttempts: connecting is tried connection.attempts times,
// connection.backoff.ms apart, within one put. (pgx may open one more
// connection per failed attempt, to cancel it: attempts are counted by
// the backoffs between them.)
func TestConnectionAttempts(t *testing.T) {
	pg := testkit.StartPostgres(t)
	proxy := faultproxy.Start(t, net.JoinHostPort(pg.Host, strconv.Itoa(pg.Port)))
	proxy.Drop(1) // every connection is reset at its first bytes
	url := "jdbc:postgresql://" + proxy.Addr() + "/postgres?sslmode=disable"
	for _, c := range []struct {
		attempts string
		min, max time.Duration
	}{{"3", 400 * time.Millisecond, time.Hour}, {"1", 0, 2 * time.Second}} {
		props := pgProps(pg, "postgres", "connection.url", url,
			"connection.attempts", c.attempts, "connection.backoff.ms", map[string]string{"3": "200", "1": "5000"}[c.attempts], "max.retries", "0")
		task, _ := startTask(t, props, false)
		before := proxy.Accepted()
		start := time.Now()
		err := task.Put(context.Background(), []*connect.Record{rec("t", 0, nil, nil, valueSchema, value(1, "a", 1))})
		d := time.Since(start)
		if err == nil || !strings.Contains(err.Error(), "connect to jdbc:postgresql://"+proxy.Addr()) {
			t.Fatalf("put: %v", err)
		}
		n, _ := strconv.Atoi(c.attempts)
		if got := proxy.Accepted() - before; got < int64(n) {
			t.Errorf("attempts %s: %d connections", c.attempts, got)
		}
		if d < c.min || d > c.max {
			t.Errorf("attempts %s took %v, want between %v and %v", c.attempts, d, c.min, c.max)
		}
	}
}

// TestForeignKeyRetries: a row whose parent is missing is retried (the
// parent may come from another topic); when retries run out, the
// reporter gets the orphans and the rest of the put is written.
func TestForeignKeyRetries(t *testing.T) {
	pg := testkit.StartPostgres(t)
	pg.Exec(t, "postgres", "CREATE TABLE parent (id BIGINT PRIMARY KEY)",
		"CREATE TABLE child (id BIGINT PRIMARY KEY, name TEXT, n INT NOT NULL REFERENCES parent (id))",
		"INSERT INTO parent VALUES (1)")
	props := pgProps(pg, "postgres", "pk.mode", "record_value", "pk.fields", "id", "insert.mode", "upsert",
		"table.name.format", "child", "max.retries", "1", "retry.backoff.ms", "0")
	batch := []*connect.Record{rec("c", 0, nil, nil, valueSchema, value(10, "ok", 1)), rec("c", 1, nil, nil, valueSchema, value(11, "orphan", 2))}
	var re *connect.RetriableError

	task, tc := startTask(t, props, true)
	if err := task.Put(context.Background(), batch); !errors.As(err, &re) {
		t.Fatalf("first put: %v, want a RetriableError", err)
	}
	put(t, task, batch...) // retries exhausted: unrolled
	if len(tc.reported) != 1 || tc.reported[0] != batch[1] || !strings.Contains(tc.errs[0].Error(), "violates foreign key constraint") {
		t.Fatalf("reported %v: %v", tc.reported, tc.errs)
	}
	wantRows(t, rows(t, pg, "postgres", "SELECT id FROM child"), "10")

	strict, _ := startTask(t, props, false)
	if err := strict.Put(context.Background(), batch); !errors.As(err, &re) {
		t.Fatalf("first put: %v, want a RetriableError", err)
	}
	if err := strict.Put(context.Background(), batch); err == nil || errors.As(err, &re) || !strings.Contains(err.Error(), "violates foreign key constraint") {
		t.Fatalf("put past max.retries without a reporter: %v", err)
	}
}
