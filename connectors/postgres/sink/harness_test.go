package sink

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/converters/json"
	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/internal/testkit/connectkit"
	_ "github.com/fjordhq/fjord/transforms"
)

const jsonConverter = "org.apache.kafka.connect.json.JsonConverter"

// connectHarness is a standalone Connect worker on a real broker, as
// `fjord connect-standalone` wires one (internal/testkit/connectkit).
type connectHarness struct{ *connectkit.Worker }

func startConnect(t testing.TB, addr string, overrides ...string) *connectHarness {
	t.Helper()
	props := map[string]string{"offset.flush.interval.ms": "200"}
	for i := 0; i+1 < len(overrides); i += 2 {
		props[overrides[i]] = overrides[i+1]
	}
	return &connectHarness{connectkit.Start(t, addr, connectkit.Options{Props: props})}
}

func (c *connectHarness) create(t testing.TB, config map[string]string) { c.Create(t, config) }

// crash abandons the tasks mid-put (connectkit's Crash).
func (c *connectHarness) crash() { c.Crash() }

// failed reports a FAILED connector or task, with its trace.
func (c *connectHarness) failed() error { return c.Failed() }

// awaitRows waits until query's rows (see rows) are want.
func (c *connectHarness) awaitRows(t *testing.T, pg *testkit.Postgres, db, query string, want []string) {
	t.Helper()
	var got []string
	testkit.CheckFor(t, 60*time.Second, 50*time.Millisecond, func() error {
		if err := c.failed(); err != nil {
			t.Fatal(err)
		}
		conn := pg.Connect(t, db)
		defer conn.Close(context.Background())
		got = nil
		rs, err := conn.Query(context.Background(), query)
		if err != nil {
			return err // the table may not exist yet
		}
		for rs.Next() {
			var s string
			if err := rs.Scan(&s); err != nil {
				rs.Close()
				return err
			}
			got = append(got, s)
		}
		rs.Close()
		if !slices.Equal(got, want) {
			return fmt.Errorf("%d rows, want %d; first differences:\n%s", len(got), len(want), diff(got, want))
		}
		return nil
	})
}

func diff(got, want []string) string {
	var b strings.Builder
	n := 0
	for i := 0; i < max(len(got), len(want)) && n < 5; i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			fmt.Fprintf(&b, "  got  %s\n  want %s\n", g, w)
			n++
		}
	}
	return b.String()
}

// encoder writes Connect data as JsonConverter does (schema and payload).
type encoder struct{ c *json.Converter }

func newEncoder(t testing.TB) encoder {
	c := json.New()
	if err := c.Configure(map[string]string{}, false); err != nil {
		t.Fatal(err)
	}
	return encoder{c}
}

func (e encoder) bytes(t testing.TB, topic string, s *connect.Schema, v any) []byte {
	t.Helper()
	if v == nil && s == nil {
		return nil
	}
	b, err := e.c.FromConnectData(topic, nil, s, v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func produce(t testing.TB, cl *kgo.Client, recs ...*kgo.Record) {
	t.Helper()
	if err := cl.ProduceSync(testkit.Context(t, 30*time.Second), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func createTopic(t testing.TB, addr string, partitions int32, topics ...string) {
	t.Helper()
	if _, err := testkit.Admin(t, addr).CreateTopics(testkit.Context(t, 30*time.Second), partitions, 1, nil, topics...); err != nil {
		t.Fatal(err)
	}
}
