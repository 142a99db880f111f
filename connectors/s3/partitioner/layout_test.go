package partitioner

import (
	"strconv"
	"strings"
	"testing"
)

var defaultLayout = Layout{TopicsDir: "topics", DirDelim: "/", FileDelim: "+", PadWidth: 10}

func TestLayoutFrom(t *testing.T) {
	if got := LayoutFrom(map[string]string{}); got != defaultLayout {
		t.Errorf("defaults: %+v", got)
	}
	got := LayoutFrom(map[string]string{TopicsDirConfig: " backup ", DirDelimConfig: "_", FileDelimConfig: "-", PadWidthConfig: "3"})
	if want := (Layout{TopicsDir: "backup", DirDelim: "_", FileDelim: "-", PadWidth: 3}); got != want {
		t.Errorf("LayoutFrom = %+v, want %+v (Kafka trims STRING values)", got, want)
	}
	if got := LayoutFrom(map[string]string{PadWidthConfig: "x"}); got.PadWidth != 10 {
		t.Errorf("unparsable pad width gave %d", got.PadWidth)
	}
}

func TestKey(t *testing.T) {
	cases := []struct {
		java   string
		layout Layout
		topic  string
		enc    string
		part   int32
		off    int64
		ext    string
		want   string
	}{
		{"fileKeyToCommit with the defaults", defaultLayout, "orders", "partition=0", 0, 0, ".avro",
			"topics/orders/partition=0/orders+0+0000000000.avro"},
		{"%010d does not truncate longer offsets", defaultLayout, "t", "partition=12", 12, 123456789012, ".snappy.parquet",
			"topics/t/partition=12/t+12+123456789012.snappy.parquet"},
		{"blank topics.dir is left out (StringUtils.isNotBlank)", Layout{TopicsDir: "", DirDelim: "/", FileDelim: "+", PadWidth: 10},
			"t", "partition=1", 1, 5, ".json", "t/partition=1/t+1+0000000005.json"},
		{"whitespace topics.dir is blank too", Layout{TopicsDir: "  ", DirDelim: "/", FileDelim: "+", PadWidth: 10},
			"t", "partition=1", 1, 5, ".json", "t/partition=1/t+1+0000000005.json"},
		{"pad width 0 pads nothing", Layout{TopicsDir: "topics", DirDelim: "/", FileDelim: "+", PadWidth: 0},
			"t", "partition=1", 1, 5, ".json", "topics/t/partition=1/t+1+5.json"},
		{"Java's %05d counts the sign", Layout{TopicsDir: "topics", DirDelim: "/", FileDelim: "+", PadWidth: 5},
			"t", "p", 1, -3, ".json", "topics/t/p/t+1+-0003.json"},
		{"empty encoded partition", defaultLayout, "t", "", 0, 1, ".json", "topics/t//t+0+0000000001.json"},
		{"custom delimiters", Layout{TopicsDir: "root", DirDelim: "::", FileDelim: "~", PadWidth: 2},
			"t", "a=1::b=2", 4, 7, "", "root::t::a=1::b=2::t~4~07"},
	}
	for _, c := range cases {
		if got := c.layout.Key(c.topic, c.enc, c.part, c.off, c.ext); got != c.want {
			t.Errorf("%s: Key = %q, want %q", c.java, got, c.want)
		}
	}
}

func TestTopicPrefix(t *testing.T) {
	if got := defaultLayout.TopicPrefix("orders"); got != "topics/orders/" {
		t.Errorf("TopicPrefix = %q", got)
	}
	if got := (Layout{DirDelim: "/"}).TopicPrefix("orders"); got != "orders/" {
		t.Errorf("TopicPrefix without topics.dir = %q", got)
	}
}

