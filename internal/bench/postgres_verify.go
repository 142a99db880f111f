package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// verifyCDCTopic reads a phase's topic back (in the first run) and checks
// that it holds the change events of exactly the rows the phase changed:
// JsonConverter envelopes with schemas whose payload has the phase's op
// (c, u or r) and an `after` image, each row's id as often as the row
// changed. A connector that is fast because it drops or repeats events
// fails here.
func (x *pgRun) verifyCDCTopic(ctx context.Context, addr, topic, phase string) error {
	rows, per, op := int64(x.cfg.Rows), 1, "c"
	switch phase {
	case PgPhaseUpdate:
		rows, per, op = int64(x.cfg.UpdateRows), x.cfg.Updates, "u"
	case PgPhaseSnapshot:
		op = "r"
	}
	want := rows * int64(per)
	ctx, cancel := context.WithTimeout(ctx, max(3*time.Minute, x.cfg.PhaseTimeout))
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return err
	}
	defer cl.Close()
	seen := make([]int32, rows+1)
	var n int64
	var bad error
	for n < want && bad == nil {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return fmt.Errorf("read %d of %d records: %w", n, want, ctx.Err())
		}
		for _, fe := range fs.Errors() {
			if !errors.Is(fe.Err, context.Canceled) {
				return fmt.Errorf("fetch: %w", fe.Err)
			}
		}
		fs.EachRecord(func(r *kgo.Record) {
			n++
			if bad != nil {
				return
			}
			id, gotOp, err := changeEvent(r.Value)
			switch {
			case err != nil:
				bad = fmt.Errorf("offset %d: %w", r.Offset, err)
			case gotOp != op:
				bad = fmt.Errorf("offset %d: op %q, want %q", r.Offset, gotOp, op)
			case id < 1 || id > rows:
				bad = fmt.Errorf("offset %d: row id %d outside 1..%d", r.Offset, id, rows)
			default:
				seen[id]++
			}
		})
	}
	if bad != nil {
		return bad
	}
	if n != want {
		return fmt.Errorf("%d records, want %d", n, want)
	}
	// Records that arrived after the timed phase ended are duplicates too.
	if end, err := topicEnd(ctx, kadm.NewClient(cl), topic); err != nil || end != want {
		return fmt.Errorf("the topic ends at %d records (%v), want %d", end, err, want)
	}
	for id := int64(1); id <= rows; id++ {
		if int(seen[id]) != per {
			return fmt.Errorf("row %d has %d events, want %d", id, seen[id], per)
		}
	}
	x.rep.Verified = append(x.rep.Verified, fmt.Sprintf("%s: %d op=%s events, rows 1..%d × %d", topic, want, op, rows, per))
	return nil
}

// changeEvent extracts a Debezium envelope's op and after.id from a
// JsonConverter value with schemas: {"schema":…,"payload":{…}}. Only the
// payload is decoded (the schema is most of the bytes).
func changeEvent(v []byte) (id int64, op string, err error) {
	const key = `"payload":`
	i := bytes.LastIndex(v, []byte(key))
	end := bytes.LastIndexByte(v, '}')
	if i < 0 || end < i+len(key) {
		return 0, "", fmt.Errorf("value is not a JsonConverter envelope with a payload: %s", oneLine(string(v), 200))
	}
	var p struct {
		Op    string `json:"op"`
		After *struct {
			ID *int64 `json:"id"`
		} `json:"after"`
	}
	if err := json.Unmarshal(v[i+len(key):end], &p); err != nil {
		return 0, "", fmt.Errorf("payload: %w", err)
	}
	if p.After == nil || p.After.ID == nil {
		return 0, p.Op, errors.New("payload has no after.id")
	}
	return *p.After.ID, p.Op, nil
}
