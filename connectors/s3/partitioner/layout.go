package partitioner

import (
	"strconv"
	"strings"

	"github.com/fjordhq/fjord/connect"
)

// Layout names objects as Confluent's S3 sink (TopicPartitionWriter's
// fileKeyToCommit) does:
//
//	[topics.dir + D] + topic + D + encodedPartition + D + topic + F + partition + F + offset + ext
//
// where D is directory.delim, F is file.delim and the start offset is
// zero-padded to filename.offset.zero.pad.width digits, e.g.
// topics/orders/partition=3/orders+3+0000001200.json. A blank topics.dir
// leaves the first part out.
type Layout struct {
	TopicsDir string
	DirDelim  string
	FileDelim string
	PadWidth  int
}

// LayoutFrom reads topics.dir, directory.delim, file.delim and
// filename.offset.zero.pad.width, with Confluent's defaults for keys
// unset or not parsing (Validate reports those).
func LayoutFrom(props map[string]string) Layout {
	l := Layout{TopicsDir: DefaultTopicsDir, DirDelim: DefaultDirDelim, FileDelim: DefaultFileDelim, PadWidth: DefaultPadWidth}
	str := func(key string, dst *string) {
		if raw, ok := props[key]; ok {
			v, _ := connect.ParseValue(connect.TypeString, key, raw)
			*dst = v.(string)
		}
	}
	str(TopicsDirConfig, &l.TopicsDir)
	str(DirDelimConfig, &l.DirDelim)
	str(FileDelimConfig, &l.FileDelim)
	if raw, ok := props[PadWidthConfig]; ok {
		if v, err := connect.ParseValue(connect.TypeInt, PadWidthConfig, raw); err == nil && v.(int32) >= 0 {
			l.PadWidth = int(v.(int32))
		}
	}
	return l
}

// hasTopicsDir is Confluent's StringUtils.isNotBlank(topicsDir).
func (l Layout) hasTopicsDir() bool { return !javaBlank(l.TopicsDir) }

// Key is the object name of the file of topic's partition starting at
// startOffset in encodedPartition, ext included (".json", ".avro",
// ".snappy.parquet"). A pad width of 0 pads nothing (Confluent's
// format string "%00d" fails there).
func (l Layout) Key(topic, encodedPartition string, partition int32, startOffset int64, ext string) string {
	var num [20]byte
	part := strconv.AppendInt(num[:0], int64(partition), 10)
	var offBuf [20]byte
	neg := startOffset < 0
	off := strconv.AppendUint(offBuf[:0], absUint(startOffset), 10)
	pad := l.PadWidth - len(off)
	if neg {
		pad-- // Java's %0Nd counts the sign in the width
	}
	pad = max(pad, 0)

	n := 2*len(topic) + len(encodedPartition) + 2*len(l.DirDelim) + 2*len(l.FileDelim) + len(part) + pad + len(off) + len(ext) + 1
	dir := l.hasTopicsDir()
	if dir {
		n += len(l.TopicsDir) + len(l.DirDelim)
	}
	var b strings.Builder
	b.Grow(n)
	if dir {
		b.WriteString(l.TopicsDir)
		b.WriteString(l.DirDelim)
	}
	b.WriteString(topic)
	b.WriteString(l.DirDelim)
	b.WriteString(encodedPartition)
	b.WriteString(l.DirDelim)
	b.WriteString(topic)
	b.WriteString(l.FileDelim)
	b.Write(part)
	b.WriteString(l.FileDelim)
	if neg {
		b.WriteByte('-')
	}
	for range pad {
		b.WriteByte('0')
	}
	b.Write(off)
	b.WriteString(ext)
	return b.String()
}

func absUint(n int64) uint64 {
	if n < 0 {
		return uint64(-(n + 1)) + 1
	}
	return uint64(n)
}

// TopicPrefix is the prefix every object of topic starts with
// ("topics/orders/"), for listing them: the partitioners put the topic
// first (Confluent's generatePartitionedPath).
func (l Layout) TopicPrefix(topic string) string {
	if l.hasTopicsDir() {
		return l.TopicsDir + l.DirDelim + topic + l.DirDelim
	}
	return topic + l.DirDelim
}

// ParseKey recognizes an object Key names, whatever the partitioner and
// the pad width it was written with: it returns the topic, partition
// and start offset the file name carries, and ok only when the key also
// starts with that topic's prefix. It reads the file name from the
// right, so topics holding the delimiters ("a+b", "a.b") parse; the
// partition must be written without leading zeros, as Confluent writes
// it.
func (l Layout) ParseKey(key, ext string) (topic string, partition int32, startOffset int64, ok bool) {
	if l.DirDelim == "" || l.FileDelim == "" || !strings.HasSuffix(key, ext) {
		return "", 0, 0, false
	}
	rest := key[:len(key)-len(ext)]
	i := strings.LastIndex(rest, l.FileDelim)
	if i < 0 {
		return "", 0, 0, false
	}
	offStr := rest[i+len(l.FileDelim):]
	rest = rest[:i]
	if i = strings.LastIndex(rest, l.FileDelim); i < 0 {
		return "", 0, 0, false
	}
	partStr := rest[i+len(l.FileDelim):]
	rest = rest[:i] // ends with D + topic
	if !allDigits(offStr) || !allDigits(partStr) || (len(partStr) > 1 && partStr[0] == '0') {
		return "", 0, 0, false
	}
	off, err := strconv.ParseInt(offStr, 10, 64)
	if err != nil {
		return "", 0, 0, false
	}
	p, err := strconv.ParseInt(partStr, 10, 32)
	if err != nil {
		return "", 0, 0, false
	}
	// The topic is what follows one of the directory delimiters; try the
	// last first, then earlier ones in case the topic holds D itself.
	for end := len(rest); ; {
		d := strings.LastIndex(rest[:end], l.DirDelim)
		if d < 0 {
			return "", 0, 0, false
		}
		topic = rest[d+len(l.DirDelim):]
		prefix := l.TopicPrefix(topic)
		// The prefix ends before the delimiter that ends the encoded
		// partition (which may be empty: "topics/t//t+0+...").
		if topic != "" && len(prefix) <= d && strings.HasPrefix(rest, prefix) {
			return topic, int32(p), off, true
		}
		if d == 0 {
			return "", 0, 0, false
		}
		end = d
	}
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
