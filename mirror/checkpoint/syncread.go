package checkpoint

import (
	"context"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/mirror/records"
)

// Add adds a decoded offset sync.
func (s *OffsetSyncStore) Add(sync records.OffsetSync) {
	s.Sync(sync.Topic, sync.Partition, sync.UpstreamOffset, sync.DownstreamOffset)
}

// addRecord decodes an offset-syncs record into the store; a record that
// does not decode is logged and skipped.
func (s *OffsetSyncStore) addRecord(rec *kgo.Record, log *slog.Logger) {
	sync, err := records.DecodeOffsetSync(rec.Key, rec.Value)
	if err != nil {
		log.Warn("ignoring an offset sync that does not decode", "topic", rec.Topic, "offset", rec.Offset, "err", err)
		return
	}
	s.Add(sync)
}

// LoadOffsetSyncs reads an offset-syncs topic (such as
// mm2-offset-syncs.<target>.internal on the source cluster) from its
// start to its current end and returns a ready store for one-off
// translations, keeping history from the whole topic. cl must be a
// client that consumes nothing else; it is left consuming the topic.
func LoadOffsetSyncs(ctx context.Context, cl *kgo.Client, topic string) (*OffsetSyncStore, error) {
	log := slog.Default()
	s := NewOffsetSyncStore(false)
	r := newPartitionReader(cl, topic, log)
	if err := r.readToEnd(ctx, func(rec *kgo.Record) { s.addRecord(rec, log) }); err != nil {
		return nil, err
	}
	s.MarkReadToEnd()
	return s, nil
}

// TranslateOffset translates one committed upstream offset of
// topic/partition through store, as the checkpoint task does for its
// checkpoints: ok is false when no accurate translation exists (store
// not ready, no syncs for the partition, or the offset predates every
// sync kept), and downstream is then meaningless.
func TranslateOffset(store *OffsetSyncStore, topic string, partition int32, upstream int64) (downstream int64, ok bool) {
	d, ok := store.Translate(topic, partition, upstream)
	if !ok || d < 0 {
		return 0, false
	}
	return d, true
}

// followOffsetSyncs reads the offset-syncs topic into store: to the end
// (then marks the store ready), then every new sync until ctx is done.
// A failure to find the end is retried.
func followOffsetSyncs(ctx context.Context, cl *kgo.Client, topic string, store *OffsetSyncStore, log *slog.Logger) {
	r := newPartitionReader(cl, topic, log)
	add := func(rec *kgo.Record) { store.addRecord(rec, log) }
	for {
		err := r.readToEnd(ctx, add)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return
		}
		log.Warn("reading the offset syncs topic to its end; retrying", "topic", topic, "err", err)
		if !sleep(ctx, retryBackoff) {
			return
		}
	}
	store.MarkReadToEnd()
	log.Debug("offset syncs read to the end", "topic", topic)
	r.follow(ctx, add)
}
