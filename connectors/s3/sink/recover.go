package sink

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connectors/s3/storage"
)

// recover runs when a task takes a partition (its first record, at the
// committed offset first): it finds this connector's objects for the
// partition that start at or after first — written after the last offset
// commit, by this task before a crash or by the task that had the
// partition before.
//
// Commits found whole (every object of the commit present) that continue
// from first are kept, and the task resumes after them: nothing is
// written twice even when the partitioner or rotation is not
// deterministic (wall clock). Objects of commits found partial are
// deleted: their records are all at or after the resume offset and are
// written again, so the bucket ends with every record exactly once, under
// the keys a run without the crash writes (for deterministic
// partitioners and rotation). Objects without Fjord's commit metadata
// (written by another tool) are left alone.
func (t *Task) recover(ctx context.Context, tp connect.TopicPartition, first int64) (int64, error) {
	exts := t.extensions()
	type found struct {
		key   string
		start int64
		tag   string
	}
	var objs []found
	prefix := t.s.layout.TopicPrefix(tp.Topic)
	err := t.store.List(ctx, prefix, "", func(o storage.Object) error {
		for _, ext := range exts {
			topic, part, start, ok := t.s.layout.ParseKey(o.Key, ext)
			if ok && topic == tp.Topic && part == tp.Partition && start >= first {
				objs = append(objs, found{key: o.Key, start: start})
				return nil
			}
		}
		return nil
	})
	if err != nil {
		return 0, &connect.RetriableError{Err: fmt.Errorf("S3 sink: listing %s to recover %s-%d: %w", prefix, tp.Topic, tp.Partition, err)}
	}
	if err := t.abortUploads(ctx, tp, prefix, exts); err != nil {
		return 0, &connect.RetriableError{Err: fmt.Errorf("S3 sink: aborting unfinished uploads of %s-%d: %w", tp.Topic, tp.Partition, err)}
	}
	if len(objs) == 0 {
		return first, nil
	}
	type commit struct {
		start, end int64
		want       int
		keys       []string
	}
	commits := map[string]*commit{}
	for i := range objs {
		meta, _, err := t.store.Head(ctx, objs[i].key)
		if err != nil {
			return 0, &connect.RetriableError{Err: fmt.Errorf("S3 sink: reading %s to recover %s-%d: %w", objs[i].key, tp.Topic, tp.Partition, err)}
		}
		tag := metaValue(meta, metaCommit)
		start, end, n, ok := parseCommitTag(tag)
		if !ok {
			continue // not written by Fjord's sink
		}
		c := commits[tag]
		if c == nil {
			c = &commit{start: start, end: end, want: n}
			commits[tag] = c
		}
		c.keys = append(c.keys, objs[i].key)
	}
	resume := first
	kept := map[string]bool{}
	for {
		var next *commit
		var nextTag string
		for tag, c := range commits {
			if !kept[tag] && len(c.keys) == c.want && c.start <= resume && resume < c.end {
				next, nextTag = c, tag
				break
			}
		}
		if next == nil {
			break
		}
		kept[nextTag] = true
		resume = next.end
	}
	var stale []string
	for tag, c := range commits {
		if !kept[tag] {
			stale = append(stale, c.keys...)
		}
	}
	if len(stale) > 0 {
		slog.Info("S3 sink: deleting the objects of a commit that did not complete; their records are written again",
			"connector", t.s.name, "topic", tp.Topic, "partition", tp.Partition, "objects", len(stale), "from_offset", resume)
		if err := t.store.Delete(ctx, stale...); err != nil {
			return 0, &connect.RetriableError{Err: fmt.Errorf("S3 sink: deleting partial commit objects of %s-%d: %w", tp.Topic, tp.Partition, err)}
		}
	}
	if resume > first {
		t.up.setDurable(tp, resume)
	}
	return resume, nil
}

// metaValue reads user metadata whatever case the server returned its
// names in.
func metaValue(meta map[string]string, name string) string {
	if v, ok := meta[name]; ok {
		return v
	}
	for k, v := range meta {
		if strings.EqualFold(k, name) || strings.EqualFold(strings.TrimPrefix(strings.ToLower(k), "x-amz-meta-"), name) {
			return v
		}
	}
	return ""
}

// abortUploads aborts the unfinished multipart uploads of this
// partition's objects: a task killed mid-upload leaves its parts stored
// (and billed) until someone aborts them. Only this partition's keys are
// touched; another task may be uploading the topic's other partitions.
// AWS lists uploads by prefix; MinIO only by exact key, so the uploader
// also aborts a key's leftovers before uploading that key again
// (abortUploadsOf).
func (t *Task) abortUploads(ctx context.Context, tp connect.TopicPartition, prefix string, exts []string) error {
	return t.abortMatching(ctx, prefix, func(key string) bool {
		for _, ext := range exts {
			topic, part, _, ok := t.s.layout.ParseKey(key, ext)
			if ok && topic == tp.Topic && part == tp.Partition {
				return true
			}
		}
		return false
	})
}

// abortUploadsOf aborts the unfinished multipart uploads of exactly key.
func (t *Task) abortUploadsOf(ctx context.Context, key string) error {
	return t.abortMatching(ctx, key, func(k string) bool { return k == key })
}

func (t *Task) abortMatching(ctx context.Context, prefix string, match func(string) bool) error {
	c := t.store.Client()
	bucket := t.store.Bucket()
	in := &s3.ListMultipartUploadsInput{Bucket: &bucket, Prefix: &prefix}
	for {
		out, err := c.ListMultipartUploads(ctx, in)
		if err != nil {
			return err
		}
		for _, u := range out.Uploads {
			if u.Key == nil || u.UploadId == nil || !match(*u.Key) {
				continue
			}
			if _, err := c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &bucket, Key: u.Key, UploadId: u.UploadId}); err != nil {
				return err
			}
			slog.Info("S3 sink: aborted an unfinished multipart upload", "connector", t.s.name, "key", *u.Key)
		}
		if out.IsTruncated == nil || !*out.IsTruncated {
			return nil
		}
		in.KeyMarker, in.UploadIdMarker = out.NextKeyMarker, out.NextUploadIdMarker
	}
}
