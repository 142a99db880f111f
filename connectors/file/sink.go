package file

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"

	"github.com/fjordhq/fjord/connect"
)

// SinkConfigDef is FileStreamSinkConnector's ConfigDef.
func SinkConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: FileConfig, Type: connect.TypeString, Default: nil, Importance: connect.High,
			Doc: "Destination filename. If not specified, the standard output will be used"})
}

// SinkConnector is FileStreamSinkConnector.
type SinkConnector struct {
	props map[string]string
}

var (
	_ connect.SinkConnector      = (*SinkConnector)(nil)
	_ connect.SinkOffsetsAlterer = (*SinkConnector)(nil)
)

func (c *SinkConnector) Config() *connect.ConfigDef { return SinkConfigDef() }

func (c *SinkConnector) Start(ctx context.Context, props map[string]string) error {
	cfg, err := SinkConfigDef().Parse(props)
	if err != nil {
		return fmt.Errorf("file sink connector config: %w", err)
	}
	c.props = maps.Clone(props)
	name := cfg.String(FileConfig)
	if name == "" {
		name = "standard output"
	}
	slog.Info("starting file sink connector", "file", name)
	return nil
}

// TaskConfigs returns maxTasks copies of the connector config, as Kafka's:
// every task appends to the same file.
func (c *SinkConnector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	out := make([]map[string]string, maxTasks)
	for i := range out {
		out[i] = maps.Clone(c.props)
	}
	return out, nil
}

func (c *SinkConnector) Stop() error { return nil }

func (c *SinkConnector) NewTask() connect.SinkTask { return &SinkTask{} }

// AlterOffsets accepts anything: the sink keeps no offsets of its own.
func (c *SinkConnector) AlterOffsets(config map[string]string, offsets map[connect.TopicPartition]*int64) (bool, error) {
	return true, nil
}

// flushSize is how much output a sink task buffers before writing.
const flushSize = 64 << 10

// SinkTask is FileStreamSinkTask. Records are rendered into a buffer and
// written in whole lines; PreCommit writes the rest and fsyncs.
type SinkTask struct {
	filename string
	out      *os.File
	isStdout bool
	buf      []byte
}

func (t *SinkTask) Start(ctx context.Context, props map[string]string) error {
	cfg, err := SinkConfigDef().Parse(props)
	if err != nil {
		return fmt.Errorf("file sink task config: %w", err)
	}
	t.filename = cfg.String(FileConfig)
	t.buf = make([]byte, 0, flushSize+4096)
	if t.filename == "" {
		t.out, t.isStdout = os.Stdout, true
		return nil
	}
	f, err := os.OpenFile(t.filename, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o666)
	if err != nil {
		return fmt.Errorf("Couldn't find or create file '%s' for FileStreamSinkTask: %w", t.filename, err)
	}
	t.out = f
	return nil
}

func (t *SinkTask) Open(partitions []connect.TopicPartition) error { return nil }

func (t *SinkTask) Put(ctx context.Context, records []*connect.SinkRecord) error {
	for _, r := range records {
		t.buf = AppendJavaString(t.buf, r.Value)
		t.buf = append(t.buf, '\n')
		if len(t.buf) >= flushSize {
			if err := t.write(); err != nil {
				return err
			}
		}
	}
	return nil
}

// write hands the buffered lines to the file in one write, so lines of
// tasks appending to the same file do not interleave.
func (t *SinkTask) write() error {
	if len(t.buf) == 0 || t.out == nil {
		return nil
	}
	_, err := t.out.Write(t.buf)
	t.buf = t.buf[:0]
	if err != nil {
		return fmt.Errorf("write to %s: %w", t.logName(), err)
	}
	return nil
}

// PreCommit makes every line put so far durable, so all offsets may be
// committed.
func (t *SinkTask) PreCommit(ctx context.Context, offsets map[connect.TopicPartition]int64) (map[connect.TopicPartition]int64, error) {
	if err := t.flush(); err != nil {
		return nil, err
	}
	return offsets, nil
}

func (t *SinkTask) flush() error {
	if err := t.write(); err != nil {
		return err
	}
	if t.isStdout || t.out == nil {
		return nil
	}
	if err := t.out.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", t.filename, err)
	}
	return nil
}

// Close writes what is buffered: the lines of revoked partitions belong
// in the file before another task takes them over.
func (t *SinkTask) Close(partitions []connect.TopicPartition) error { return t.write() }

func (t *SinkTask) Stop() error {
	err := t.write()
	if t.out != nil && !t.isStdout {
		if cerr := t.out.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close %s: %w", t.filename, cerr)
		}
	}
	t.out = nil
	return err
}

func (t *SinkTask) logName() string {
	if t.isStdout {
		return "stdout"
	}
	return t.filename
}