func TestParseKey(t *testing.T) {
	underscore := Layout{TopicsDir: "topics", DirDelim: "_", FileDelim: "+", PadWidth: 10}
	dots := Layout{TopicsDir: "topics", DirDelim: "/", FileDelim: ".", PadWidth: 10}
	cases := []struct {
		why    string
		layout Layout
		key    string
		ext    string
		topic  string
		part   int32
		off    int64
		ok     bool
	}{
		{"default layout", defaultLayout, "topics/orders/partition=3/orders+3+0000001200.json", ".json", "orders", 3, 1200, true},
		{"topic with '+' and '.'", defaultLayout, "topics/a+b.c/partition=0/a+b.c+0+0000000007.json", ".json", "a+b.c", 0, 7, true},
		{"field partitioner directories", defaultLayout, "topics/t/region=eu/shard=7/t+2+0000000005.avro", ".avro", "t", 2, 5, true},
		{"time-based directories", defaultLayout, "topics/t/year=2024/month=03/day=10/hour=03/t+0+0000000000.snappy.parquet",
			".snappy.parquet", "t", 0, 0, true},
		{"another pad width", defaultLayout, "topics/t/partition=0/t+0+12.json", ".json", "t", 0, 12, true},
		{"empty encoded partition", defaultLayout, "topics/t//t+0+0000000001.json", ".json", "t", 0, 1, true},
		{"no topics.dir", Layout{DirDelim: "/", FileDelim: "+"}, "t/partition=0/t+0+0000000001.json", ".json", "t", 0, 1, true},
		{"directory delimiter inside the topic", underscore, "topics_my_topic_partition=0_my_topic+0+0000000009.json", ".json", "my_topic", 0, 9, true},
		{"file delimiter '.' with ext", dots, "topics/a.b/partition=1/a.b.1.0000000002.json", ".json", "a.b", 1, 2, true},
		{"keys side file", defaultLayout, "topics/t/partition=0/t+0+0000000000.keys.avro", ".avro", "", 0, 0, false},
		{"other extension", defaultLayout, "topics/t/partition=0/t+0+0000000000.json", ".avro", "", 0, 0, false},
		{"file topic differs from the directory", defaultLayout, "topics/t/partition=0/u+0+0000000000.json", ".json", "", 0, 0, false},
		{"outside topics.dir", defaultLayout, "other/t/partition=0/t+0+0000000000.json", ".json", "", 0, 0, false},
		{"no encoded partition directory", defaultLayout, "topics/t/t+0+0000000000.json", ".json", "", 0, 0, false},
		{"partition with a leading zero", defaultLayout, "topics/t/partition=3/t+03+0000000000.json", ".json", "", 0, 0, false},
		{"negative partition", defaultLayout, "topics/t/partition=3/t+-3+0000000000.json", ".json", "", 0, 0, false},
		{"offset overflows", defaultLayout, "topics/t/p/t+0+99999999999999999999.json", ".json", "", 0, 0, false},
		{"partition overflows", defaultLayout, "topics/t/p/t+2147483648+0.json", ".json", "", 0, 0, false},
		{"missing offset", defaultLayout, "topics/t/p/t+0+.json", ".json", "", 0, 0, false},
		{"missing topic", defaultLayout, "topics//p/+0+0.json", ".json", "", 0, 0, false},
		{"a directory", defaultLayout, "topics/t/partition=0/", ".json", "", 0, 0, false},
	}
	for _, c := range cases {
		topic, part, off, ok := c.layout.ParseKey(c.key, c.ext)
		if ok != c.ok || topic != c.topic || part != c.part || off != c.off {
			t.Errorf("%s: ParseKey(%q) = %q, %d, %d, %v; want %q, %d, %d, %v",
				c.why, c.key, topic, part, off, ok, c.topic, c.part, c.off, c.ok)
		}
	}
}

