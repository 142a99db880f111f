package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ConsumeOptions are the flags of `fjord consume`, named after
// kafka-console-consumer.sh's.
type ConsumeOptions struct {
	Topic string
	// Group joins a consumer group and commits what was printed; without
	// it the consumer reads partitions directly and commits nothing.
	Group string
	// FromBeginning starts at the earliest offset when there is no
	// committed offset (always, without a group); otherwise the latest.
	FromBeginning bool
	// MaxMessages stops after that many records; 0 means no limit.
	MaxMessages int64
	// Partition reads one partition only; -1 means all.
	Partition int32
	// Offset is where to start without a group: earliest, latest, an
	// offset, or -N for the last N records of each partition.
	Offset string
	// IdleTimeout stops when no record arrived for that long; 0 waits
	// forever (--timeout-ms).
	IdleTimeout time.Duration
	// Format is a kcat-style template or "json"; empty means the value
	// (or key TAB value with PrintKey), as kafka-console-consumer prints.
	Format   string
	PrintKey bool
	// IsolationLevel is read_uncommitted (default) or read_committed.
	IsolationLevel string
}

// ConsumeResult says how a consume run ended.
type ConsumeResult struct {
	Consumed int64
	// Reason is why it stopped: "max-messages", "idle-timeout",
	// "interrupted".
	Reason string
}

// ParseOffset reads --offset: earliest|beginning, latest|end, N, or -N
// (the last N records).
func ParseOffset(s string) (kgo.Offset, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "earliest", "beginning", "start":
		return kgo.NewOffset().AtStart(), nil
	case "latest", "end":
		return kgo.NewOffset().AtEnd(), nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return kgo.Offset{}, fmt.Errorf("--offset %q: want earliest, latest, an offset, or -N for the last N records", s)
	}
	if n < 0 {
		return kgo.NewOffset().AtEnd().Relative(n), nil
	}
	return kgo.NewOffset().At(n), nil
}

func (o *ConsumeOptions) formatter() (*RecordFormatter, error) {
	format := o.Format
	if format == "" {
		format = `%v\n`
		if o.PrintKey {
			format = `%k\t%v\n`
		}
	}
	return ParseFormat(format)
}

// consumerOpts maps the flags onto kgo options, refusing combinations whose
// meaning would be unclear, as kafka-console-consumer does.
func (o *ConsumeOptions) consumerOpts(pos *startPositions) ([]kgo.Opt, error) {
	// Kafka's fetch.max.wait.ms default (kgo's is 5s). A partition that
	// becomes fetchable while a long-poll fetch is in flight (after offset
	// validation, or a rebalance) only joins the next fetch, so a long wait
	// would look like silence to --timeout-ms; keep it well below that.
	wait := 500 * time.Millisecond
	if o.IdleTimeout > 0 {
		wait = min(wait, max(o.IdleTimeout/4, 10*time.Millisecond))
	}
	opts := []kgo.Opt{kgo.FetchMaxWait(wait)}
	switch strings.ToLower(o.IsolationLevel) {
	case "", "read_uncommitted":
	case "read_committed":
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	default:
		return nil, fmt.Errorf("--isolation-level %q: want read_uncommitted or read_committed", o.IsolationLevel)
	}
	if o.MaxMessages < 0 {
		return nil, fmt.Errorf("--max-messages %d: want 1 or more (0 for no limit)", o.MaxMessages)
	}
	if o.Partition < -1 {
		return nil, fmt.Errorf("--partition %d: want a partition number (0 or more)", o.Partition)
	}
	if o.FromBeginning && o.Offset != "" {
		return nil, errors.New("--from-beginning and --offset both say where to start: give one")
	}
	start := kgo.NewOffset().AtEnd()
	if o.FromBeginning {
		start = kgo.NewOffset().AtStart()
	}
	if o.Offset != "" {
		off, err := ParseOffset(o.Offset)
		if err != nil {
			return nil, err
		}
		start = off
	}
	if o.Group != "" {
		if o.Partition >= 0 || o.Offset != "" {
			return nil, fmt.Errorf("--group takes partitions and positions from the group: drop --partition/--offset, "+
				"or move the group with `fjord group reset-offsets %s`", o.Group)
		}
		return append(opts,
			kgo.ConsumerGroup(o.Group),
			kgo.ConsumeTopics(o.Topic),
			// Only used when the group has no committed offset.
			kgo.ConsumeResetOffset(start),
			// Commit what was printed, not what was fetched, so
			// --max-messages never skips unprinted records.
			kgo.AutoCommitMarks(),
			kgo.OnPartitionsAssigned(pos.assigned),
			kgo.OnPartitionsRevoked(pos.revoked),
		), nil
	}
	if o.Partition >= 0 {
		return append(opts, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{o.Topic: {o.Partition: start}})), nil
	}
	return append(opts, kgo.ConsumeTopics(o.Topic), kgo.ConsumeResetOffset(start)), nil
}

