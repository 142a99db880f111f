package file

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// Keys and defaults of FileStreamSourceConnector.
const (
	FileConfig            = "file"
	TopicConfig           = "topic"
	BatchSizeConfig       = "batch.size"
	DefaultBatchSize      = 2000
	FilenameField         = "filename"
	PositionField         = "position"
	SourceConnectorClass  = "org.apache.kafka.connect.file.FileStreamSourceConnector"
	SinkConnectorClass    = "org.apache.kafka.connect.file.FileStreamSinkConnector"
	singleTopicMessage    = "'topic' in FileStreamSourceConnector configuration requires definition of a single topic"
	initialBufferSize     = 64 << 10
	maxIdleWait           = time.Second // Kafka's wait when there is nothing to read
	minIdleWait           = 10 * time.Millisecond
	missingFileRetryDelay = time.Second
)

// SourceConfigDef is FileStreamSourceConnector's ConfigDef.
func SourceConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: FileConfig, Type: connect.TypeString, Default: nil, Importance: connect.High,
			Doc: "Source filename. If not specified, the standard input will be used"}).
		Define(connect.ConfigKey{Name: TopicConfig, Type: connect.TypeString, Default: connect.NoDefault,
			Validator: connect.NonEmptyString, Importance: connect.High, Doc: "The topic to publish data to"}).
		Define(connect.ConfigKey{Name: BatchSizeConfig, Type: connect.TypeInt, Default: int32(DefaultBatchSize), Importance: connect.Low,
			Doc: "The maximum number of records the source task can read from the file each time it is polled"})
}

// SourceConnector is FileStreamSourceConnector.
type SourceConnector struct {
	props map[string]string
}

var (
	_ connect.SourceConnector            = (*SourceConnector)(nil)
	_ connect.ConfigValidator            = (*SourceConnector)(nil)
	_ connect.ExactlyOnceSourceConnector = (*SourceConnector)(nil)
	_ connect.SourceOffsetsAlterer       = (*SourceConnector)(nil)
)

func (c *SourceConnector) Config() *connect.ConfigDef { return SourceConfigDef() }

func (c *SourceConnector) Start(ctx context.Context, props map[string]string) error {
	cfg, err := SourceConfigDef().Parse(props)
	if err != nil {
		return fmt.Errorf("file source connector config: %w", err)
	}
	c.props = maps.Clone(props)
	name := cfg.String(FileConfig)
	if name == "" {
		name = "standard input"
	}
	slog.Info("starting file source connector", "file", name, "topic", cfg.String(TopicConfig))
	return nil
}

// TaskConfigs returns one task config: one input stream cannot be split.
// The whole connector config is passed on so that changes to converters
// or transforms reach the task (KAFKA-13809).
func (c *SourceConnector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	return []map[string]string{maps.Clone(c.props)}, nil
}

func (c *SourceConnector) Stop() error { return nil }

func (c *SourceConnector) NewTask() connect.SourceTask { return &SourceTask{} }

// Validate is the ConfigDef's validation plus one check: a
// comma-separated topic is refused. Kafka 4.4 accepts it and its task then
// fails on every send (a topic name cannot hold a comma); the message is
// the one older Kafka versions gave.
func (c *SourceConnector) Validate(props map[string]string) []connect.ConfigValue {
	out := SourceConfigDef().Validate(props)
	if strings.Contains(strings.TrimSpace(props[TopicConfig]), ",") {
		for i := range out {
			if out[i].Name == TopicConfig {
				out[i].Errors = append(out[i].Errors, singleTopicMessage)
			}
		}
	}
	return out
}

// ExactlyOnceSupport is SUPPORTED for a file (as long as it is only
// appended to) and UNSUPPORTED for standard input, whose offsets are not
// tracked.
func (c *SourceConnector) ExactlyOnceSupport(props map[string]string) connect.ExactlyOnceSupport {
	if strings.TrimSpace(props[FileConfig]) != "" {
		return connect.ExactlyOnceSupported
	}
	return connect.ExactlyOnceUnsupported
}

// AlterOffsets checks offsets altered over REST with Kafka's rules and
// messages; the task checks the position against the file when it starts.
func (c *SourceConnector) AlterOffsets(config map[string]string, offsets []connect.SourcePartitionOffset) (bool, error) {
	if strings.TrimSpace(config[FileConfig]) == "" {
		return false, fmt.Errorf("Offsets cannot be modified if the '%s' configuration is unspecified. "+
			"This is because stdin is used for input and offsets are not tracked.", FileConfig)
	}
	for _, po := range offsets {
		if po.Offset == nil {
			continue // tombstones are always allowed, so garbage can be cleaned up
		}
		raw, ok := po.Offset[PositionField]
		if !ok {
			return false, fmt.Errorf("Offset objects should either be null or contain the key '%s'", PositionField)
		}
		pos, ok := connect.OffsetLong(raw)
		if !ok {
			return false, fmt.Errorf("The value for the '%s' key in the offset is expected to be a Long value", PositionField)
		}
		if pos < 0 {
			return false, fmt.Errorf("The value for the '%s' key in the offset should be a non-negative value", PositionField)
		}
		if po.Partition == nil {
			return false, errors.New("Partition objects cannot be null")
		}
		if _, ok := po.Partition[FilenameField]; !ok {
			return false, fmt.Errorf("Partition objects should contain the key '%s'", FilenameField)
		}
	}
	return true, nil
}

