package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// partDigest is what a partition holds, in order: its record count and a
// hash over every record's timestamp, key and value.
type partDigest struct {
	Count int64
	Hash  uint64
}

// verifyMirrored checks that every partition of the remote topic holds
// the source partition's records, in the same order, with the same
// timestamps, keys and values: the mirror copied the topic, not just as
// many records.
func verifyMirrored(ctx context.Context, srcAddr, dstAddr, srcTopic, remote string, partitions int, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	want, err := topicDigests(ctx, srcAddr, srcTopic)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", srcTopic, err)
	}
	got, err := topicDigests(ctx, dstAddr, remote)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", remote, err)
	}
	if err := compareDigests(want, got, partitions); err != nil {
		return "", fmt.Errorf("%s against %s: %w", remote, srcTopic, err)
	}
	var n int64
	for _, d := range want {
		n += d.Count
	}
	return fmt.Sprintf("the %d partitions of %s hold those of %s record for record (%s records; order, timestamps, keys and values)",
		partitions, remote, srcTopic, count(int(n))), nil
}

// compareDigests reports the first partition whose records differ.
func compareDigests(want, got map[int32]partDigest, partitions int) error {
	if len(want) != partitions || len(got) != partitions {
		return fmt.Errorf("%d and %d partitions, want %d", len(want), len(got), partitions)
	}
	for p := range int32(partitions) {
		w, ok1 := want[p]
		g, ok2 := got[p]
		switch {
		case !ok1 || !ok2:
			return fmt.Errorf("partition %d missing", p)
		case w.Count != g.Count:
			return fmt.Errorf("partition %d holds %d records, the source's %d", p, g.Count, w.Count)
		case w.Hash != g.Hash:
			return fmt.Errorf("partition %d: the %d records differ from the source's (order, timestamp, key or value)", p, w.Count)
		}
	}
	return nil
}

// topicDigests reads every partition of topic from its start offset to
// the end offset listed first.
func topicDigests(ctx context.Context, addr, topic string) (map[int32]partDigest, error) {
	admCl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return nil, err
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("start offsets: %w", err)
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("end offsets: %w", err)
	}
	out := map[int32]partDigest{}
	hashes := map[int32]hash.Hash64{}
	endOf := map[int32]int64{} // where to stop
	offsets := map[int32]kgo.Offset{}
	ends.Each(func(o kadm.ListedOffset) {
		s, _ := starts.Lookup(topic, o.Partition)
		out[o.Partition] = partDigest{Hash: fnv.New64a().Sum64()}
		if o.Offset > s.Offset {
			hashes[o.Partition], endOf[o.Partition] = fnv.New64a(), o.Offset
			offsets[o.Partition] = kgo.NewOffset().At(s.Offset)
		}
	})
	if len(offsets) == 0 {
		return out, nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var buf [8]byte
	for len(endOf) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("%d partitions not read to their end: %w", len(endOf), err)
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) { ferr = errors.Join(ferr, fmt.Errorf("%s[%d]: %w", t, p, err)) })
		if ferr != nil {
			return nil, ferr
		}
		fs.EachRecord(func(r *kgo.Record) {
			end, open := endOf[r.Partition]
			if !open || r.Offset >= end {
				return
			}
			h := hashes[r.Partition]
			binary.BigEndian.PutUint64(buf[:], uint64(r.Timestamp.UnixMilli()))
			h.Write(buf[:])
			writeLenBytes(h, r.Key, r.Key == nil)
			writeLenBytes(h, r.Value, r.Value == nil)
			d := out[r.Partition]
			d.Count++
			out[r.Partition] = d
			if r.Offset+1 >= end {
				delete(endOf, r.Partition)
			}
		})
	}
	for p, h := range hashes {
		d := out[p]
		d.Hash = h.Sum64()
		out[p] = d
	}
	return out, nil
}

// writeLenBytes hashes b with its length first, so that two fields cannot
// run into each other; null and empty differ.
func writeLenBytes(h hash.Hash64, b []byte, null bool) {
	var n [8]byte
	l := int64(len(b))
	if null {
		l = -1
	}
	binary.BigEndian.PutUint64(n[:], uint64(l))
	h.Write(n[:])
	h.Write(b)
}
