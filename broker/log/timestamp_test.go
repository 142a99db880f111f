package log

import (
	"path/filepath"
	"testing"

	"github.com/fjordhq/fjord/broker/batch"
)

func buildBatch(t testing.TB, codec batch.Codec, h batch.BuildHeader, base int64, ts ...int64) []byte {
	t.Helper()
	recs := make([]batch.Record, len(ts))
	for i, x := range ts {
		recs[i] = batch.Record{Offset: base + int64(i), Timestamp: x, Key: []byte{byte('a' + i)}, Value: []byte("v")}
	}
	h.BaseOffset = base
	b, err := batch.Build(nil, h, recs, codec)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ListOffsets by timestamp and MAX_TIMESTAMP look inside batches, also
// compressed ones, as Kafka does.
func TestTimestampLookups(t *testing.T) {
	for _, oneSegment := range []bool{true, false} {
		cfg := testConfig()
		if !oneSegment {
			cfg.SegmentBytes = 150 // one batch per segment
		}
		l := mustOpen(t, filepath.Join(t.TempDir(), "ts-0"), cfg, testOpts(nil), false)
		mustAppend(t, l, buildBatch(t, batch.CodecNone, batch.BuildHeader{}, 0, 100, 300, 200, 150))
		mustAppend(t, l, buildBatch(t, batch.CodecZstd, batch.BuildHeader{}, 0, 250, 600, 350))
		mustAppend(t, l, buildBatch(t, batch.CodecLZ4, batch.BuildHeader{LogAppendTime: true, MaxTimestamp: 500}, 0, 1, 2))
		cases := []struct {
			ts, off, got int64
			ok           bool
		}{
			{0, 0, 100, true}, {100, 0, 100, true}, {150, 1, 300, true}, {260, 1, 300, true},
			{301, 5, 600, true}, {450, 5, 600, true}, {601, -1, -1, false},
		}
		for _, tc := range cases {
			off, ts, ok, err := l.OffsetForTimestamp(tc.ts)
			if err != nil || ok != tc.ok || off != tc.off || ts != tc.got {
				t.Errorf("one segment %v: OffsetForTimestamp(%d) = %d, %d, %v, %v; want %d, %d, %v", oneSegment, tc.ts, off, ts, ok, err, tc.off, tc.got, tc.ok)
			}
		}
		if ts, off := l.MaxTimestamp(); ts != 600 || off != 5 {
			t.Errorf("one segment %v: MaxTimestamp = %d at %d, want 600 at 5", oneSegment, ts, off)
		}
		// LogAppendTime: every record has the batch's time.
		mustAppend(t, l, buildBatch(t, batch.CodecGzip, batch.BuildHeader{LogAppendTime: true, MaxTimestamp: 700}, 0, 1, 2, 3))
		if off, ts, ok, _ := l.OffsetForTimestamp(650); !ok || off != 9 || ts != 700 {
			t.Errorf("LogAppendTime lookup = %d, %d, %v", off, ts, ok)
		}
		if ts, off := l.MaxTimestamp(); ts != 700 || off != 9 {
			t.Errorf("MaxTimestamp = %d at %d, want 700 at 9", ts, off)
		}
		// Records below the log start offset are not answers.
		if err := l.DeleteRecordsBefore(2); err != nil {
			t.Fatal(err)
		}
		if off, ts, ok, _ := l.OffsetForTimestamp(100); !ok || off != 2 || ts != 200 {
			t.Errorf("lookup below log start = %d, %d, %v; want 2, 200", off, ts, ok)
		}
		l.Close()
	}
	l := mustOpen(t, filepath.Join(t.TempDir(), "empty-0"), testConfig(), testOpts(nil), false)
	defer l.Close()
	if ts, off := l.MaxTimestamp(); ts != -1 || off != -1 {
		t.Errorf("empty log MaxTimestamp = %d, %d", ts, off)
	}
	if _, _, ok, _ := l.OffsetForTimestamp(0); ok {
		t.Errorf("empty log found a timestamp")
	}
}
