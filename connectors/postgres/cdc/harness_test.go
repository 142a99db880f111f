package cdc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	_ "github.com/fjordhq/fjord/connectors/postgres/cdc"
	_ "github.com/fjordhq/fjord/converters/header"
	_ "github.com/fjordhq/fjord/converters/json"
	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/internal/testkit/connectkit"
	_ "github.com/fjordhq/fjord/transforms"
)

// stack is what a CDC test runs on: a real Postgres, a real broker and a
// Connect worker in the test process.
type stack struct {
	pg     *testkit.Postgres
	broker *testkit.Broker
	worker *connectkit.Worker
	db     string
}

var dbSeq atomic.Int32

// newStack starts Postgres (with database "app"), a broker and a worker.
func newStack(t *testing.T) *stack {
	t.Helper()
	s := &stack{pg: testkit.StartPostgres(t), broker: testkit.StartBroker(t, nil), db: "app"}
	s.pg.CreateDatabase(t, s.db)
	s.worker = connectkit.Start(t, s.broker.Addr, connectkit.Options{})
	return s
}

// config is a connector config for the stack's database, overridden by
// kv pairs.
func (s *stack) config(name string, kv ...string) map[string]string {
	c := map[string]string{
		"name":              name,
		"connector.class":   "io.debezium.connector.postgresql.PostgresConnector",
		"database.hostname": s.pg.Host,
		"database.port":     fmt.Sprint(s.pg.Port),
		"database.user":     s.pg.User,
		"database.password": testkit.PostgresPassword,
		"database.dbname":   s.db,
		"topic.prefix":      "test",
		"plugin.name":       "pgoutput",
		"slot.name":         "slot_" + strings.ReplaceAll(name, "-", "_"),
		"publication.name":  "pub_" + strings.ReplaceAll(name, "-", "_"),
	}
	for i := 0; i+1 < len(kv); i += 2 {
		c[kv[i]] = kv[i+1]
	}
	return c
}

// event is one record of a CDC topic with its JsonConverter envelope
// unwrapped (schema and payload).
type event struct {
	Topic       string
	Offset      int64
	Key, Value  map[string]any // payloads; nil for null
	KeySchema   map[string]any
	ValueSchema map[string]any
	Headers     map[string]string
}

func (e event) op() string { s, _ := e.Value["op"].(string); return s }
func (e event) after() map[string]any {
	m, _ := e.Value["after"].(map[string]any)
	return m
}
func (e event) before() map[string]any {
	m, _ := e.Value["before"].(map[string]any)
	return m
}
func (e event) source() map[string]any {
	m, _ := e.Value["source"].(map[string]any)
	return m
}

func decodeEvent(t testing.TB, r *kgo.Record) event {
	t.Helper()
	e := event{Topic: r.Topic, Offset: r.Offset, Headers: map[string]string{}}
	for _, h := range r.Headers {
		e.Headers[h.Key] = string(h.Value)
	}
	unwrap := func(b []byte) (map[string]any, map[string]any) {
		if b == nil {
			return nil, nil
		}
		var env struct {
			Schema  map[string]any `json:"schema"`
			Payload any            `json:"payload"`
		}
		if err := json.Unmarshal(b, &env); err != nil {
			t.Fatalf("record %s@%d: %v: %s", r.Topic, r.Offset, err, b)
		}
		p, _ := env.Payload.(map[string]any)
		return p, env.Schema
	}
	e.Key, e.KeySchema = unwrap(r.Key)
	e.Value, e.ValueSchema = unwrap(r.Value)
	return e
}

// consumer reads topics from the start.
type consumer struct {
	t  testing.TB
	cl *kgo.Client
	w  *connectkit.Worker
}

func (s *stack) consume(t testing.TB, topics ...string) *consumer {
	cl := testkit.Client(t, s.broker.Addr, kgo.ConsumeTopics(topics...), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.AllowAutoTopicCreation(), kgo.FetchMaxWait(100*time.Millisecond))
	return &consumer{t: t, cl: cl, w: s.worker}
}

// next returns the next n events, failing the test when they do not
// arrive within wait or a connector fails.
func (c *consumer) next(n int, wait time.Duration) []event {
	c.t.Helper()
	ctx := testkit.Context(c.t, wait)
	var out []event
	for len(out) < n {
		fs := c.cl.PollRecords(ctx, n-len(out))
		if ctx.Err() != nil {
			c.t.Fatalf("got %d events, want %d (failure: %v)", len(out), n, c.w.Failed())
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, decodeEvent(c.t, r)) })
		if err := c.w.Failed(); err != nil {
			c.t.Fatal(err)
		}
	}
	return out
}

// none checks that no event arrives within d.
func (c *consumer) none(d time.Duration) {
	c.t.Helper()
	ctx := testkit.Context(c.t, d)
	fs := c.cl.PollRecords(ctx, 1)
	fs.EachRecord(func(r *kgo.Record) { c.t.Errorf("unexpected event %s@%d: %s", r.Topic, r.Offset, r.Value) })
}

func ops(evs []event) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Value == nil {
			b.WriteString("-")
			continue
		}
		b.WriteString(e.op())
	}
	return b.String()
}

func with(m map[string]string, kv ...string) map[string]string {
	m = maps.Clone(m)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

var errNotYet = errors.New("not yet")

func testkitCheck(t *testing.T, wait time.Duration, fn func() error) {
	t.Helper()
	testkit.CheckFor(t, wait, 50*time.Millisecond, fn)
}

// connectkitStart starts a worker keeping source offsets in file, and
// makes it the stack's worker.
func connectkitStart(t *testing.T, s *stack, file string) *connectkit.Worker {
	t.Helper()
	s.worker = connectkit.Start(t, s.broker.Addr, connectkit.Options{OffsetsFile: file})
	return s.worker
}

// queryRow runs one query on a short-lived connection to the stack's
// database.
func queryRow(s *stack, sql string, args []any, dst ...any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, s.pg.DSN(s.db))
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	return c.QueryRow(ctx, sql, args...).Scan(dst...)
}
