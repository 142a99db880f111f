package heartbeat

import (
	"context"
	"sync"
	"time"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/mirror/records"
)

// Source partition and offset keys of heartbeat records (MM2's Heartbeat
// and MirrorUtils): the partition names the pair, the offset is always 0.
const (
	SourceClusterAliasKey = "sourceClusterAlias"
	TargetClusterAliasKey = "targetClusterAlias"
	OffsetKey             = "offset"
)

// Task is MirrorHeartbeatTask: every interval it emits one heartbeat
// to partition 0 of the heartbeats topic, timestamped with the time it
// was made.
type Task struct {
	hb       records.Heartbeat
	topic    string
	interval time.Duration

	stop     chan struct{}
	stopOnce sync.Once

	now func() time.Time // tests
}

func (t *Task) Start(ctx context.Context, props map[string]string) error {
	s, err := parse(props)
	if err != nil {
		return err
	}
	t.hb = records.Heartbeat{SourceClusterAlias: s.SourceClusterAlias(), TargetClusterAlias: s.TargetClusterAlias()}
	if err := t.hb.Validate(); err != nil {
		return err
	}
	t.topic, t.interval = s.heartbeatsTopic(), s.interval()
	t.stop = make(chan struct{})
	if t.now == nil {
		t.now = time.Now
	}
	return nil
}

// Poll waits out the interval, then returns one heartbeat; nil when the
// task is stopping.
func (t *Task) Poll(ctx context.Context) ([]*connect.SourceRecord, error) {
	timer := time.NewTimer(max(t.interval, 0))
	defer timer.Stop()
	select {
	case <-t.stop:
		return nil, nil
	case <-ctx.Done():
		return nil, nil
	case <-timer.C:
	}
	now := t.now()
	hb := t.hb
	hb.Timestamp = now.UnixMilli()
	r := connect.NewSourceRecord(
		map[string]any{SourceClusterAliasKey: hb.SourceClusterAlias, TargetClusterAliasKey: hb.TargetClusterAlias},
		map[string]any{OffsetKey: int64(0)},
		t.topic, connect.BytesSchema, hb.Key(), connect.BytesSchema, hb.Value())
	r.Partition = 0
	r.Timestamp = hb.Timestamp
	return []*connect.SourceRecord{r}, nil
}

func (t *Task) Commit(ctx context.Context) error { return nil }

func (t *Task) Stop() error {
	if t.stop != nil {
		t.stopOnce.Do(func() { close(t.stop) })
	}
	return nil
}