// SourceTask is FileStreamSourceTask.
type SourceTask struct {
	tctx      connect.SourceTaskContext
	filename  string
	topic     string
	batchSize int

	// Poll owns the reading state below; Stop only closes stop and the
	// open file (os.File tolerates a Close during Read).
	buf       []byte // unread bytes buf[start:end]
	start     int
	end       int
	position  int64          // byte position of buf[start] in the file
	partition map[string]any // shared by all records: the runtime caches its encoding by identity
	idle      time.Duration  // current back-off when there is nothing to read
	in        *os.File       // the file Poll reads (nil until opened, and for stdin)
	stdin     <-chan []byte  // chunks of standard input, when no file is set
	// warned and shrunkWarned: the missing-file and truncation warnings
	// were logged (once each).
	warned, shrunkWarned bool
	// stdinReader replaces os.Stdin in tests.
	stdinReader io.Reader

	mu       sync.Mutex // guards file and stopped
	file     *os.File   // the same file as in, for Stop to close
	stopped  bool
	stop     chan struct{}
	stopOnce sync.Once
}

var _ connect.ContextualSourceTask = (*SourceTask)(nil)

func (t *SourceTask) Initialize(ctx connect.SourceTaskContext) { t.tctx = ctx }

func (t *SourceTask) Start(ctx context.Context, props map[string]string) error {
	cfg, err := SourceConfigDef().Parse(props)
	if err != nil {
		return fmt.Errorf("file source task config: %w", err)
	}
	t.filename = cfg.String(FileConfig)
	t.topic = cfg.String(TopicConfig)
	t.batchSize = max(int(cfg.Int(BatchSizeConfig)), 1) // Kafka returns one record per poll for 0 or less
	t.buf = make([]byte, initialBufferSize)
	t.stop = make(chan struct{})
	t.partition = map[string]any{FilenameField: nil}
	if t.filename == "" {
		r := t.stdinReader
		if r == nil {
			r = os.Stdin
		}
		t.stdin = readStdin(r)
	} else {
		t.partition = map[string]any{FilenameField: t.filename}
	}
	return nil
}