// legalTopic reports whether s is a Kafka topic name: [a-zA-Z0-9._-]+.
func legalTopic(s string) bool {
	if s == "" || len(s) > 249 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

var fuzzLayouts = []Layout{
	defaultLayout,
	{TopicsDir: "", DirDelim: "/", FileDelim: "+", PadWidth: 10},
	{TopicsDir: "a/b", DirDelim: "/", FileDelim: "_", PadWidth: 3},
	{TopicsDir: "topics", DirDelim: "_", FileDelim: ".", PadWidth: 0},
}

var fuzzExts = []string{".json", ".avro", ".snappy.parquet", ".json.gz", ".bin", ""}

// FuzzKeyRoundTrip: every key Key writes for a legal topic parses back.
// A topic holding the directory delimiter can make a key ambiguous
// (topic "__" with nothing encoded and topic "_" with "__" encoded name
// the same object under "_"); such a key must parse as some key Key
// writes.
func FuzzKeyRoundTrip(f *testing.F) {
	f.Add("orders", "partition=3", int32(3), int64(1200), uint8(0), uint8(0))
	f.Add("a+b.c", "year=2024/month=03", int32(0), int64(0), uint8(2), uint8(2))
	f.Add("my_topic", "", int32(7), int64(99), uint8(3), uint8(1))
	f.Fuzz(func(t *testing.T, topic, enc string, part int32, off int64, li, ei uint8) {
		l := fuzzLayouts[int(li)%len(fuzzLayouts)]
		ext := fuzzExts[int(ei)%len(fuzzExts)]
		if !legalTopic(topic) || part < 0 || off < 0 {
			return
		}
		key := l.Key(topic, enc, part, off, ext)
		gotTopic, gotPart, gotOff, ok := l.ParseKey(key, ext)
		if strings.Contains(topic, l.DirDelim) {
			if !ok || gotPart != part || gotOff != off {
				t.Fatalf("%+v: ParseKey(%q) = %q, %d, %d, %v", l, key, gotTopic, gotPart, gotOff, ok)
			}
			checkAccepted(t, l, key, ext)
			return
		}
		if !ok || gotTopic != topic || gotPart != part || gotOff != off {
			t.Fatalf("%+v: ParseKey(%q) = %q, %d, %d, %v", l, key, gotTopic, gotPart, gotOff, ok)
		}
	})
}

// FuzzParseKey: ParseKey never panics, and what it accepts is a key Key
// writes (for the pad width the offset was written with).
func FuzzParseKey(f *testing.F) {
	f.Add("topics/orders/partition=3/orders+3+0000001200.json", uint8(0), uint8(0))
	f.Add("topics/a+b/x/a+b+0+1.avro", uint8(0), uint8(1))
	f.Add("topics_my_topic__my_topic.0.5", uint8(3), uint8(5))
	f.Add("a/b/t/p/t_1_001.bin", uint8(2), uint8(4))
	f.Fuzz(func(t *testing.T, key string, li, ei uint8) {
		l := fuzzLayouts[int(li)%len(fuzzLayouts)]
		ext := fuzzExts[int(ei)%len(fuzzExts)]
		checkAccepted(t, l, key, ext)
	})
}

// checkAccepted fails unless ParseKey rejects key or accepts it as a key
// Key writes (for the pad width its offset was written with).
func checkAccepted(t *testing.T, l Layout, key, ext string) {
	t.Helper()
	topic, part, off, ok := l.ParseKey(key, ext)
	if !ok {
		return
	}
	if topic == "" || part < 0 || off < 0 {
		t.Fatalf("ParseKey(%q) accepted %q, %d, %d", key, topic, part, off)
	}
	prefix := l.TopicPrefix(topic)
	tail := l.DirDelim + topic + l.FileDelim + strconv.Itoa(int(part)) + l.FileDelim
	name := strings.TrimSuffix(key, ext)
	i := strings.LastIndex(name, tail)
	if !strings.HasPrefix(key, prefix) || i < len(prefix) {
		t.Fatalf("ParseKey(%q) = %q, %d: key lacks prefix %q or tail %q", key, topic, part, prefix, tail)
	}
	offStr := name[i+len(tail):]
	l.PadWidth = len(offStr)
	if again := l.Key(topic, name[len(prefix):i], part, off, ext); again != key {
		t.Fatalf("ParseKey(%q) = %q, %d, %d, but Key gives %q", key, topic, part, off, again)
	}
}