// Consume prints records of one topic to out until MaxMessages, the idle
// timeout, or ctx is done (SIGINT), whichever comes first. With a group, the
// offsets of printed records are committed before it returns. The
// "Processed a total of N messages" line goes to status, as Kafka prints it.
func Consume(ctx context.Context, co *ClientOptions, o ConsumeOptions, out, status io.Writer) (ConsumeResult, error) {
	var res ConsumeResult
	f, err := o.formatter()
	if err != nil {
		return res, err
	}
	pos := &startPositions{latest: !o.FromBeginning}
	kopts, err := o.consumerOpts(pos)
	if err != nil {
		return res, err
	}
	c, err := co.Connect(ctx, kopts...)
	if err != nil {
		return res, err
	}
	defer c.Close()
	if err := checkTopicPartition(ctx, c, o.Topic, o.Partition); err != nil {
		return res, err
	}

	w := bufio.NewWriterSize(out, 64<<10)
	var buf []byte
	// The idle clock restarts on every printed record and on every
	// assignment, so the time a group takes to (re)balance is not counted
	// as silence.
	last := time.Now()
	idleSince := func() time.Time {
		if a := pos.lastAssigned(); a.After(last) {
			return a
		}
		return last
	}
	var loopErr error
loop:
	for {
		if o.MaxMessages > 0 && res.Consumed >= o.MaxMessages {
			res.Reason = "max-messages"
			break
		}
		pctx, cancel := ctx, context.CancelFunc(func() {})
		if o.IdleTimeout > 0 {
			pctx, cancel = context.WithDeadline(ctx, idleSince().Add(o.IdleTimeout))
		}
		n := -1
		if o.MaxMessages > 0 {
			n = int(min(o.MaxMessages-res.Consumed, 1<<20))
		}
		fetches := c.Client.PollRecords(pctx, n)
		cancel()
		if ctx.Err() != nil {
			res.Reason = "interrupted"
			break
		}
		if fetches.IsClientClosed() {
			break
		}
		for _, fe := range fetches.Errors() {
			switch {
			case errors.Is(fe.Err, context.DeadlineExceeded), errors.Is(fe.Err, context.Canceled):
				if pctx.Err() != nil && ctx.Err() == nil {
					if time.Since(idleSince()) < o.IdleTimeout {
						continue loop // assigned while waiting
					}
					res.Reason = "idle-timeout"
					break loop
				}
			case errors.Is(fe.Err, kerr.UnknownTopicOrPartition), errors.Is(fe.Err, kerr.UnknownTopicID):
				loopErr = topicErr(o.Topic, fmt.Errorf("partition %d: %w (was the topic deleted?)", fe.Partition, fe.Err))
				break loop
			default:
				var lost *kgo.ErrDataLoss
				if errors.As(fe.Err, &lost) {
					fmt.Fprintf(status, "consume: %v\n", fe.Err)
					continue
				}
				loopErr = fmt.Errorf("consume %s partition %d: %w", fe.Topic, fe.Partition, fe.Err)
				break loop
			}
		}
		got := false
		fetches.EachRecord(func(r *kgo.Record) {
			got = true
			buf = f.Append(buf[:0], r)
			w.Write(buf)
			res.Consumed++
			if o.Group != "" {
				c.Client.MarkCommitRecords(r)
			}
		})
		if err := w.Flush(); err != nil {
			loopErr = fmt.Errorf("write output: %w", err)
			break
		}
		if got {
			last = time.Now()
		}
	}
	if err := w.Flush(); err != nil && loopErr == nil {
		loopErr = fmt.Errorf("write output: %w", err)
	}
	if o.Group != "" {
		// Commit under a fresh context: an interrupt is exactly when
		// the printed position must be saved.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), co.timeout())
		err := c.Client.CommitMarkedOffsets(cctx)
		if err == nil {
			err = pos.commitUnconsumed(cctx, c.Client, nil)
		}
		cancel()
		if err != nil && loopErr == nil {
			loopErr = groupErr(o.Group, fmt.Errorf("commit offsets of printed records: %w", err))
		}
	}
	fmt.Fprintf(status, "Processed a total of %d messages\n", res.Consumed)
	return res, loopErr
}

