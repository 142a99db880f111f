package source

import (
	"context"
	"log/slog"
	"strings"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connectors/s3/format"
	"github.com/fjordhq/fjord/connectors/s3/partitioner"
	"github.com/fjordhq/fjord/connectors/s3/storage"
)

// naming is how the sink named a connector's objects: the layout and the
// extensions of value objects and of their side files.
type naming struct {
	layout     partitioner.Layout
	valueExt   string
	keysExt    string
	headersExt string
}

func namingOf(s *settings) naming {
	return naming{
		layout:     s.layout,
		valueExt:   s.value.Extension(),
		keysExt:    format.KeysExtension(s.keys),
		headersExt: format.HeadersExtension(s.headers),
	}
}

// isSide reports whether key is a .keys or .headers side file.
func (n naming) isSide(key string) bool {
	return strings.HasSuffix(key, n.keysExt) || strings.HasSuffix(key, n.headersExt)
}

// sideKeys returns the names the side files of value object key have.
func (n naming) sideKeys(key string) (keys, headers string) {
	base := strings.TrimSuffix(key, n.valueExt)
	return base + n.keysExt, base + n.headersExt
}

// parse returns the Kafka partition and start offset a value object's key
// carries; ok is false for side files and keys that are not the sink's.
func (n naming) parse(key string) (tp connect.TopicPartition, start int64, ok bool) {
	if n.isSide(key) || !strings.HasSuffix(key, n.valueExt) {
		return tp, 0, false
	}
	topic, partition, start, ok := n.layout.ParseKey(key, n.valueExt)
	if !ok || topic == "" || partition < 0 || start < 0 {
		return tp, 0, false
	}
	return connect.TopicPartition{Topic: topic, Partition: partition}, start, true
}

// root is the prefix every topic's objects share (topics.dir and the
// delimiter): the part of a topic prefix before the topic.
func (n naming) root() string {
	const probe = "\x00topic\x00"
	p := n.layout.TopicPrefix(probe)
	if i := strings.Index(p, probe); i >= 0 {
		return p[:i]
	}
	return ""
}

// scanStats counts what a listing skipped, for the log.
type scanStats struct {
	objects, side, foreign int
}

// partitionsIn lists the bucket under the topics' root and returns every
// Kafka partition that has at least one value object, among the topics
// want accepts.
func partitionsIn(ctx context.Context, b bucket, n naming, want func(string) bool) (map[connect.TopicPartition]bool, error) {
	found := map[connect.TopicPartition]bool{}
	var st scanStats
	err := b.List(ctx, n.root(), func(o storage.Object) error {
		key := o.Key
		st.objects++
		tp, _, ok := n.parse(key)
		switch {
		case ok:
			if want(tp.Topic) {
				found[tp] = true
			}
		case n.isSide(key):
			st.side++
		default:
			st.foreign++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if st.foreign > 0 {
		slog.Debug("s3 source: ignored objects that are not the sink's (other extension or name)", "prefix", n.root(), "ignored", st.foreign)
	}
	return found, nil
}

// objectsOf lists one topic's prefix and returns the value objects of
// the partitions in parts, side files attached, unordered.
func objectsOf(ctx context.Context, b bucket, n naming, topic string, parts map[int32]bool) (map[int32][]objectRef, error) {
	out := map[int32][]objectRef{}
	side := map[string]int64{}
	err := b.List(ctx, n.layout.TopicPrefix(topic), func(o storage.Object) error {
		if n.isSide(o.Key) {
			side[o.Key] = o.Size
			return nil
		}
		tp, start, ok := n.parse(o.Key)
		if !ok || tp.Topic != topic || !parts[tp.Partition] {
			return nil
		}
		out[tp.Partition] = append(out[tp.Partition], objectRef{Key: o.Key, Size: o.Size, Start: start, Modified: o.LastModified})
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, objs := range out {
		for i := range objs {
			k, h := n.sideKeys(objs[i].Key)
			if size, ok := side[k]; ok {
				objs[i].KeysKey, objs[i].KeysSize = k, size
			}
			if size, ok := side[h]; ok {
				objs[i].HeadersKey, objs[i].HeadersSize = h, size
			}
		}
	}
	return out, nil
}
