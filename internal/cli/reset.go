package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// ResetOptions are the flags of `fjord group reset-offsets`, with
// kafka-consumer-groups' names. Exactly one scope (Topics or AllTopics) and
// one target (To* , ShiftBy, ByDuration) must be given. String fields are
// empty when the flag was not given.
type ResetOptions struct {
	// Topics are "topic" (all partitions) or "topic:0,2".
	Topics    []string
	AllTopics bool // every topic the group has committed offsets for

	ToEarliest bool
	ToLatest   bool
	ToOffset   string // N, clamped to the partition's range
	ToDatetime string // RFC 3339, or Kafka's yyyy-MM-ddTHH:mm:ss[.SSS] (local time)
	ShiftBy    string // ±N from the committed offset, clamped
	ByDuration string // Go duration (1h30m) or ISO-8601 (PT1H30M, P1D): now minus it

	// Execute commits the new offsets; without it the plan is only shown.
	Execute bool
	// Now is the clock for --by-duration; nil means time.Now.
	Now func() time.Time
}

// resetTarget is a parsed, validated target.
type resetTarget struct {
	kind  string // earliest, latest, offset, shift, time
	n     int64
	milli int64
}

func (o *ResetOptions) target() (resetTarget, error) {
	var ts []resetTarget
	if o.ToEarliest {
		ts = append(ts, resetTarget{kind: "earliest"})
	}
	if o.ToLatest {
		ts = append(ts, resetTarget{kind: "latest"})
	}
	if o.ToOffset != "" {
		n, err := strconv.ParseInt(o.ToOffset, 10, 64)
		if err != nil || n < 0 {
			return resetTarget{}, fmt.Errorf("--to-offset %q: want an offset (0 or more)", o.ToOffset)
		}
		ts = append(ts, resetTarget{kind: "offset", n: n})
	}
	if o.ShiftBy != "" {
		n, err := strconv.ParseInt(o.ShiftBy, 10, 64)
		if err != nil {
			return resetTarget{}, fmt.Errorf("--shift-by %q: want a number of records, e.g. -10 or 5", o.ShiftBy)
		}
		ts = append(ts, resetTarget{kind: "shift", n: n})
	}
	if o.ToDatetime != "" {
		t, err := ParseDatetime(o.ToDatetime)
		if err != nil {
			return resetTarget{}, err
		}
		ts = append(ts, resetTarget{kind: "time", milli: t.UnixMilli()})
	}
	if o.ByDuration != "" {
		d, err := ParseDuration(o.ByDuration)
		if err != nil {
			return resetTarget{}, err
		}
		now := time.Now
		if o.Now != nil {
			now = o.Now
		}
		ts = append(ts, resetTarget{kind: "time", milli: now().Add(-d).UnixMilli()})
	}
	switch len(ts) {
	case 0:
		return resetTarget{}, errors.New("say where to move the offsets: --to-earliest, --to-latest, --to-offset N, --to-datetime T, --shift-by N or --by-duration D")
	case 1:
		return ts[0], nil
	}
	return resetTarget{}, errors.New("give only one of --to-earliest, --to-latest, --to-offset, --to-datetime, --shift-by, --by-duration")
}

// ParseDatetime reads --to-datetime: RFC 3339 ("2024-05-01T10:00:00Z"), or
// the layout kafka-consumer-groups documents ("2024-05-01T10:00:00.000",
// optionally with a zone), which without a zone means local time.
func ParseDatetime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.000Z0700", "2006-01-02T15:04:05Z0700"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	for _, layout := range []string{"2006-01-02T15:04:05.000", "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--to-datetime %q: want RFC 3339 like 2024-05-01T10:00:00Z (or 2024-05-01T10:00:00.000 in local time)", s)
}

// ParseDuration reads --by-duration as a Go duration ("90m", "1h30m") or
// the ISO-8601 form Kafka's tool takes ("PT1H30M", "P1DT2H"; days are 24h).
func ParseDuration(s string) (time.Duration, error) {
	bad := fmt.Errorf("--by-duration %q: want a duration like 1h30m or PT1H30M (P1D for a day)", s)
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return 0, bad
		}
		return d, nil
	}
	u := strings.ToUpper(s)
	if !strings.HasPrefix(u, "P") || len(u) < 3 {
		return 0, bad
	}
	u = u[1:]
	var total float64 // seconds
	inTime := false
	for u != "" {
		if u[0] == 'T' {
			if inTime {
				return 0, bad
			}
			inTime = true
			u = u[1:]
			if u == "" {
				return 0, bad
			}
			continue
		}
		i := 0
		for i < len(u) && (u[i] >= '0' && u[i] <= '9' || u[i] == '.') {
			i++
		}
		if i == 0 || i == len(u) {
			return 0, bad
		}
		n, err := strconv.ParseFloat(u[:i], 64)
		if err != nil {
			return 0, bad
		}
		var unit float64
		switch {
		case !inTime && u[i] == 'D':
			unit = 86400
		case inTime && u[i] == 'H':
			unit = 3600
		case inTime && u[i] == 'M':
			unit = 60
		case inTime && u[i] == 'S':
			unit = 1
		default:
			return 0, bad
		}
		total += n * unit
		u = u[i+1:]
	}
	if total > math.MaxInt64/float64(time.Second) {
		return 0, bad
	}
	return time.Duration(total * float64(time.Second)), nil
}