// startPositions makes a group consumer that printed nothing from a
// partition still leave a committed position there, as Kafka's console
// consumer does by committing its position on close. Without it, a group
// starting at "latest" would start at the then-latest offset again next
// time and silently skip what was produced in between, and describe would
// show no lag for partitions never printed from.
//
// kgo exposes no fetch positions, so the position of a partition that had
// no commit is the start or end offset (per the reset policy) listed when
// it was assigned: the same target kgo resolves at that moment.
type startPositions struct {
	latest   bool
	mu       sync.Mutex
	pos      map[string]map[int32]int64
	assignAt time.Time
}

// lastAssigned is when partitions were last assigned (zero if never).
func (s *startPositions) lastAssigned() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.assignAt
}

func (s *startPositions) assigned(ctx context.Context, cl *kgo.Client, assigned map[string][]int32) {
	s.mu.Lock()
	s.assignAt = time.Now()
	s.mu.Unlock()
	if len(assigned) == 0 {
		return
	}
	topics := make([]string, 0, len(assigned))
	for t := range assigned {
		topics = append(topics, t)
	}
	list := kadm.NewClient(cl).ListStartOffsets
	if s.latest {
		list = kadm.NewClient(cl).ListEndOffsets
	}
	listed, err := list(ctx, topics...)
	if err != nil {
		slog.Debug("consume: list offsets of assigned partitions", "err", err)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pos == nil {
		s.pos = map[string]map[int32]int64{}
	}
	for t, ps := range assigned {
		for _, p := range ps {
			if lo, ok := listed.Lookup(t, p); ok && lo.Err == nil {
				if s.pos[t] == nil {
					s.pos[t] = map[int32]int64{}
				}
				s.pos[t][p] = lo.Offset
			}
		}
	}
}

// revoked replaces kgo's default revoke (which commits marks): it also
// commits the start positions of revoked partitions nothing was printed from.
func (s *startPositions) revoked(ctx context.Context, cl *kgo.Client, revoked map[string][]int32) {
	err := cl.CommitMarkedOffsets(ctx)
	if err == nil {
		err = s.commitUnconsumed(ctx, cl, revoked)
	}
	if err != nil {
		slog.Debug("consume: commit on revoke", "err", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for t, ps := range revoked {
		for _, p := range ps {
			delete(s.pos[t], p)
		}
	}
}

// commitUnconsumed commits the start position of every tracked partition
// (or only those in only, when non-nil) that has neither a mark nor a
// commit. kgo's marks cannot do this: it only tracks partitions it fetched
// records from.
func (s *startPositions) commitUnconsumed(ctx context.Context, cl *kgo.Client, only map[string][]int32) error {
	s.mu.Lock()
	if len(s.pos) == 0 {
		s.mu.Unlock()
		return nil
	}
	marked, committed := cl.MarkedOffsets(), cl.CommittedOffsets()
	add := map[string]map[int32]kgo.EpochOffset{}
	for t, ps := range s.pos {
		for p, start := range ps {
			if only != nil && !slices.Contains(only[t], p) {
				continue
			}
			if _, ok := marked[t][p]; ok {
				continue
			}
			if c, ok := committed[t][p]; ok && c.Offset >= 0 {
				continue
			}
			if add[t] == nil {
				add[t] = map[int32]kgo.EpochOffset{}
			}
			add[t][p] = kgo.EpochOffset{Epoch: -1, Offset: start}
		}
	}
	s.mu.Unlock()
	if len(add) == 0 {
		return nil
	}
	var commitErr error
	cl.CommitOffsetsSync(ctx, add, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			commitErr = err
			return
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil && commitErr == nil {
					commitErr = fmt.Errorf("%s-%d: %w", t.Topic, p.Partition, err)
				}
			}
		}
	})
	return commitErr
}
