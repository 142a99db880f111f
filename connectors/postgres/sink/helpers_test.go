package sink

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/internal/testkit"
)

// taskContext is the runtime's side of a task for tests that drive the
// task directly: it records timeouts and reported records.
type taskContext struct {
	mu       sync.Mutex
	tolerate bool // errors.tolerance=all: a reporter is given
	reported []*connect.Record
	errs     []error
	timeout  time.Duration
}

func (c *taskContext) ResetOffsets(map[connect.TopicPartition]int64) {}
func (c *taskContext) Timeout(d time.Duration)                       { c.timeout = d }
func (c *taskContext) Assignment() []connect.TopicPartition          { return nil }
func (c *taskContext) Pause(...connect.TopicPartition)               {}
func (c *taskContext) Resume(...connect.TopicPartition)              {}
func (c *taskContext) RequestCommit()                                {}
func (c *taskContext) Config() map[string]string                     { return nil }
func (c *taskContext) ErrantRecordReporter() connect.ErrantRecordReporter {
	if !c.tolerate {
		return nil
	}
	return c
}

func (c *taskContext) Report(_ context.Context, r *connect.Record, err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reported = append(c.reported, r)
	c.errs = append(c.errs, err)
	return nil
}

// pgProps is a sink config for database db of pg.
func pgProps(pg *testkit.Postgres, db string, kv ...string) map[string]string {
	m := map[string]string{
		"name":                "pg-sink-test",
		"connection.url":      pg.JDBCURL(db),
		"connection.user":     pg.User,
		"connection.password": testkit.PostgresPassword,
	}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// startTask starts a task on props; tolerate gives it a reporter.
func startTask(t testing.TB, props map[string]string, tolerate bool) (*Task, *taskContext) {
	t.Helper()
	tc := &taskContext{tolerate: tolerate}
	task := &Task{}
	task.Initialize(tc)
	if err := task.Start(context.Background(), props); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { task.Stop() })
	return task, tc
}

func put(t testing.TB, task *Task, recs ...*connect.Record) {
	t.Helper()
	if err := task.Put(testkit.Context(t, 60*time.Second), recs); err != nil {
		t.Fatalf("put: %v", err)
	}
}

// rec is a sink record of topic at offset.
func rec(topic string, offset int64, ks *connect.Schema, k any, vs *connect.Schema, v any) *connect.Record {
	return &connect.Record{Topic: topic, Partition: 0, Offset: offset, Timestamp: 1700000000000,
		KeySchema: ks, Key: k, ValueSchema: vs, Value: v,
		OriginalTopic: topic, OriginalPartition: 0, OriginalOffset: offset}
}

// structOf builds a struct of schema s from name, value pairs.
func structOf(s *connect.Schema, kv ...any) *connect.Struct {
	st := connect.NewStructValue(s)
	for i := 0; i+1 < len(kv); i += 2 {
		st.MustPut(kv[i].(string), kv[i+1])
	}
	return st
}

// rows returns a query's rows, each as its columns' text joined by "|"
// (NULL for nulls), in the query's order.
func rows(t testing.TB, pg *testkit.Postgres, db, query string) []string {
	t.Helper()
	conn := pg.Connect(t, db)
	rs, err := conn.Query(testkit.Context(t, 30*time.Second), query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		vals, err := rs.Values()
		if err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			if v == nil {
				parts[i] = "NULL"
			} else {
				parts[i] = fmt.Sprint(v)
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rs.Err(); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return out
}

// textRows is rows with every column cast to text in SQL (PostgreSQL's own
// rendering, independent of pgx's Go types).
func textRows(t testing.TB, pg *testkit.Postgres, db, table, orderBy string) []string {
	t.Helper()
	return rows(t, pg, db, fmt.Sprintf(`SELECT to_jsonb(x)::text FROM %s x ORDER BY %s`, table, orderBy))
}

func wantRows(t testing.TB, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("rows:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

func merged(a map[string]string, kv ...string) map[string]string {
	m := maps.Clone(a)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}