// parseTopicScope reads a --topic value: "t" or "t:0,1,2".
func parseTopicScope(s string) (topic string, partitions []int32, err error) {
	topic, ps, hasParts := strings.Cut(s, ":")
	if topic == "" {
		return "", nil, fmt.Errorf("--topic %q: want TOPIC or TOPIC:P1,P2", s)
	}
	if !hasParts {
		return topic, nil, nil
	}
	for p := range strings.SplitSeq(ps, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
		if err != nil || n < 0 {
			return "", nil, fmt.Errorf("--topic %q: partition %q is not a partition number", s, p)
		}
		partitions = append(partitions, int32(n))
	}
	return topic, partitions, nil
}

type resetRow struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	OldOffset *int64 `json:"old_offset"`
	NewOffset int64  `json:"new_offset"`
	Error     string `json:"error,omitempty"`
}

// GroupResetOffsets moves a group's committed offsets. As in Kafka, the
// group must be inactive (Empty, or not existing yet): the members of an
// active group would overwrite the new offsets with their next commit. The
// plan is printed as old → new offsets; only Execute commits it.
func GroupResetOffsets(ctx context.Context, co *ClientOptions, group string, o ResetOptions, p *Printer) error {
	if (len(o.Topics) == 0) == !o.AllTopics {
		return errors.New("say which offsets to reset: --topic TOPIC[:P,...] (repeatable) or --all-topics")
	}
	tgt, err := o.target()
	if err != nil {
		return err
	}
	scope := map[string][]int32{} // topic → explicit partitions (nil: all)
	for _, t := range o.Topics {
		topic, ps, err := parseTopicScope(t)
		if err != nil {
			return err
		}
		if old, ok := scope[topic]; ok && (old == nil || ps == nil) {
			scope[topic] = nil
		} else {
			scope[topic] = append(old, ps...)
		}
	}

	c, err := co.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()

	dgs, err := c.Admin.DescribeGroups(ctx, group)
	if err != nil {
		return groupErr(group, fmt.Errorf("describe: %w", err))
	}
	if dg, ok := dgs[group]; ok {
		if dg.Err != nil && !errors.Is(dg.Err, kerr.GroupIDNotFound) {
			return groupErr(group, fmt.Errorf("describe: %w", dg.Err))
		}
		if dg.Err == nil && dg.State != "Empty" && dg.State != "Dead" && dg.State != "" {
			return fmt.Errorf("group %s is %s with %s: offsets can only be reset while the group is inactive; "+
				"stop its consumers (they would overwrite the new offsets), then retry", group, dg.State, plural(len(dg.Members), "member"))
		}
	}

	committed, err := c.Admin.FetchOffsets(ctx, group)
	if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
		return groupErr(group, fmt.Errorf("fetch committed offsets: %w", err))
	}

	// Resolve the partitions to reset.
	parts := kadm.TopicsSet{}
	if o.AllTopics {
		committed.Each(func(r kadm.OffsetResponse) {
			if r.Err == nil && r.At >= 0 {
				parts.Add(r.Topic, r.Partition)
			}
		})
		if len(parts) == 0 {
			return fmt.Errorf("group %s has no committed offsets, so --all-topics matches nothing: name topics with --topic", group)
		}
	} else {
		names := make([]string, 0, len(scope))
		for t := range scope {
			names = append(names, t)
		}
		sort.Strings(names)
		tds, err := c.Admin.ListTopics(ctx, names...)
		if err != nil {
			return fmt.Errorf("look up topics: %w", err)
		}
		for _, t := range names {
			d, ok := tds[t]
			if !ok {
				return topicErr(t, kerr.UnknownTopicOrPartition)
			}
			if d.Err != nil {
				return topicErr(t, d.Err)
			}
			if scope[t] == nil {
				for p := range d.Partitions {
					parts.Add(t, p)
				}
				continue
			}
			for _, p := range scope[t] {
				if _, ok := d.Partitions[p]; !ok {
					return fmt.Errorf("topic %s has no partition %d: it has %s", t, p, plural(len(d.Partitions), "partition"))
				}
				parts.Add(t, p)
			}
		}
	}
	topics := parts.Topics()

	// List what the target needs; start and end are needed to clamp.
	starts, err := c.Admin.ListStartOffsets(ctx, topics...)
	if err != nil {
		return fmt.Errorf("list start offsets: %w", err)
	}
	ends, err := c.Admin.ListEndOffsets(ctx, topics...)
	if err != nil {
		return fmt.Errorf("list end offsets: %w", err)
	}
	var byTime kadm.ListedOffsets
	if tgt.kind == "time" {
		if byTime, err = c.Admin.ListOffsetsAfterMilli(ctx, tgt.milli, topics...); err != nil {
			return fmt.Errorf("list offsets by time: %w", err)
		}
	}

	var rows []resetRow
	newOffsets := kadm.Offsets{}
	for _, tp := range parts.Sorted() {
		for _, partition := range tp.Partitions {
			row := resetRow{Topic: tp.Topic, Partition: partition}
			if cr, ok := committed.Lookup(tp.Topic, partition); ok && cr.Err == nil && cr.At >= 0 {
				old := cr.At
				row.OldOffset = &old
			}
			start, serr := listed(starts, tp.Topic, partition)
			end, eerr := listed(ends, tp.Topic, partition)
			if err := errors.Join(serr, eerr); err != nil {
				return fmt.Errorf("topic %s partition %d: list offsets: %w", tp.Topic, partition, err)
			}
			var want int64
			switch tgt.kind {
			case "earliest":
				want = start
			case "latest":
				want = end
			case "offset":
				want = tgt.n
			case "shift":
				if row.OldOffset == nil {
					return fmt.Errorf("cannot shift partition %s-%d: group %s has no committed offset there; use --to-offset or --to-earliest for it", tp.Topic, partition, group)
				}
				want = *row.OldOffset + tgt.n
			case "time":
				off, err := listed(byTime, tp.Topic, partition)
				if err != nil {
					return fmt.Errorf("topic %s partition %d: list offsets by time: %w", tp.Topic, partition, err)
				}
				if off < 0 {
					// No record at or after the time: the end, as Kafka does.
					off = end
				}
				want = off
			}
			row.NewOffset = min(max(want, start), end)
			rows = append(rows, row)
			newOffsets.Add(kadm.Offset{Topic: tp.Topic, Partition: partition, At: row.NewOffset, LeaderEpoch: -1})
		}
	}

	var errs []error
	if o.Execute {
		resps, err := c.Admin.CommitOffsets(ctx, group, newOffsets)
		if err != nil {
			return groupErr(group, fmt.Errorf("commit new offsets: %w", err))
		}
		for i := range rows {
			r, ok := resps.Lookup(rows[i].Topic, rows[i].Partition)
			if !ok {
				rows[i].Error = "not in the commit answer"
			} else if r.Err != nil {
				rows[i].Error = r.Err.Error()
			} else {
				continue
			}
			errs = append(errs, groupErr(group, fmt.Errorf("commit %s-%d: %s", rows[i].Topic, rows[i].Partition, rows[i].Error)))
		}
	}

	if p.JSONMode() {
		if err := p.JSON(struct {
			Group    string     `json:"group"`
			Executed bool       `json:"executed"`
			Offsets  []resetRow `json:"offsets"`
		}{group, o.Execute, rows}); err != nil {
			return err
		}
	} else {
		header := []string{"GROUP", "TOPIC", "PARTITION", "OLD-OFFSET", "NEW-OFFSET"}
		if len(errs) > 0 {
			header = append(header, "ERROR")
		}
		var cells [][]string
		for _, r := range rows {
			row := []string{group, r.Topic, strconv.Itoa(int(r.Partition)), optInt(r.OldOffset), strconv.FormatInt(r.NewOffset, 10)}
			if len(errs) > 0 {
				row = append(row, r.Error)
			}
			cells = append(cells, row)
		}
		if err := p.Table(header, cells); err != nil {
			return err
		}
		p.Linef("")
		switch {
		case !o.Execute:
			p.Linef("Dry run: nothing changed. Add --execute to commit these offsets.")
		case len(errs) == 0:
			p.Linef("Committed the new offsets of group %s.", group)
		}
	}
	return errors.Join(errs...)
}

// listed looks up one partition in a ListOffsets answer.
func listed(l kadm.ListedOffsets, topic string, partition int32) (int64, error) {
	lo, ok := l.Lookup(topic, partition)
	if !ok {
		return 0, errors.New("partition missing from the answer")
	}
	if lo.Err != nil {
		return 0, lo.Err
	}
	return lo.Offset, nil
}