// readStdin copies standard input into a channel: a read from stdin cannot
// be interrupted, so it runs on its own goroutine, as Kafka's.
func readStdin(r io.Reader) <-chan []byte {
	ch := make(chan []byte, 4)
	go func() {
		defer close(ch)
		for {
			b := make([]byte, 64<<10)
			n, err := r.Read(b)
			if n > 0 {
				ch <- b[:n]
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}

func (t *SourceTask) Poll(ctx context.Context) ([]*connect.SourceRecord, error) {
	if t.filename != "" && t.in == nil {
		if err := t.open(); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				if !t.warned {
					slog.Warn("file source: file not found, waiting for it to be created", "file", t.filename)
					t.warned = true
				}
				t.sleep(ctx, missingFileRetryDelay)
				return nil, nil
			}
			return nil, err
		}
	}
	var recs []*connect.SourceRecord
	for {
		recs = t.extract(recs)
		if len(recs) >= t.batchSize {
			return recs, nil
		}
		n, err := t.fill(ctx)
		if err != nil {
			if t.isStopped() {
				return recs, nil // the file was closed under us by Stop
			}
			return recs, fmt.Errorf("read %s: %w", t.logName(), err)
		}
		if n > 0 {
			t.idle = 0
			continue
		}
		if len(recs) > 0 {
			return recs, nil
		}
		t.checkShrunk()
		// Nothing new: back off up to Kafka's one second, so a file that
		// is being written shows up promptly and an idle one costs little.
		t.idle = min(max(t.idle*2, minIdleWait), maxIdleWait)
		t.sleep(ctx, t.idle)
		return nil, nil
	}
}

// open opens the file and seeks to the committed position.
func (t *SourceTask) open() error {
	f, err := os.Open(t.filename)
	if err != nil {
		return err
	}
	var pos int64
	if t.tctx != nil && t.tctx.Offsets() != nil {
		off, err := t.tctx.Offsets().Offset(t.partition)
		if err != nil {
			f.Close()
			return fmt.Errorf("read committed offset of %s: %w", t.filename, err)
		}
		if raw, ok := off[PositionField]; ok && raw != nil {
			p, ok := connect.OffsetLong(raw)
			if !ok || p < 0 {
				f.Close()
				return fmt.Errorf("Offset position is the incorrect type: %v (%T) for file %s", raw, raw, t.filename)
			}
			pos = p
		}
	}
	if pos > 0 {
		if _, err := f.Seek(pos, io.SeekStart); err != nil {
			f.Close()
			return fmt.Errorf("seek %s to committed position %d: %w", t.filename, pos, err)
		}
		slog.Debug("file source: resuming", "file", t.filename, "position", pos)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		f.Close()
		return errors.New("file source task stopped")
	}
	t.file, t.in, t.position = f, f, pos
	return nil
}

// fill reads more input into the buffer, growing it when a line does not
// fit. It returns 0 when nothing is available now.
func (t *SourceTask) fill(ctx context.Context) (int, error) {
	if t.start > 0 {
		t.end = copy(t.buf, t.buf[t.start:t.end])
		t.start = 0
	}
	if t.end == len(t.buf) {
		nb := make([]byte, 2*len(t.buf))
		copy(nb, t.buf[:t.end])
		slog.Info("file source: increased buffer", "file", t.logName(), "from", len(t.buf), "to", len(nb))
		t.buf = nb
	}
	if t.stdin != nil {
		select {
		case b, ok := <-t.stdin:
			if !ok {
				t.stdin = nil
				return 0, nil
			}
			for len(b) > len(t.buf)-t.end {
				nb := make([]byte, 2*len(t.buf))
				copy(nb, t.buf[:t.end])
				t.buf = nb
			}
			t.end += copy(t.buf[t.end:], b)
			return len(b), nil
		default:
			return 0, nil
		}
	}
	if t.in == nil {
		return 0, nil // stdin ended: nothing more will come
	}
	n, err := t.in.Read(t.buf[t.end:])
	t.end += n
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return n, err
}

// extract appends a record per complete line in the buffer, up to the
// batch size. Lines end at \n, \r\n or \r; a \r at the end of the data
// waits for the next byte to tell \r\n from \r.
func (t *SourceTask) extract(recs []*connect.SourceRecord) []*connect.SourceRecord {
	var slab []connect.Record
	now := int64(-1)
	for len(recs) < t.batchSize {
		data := t.buf[t.start:t.end]
		until, next := -1, -1
		for i, c := range data {
			if c == '\n' {
				until, next = i, i+1
				break
			}
			if c == '\r' {
				if i+1 >= len(data) {
					break
				}
				until, next = i, i+1
				if data[i+1] == '\n' {
					next = i + 2
				}
				break
			}
		}
		if until < 0 {
			return recs
		}
		line := decodeJavaUTF8(data[:until])
		t.start += next
		var offset map[string]any
		if t.filename != "" {
			t.position += int64(next)
			offset = map[string]any{PositionField: t.position}
		} else {
			offset = map[string]any{PositionField: nil} // stdin: offsets are not tracked
		}
		if now < 0 {
			now = time.Now().UnixMilli()
		}
		if len(slab) == 0 {
			slab = make([]connect.Record, min(t.batchSize-len(recs), 256))
		}
		r := &slab[0]
		slab = slab[1:]
		*r = connect.Record{
			Topic: t.topic, Partition: -1, Timestamp: now,
			ValueSchema: connect.StringSchema, Value: line,
			SourcePartition: t.partition, SourceOffset: offset,
			Offset: -1, TimestampType: connect.NoTimestampType,
		}
		recs = append(recs, r)
	}
	return recs
}

// checkShrunk warns once when the file became shorter than what was read:
// it was truncated or replaced, which the connector does not follow (as
// Kafka's): it keeps reading the open file from its position.
func (t *SourceTask) checkShrunk() {
	if t.in == nil || t.shrunkWarned {
		return
	}
	st, err := os.Stat(t.filename)
	read := t.position + int64(t.end-t.start)
	if err == nil && st.Size() < read {
		slog.Warn("file source: the file is shorter than what was read (truncated or replaced?); "+
			"the connector keeps reading the file it opened and does not start over",
			"file", t.filename, "size", st.Size(), "read", read)
		t.shrunkWarned = true
	}
}

func (t *SourceTask) sleep(ctx context.Context, d time.Duration) {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
	case <-ctx.Done():
	case <-t.stop:
	}
}

func (t *SourceTask) isStopped() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stopped
}

func (t *SourceTask) logName() string {
	if t.filename == "" {
		return "stdin"
	}
	return t.filename
}

func (t *SourceTask) Commit(ctx context.Context) error { return nil }

// Stop wakes a waiting Poll and closes the file; it may be called while
// Poll runs on another goroutine.
func (t *SourceTask) Stop() error {
	if t.stop == nil {
		return nil
	}
	t.stopOnce.Do(func() { close(t.stop) })
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	if t.file != nil {
		err := t.file.Close()
		t.file = nil
		if err != nil {
			return fmt.Errorf("close %s: %w", t.filename, err)
		}
	}
	return nil
}
