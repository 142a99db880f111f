package group

import (
	"cmp"
	"encoding/hex"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// goldenCase is one entry of testdata/protocol.json, written by Kafka
// Connect 4.4's own encoders (testdata/java/ProtocolGolden.java).
type goldenCase struct {
	Name       string          `json:"name"`
	Kind       string          `json:"kind"`
	Protocol   string          `json:"protocol"`
	DecodeOnly bool            `json:"decode_only"`
	Hex        string          `json:"hex"`
	Value      json.RawMessage `json:"value"`
}

type goldenTask struct {
	Connector string `json:"connector"`
	Task      int32  `json:"task"`
}

type goldenAssignment struct {
	Version           int16        `json:"version"`
	Error             int16        `json:"error"`
	Leader            string       `json:"leader"`
	LeaderURL         string       `json:"leader_url"`
	ConfigOffset      int64        `json:"config_offset"`
	Connectors        []string     `json:"connectors"`
	Tasks             []goldenTask `json:"tasks"`
	RevokedConnectors []string     `json:"revoked_connectors"`
	RevokedTasks      []goldenTask `json:"revoked_tasks"`
	Delay             int32        `json:"delay"`
}

type goldenMetadata struct {
	URL          string            `json:"url"`
	ConfigOffset int64             `json:"config_offset"`
	Assignment   *goldenAssignment `json:"assignment"`
}

func (g *goldenAssignment) assignment() *Assignment {
	if g == nil {
		return nil
	}
	tasks := func(ts []goldenTask) []TaskID {
		var out []TaskID
		for _, t := range ts {
			out = append(out, TaskID(t))
		}
		return out
	}
	return &Assignment{
		Version: g.Version, Error: g.Error, Leader: g.Leader, LeaderURL: g.LeaderURL,
		ConfigOffset: g.ConfigOffset, Connectors: g.Connectors, Tasks: tasks(g.Tasks),
		RevokedConnectors: g.RevokedConnectors, RevokedTasks: tasks(g.RevokedTasks), Delay: g.Delay,
	}
}

func loadGolden(t *testing.T) []goldenCase {
	t.Helper()
	b, err := os.ReadFile("testdata/protocol.json")
	if err != nil {
		t.Fatalf("read golden file (regenerate with testdata/gen.sh): %v", err)
	}
	var cases []goldenCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatalf("parse golden file: %v", err)
	}
	if len(cases) < 15 {
		t.Fatalf("golden file has %d cases; expected the full set", len(cases))
	}
	return cases
}

// normalize makes two assignments comparable when only the order Kafka
// groups connectors in differs: the wire order is what the byte
// comparison checks.
func normalize(a *Assignment) *Assignment {
	if a == nil {
		return nil
	}
	c := *a
	sortTasks := func(ts []TaskID) []TaskID {
		ts = slices.Clone(ts)
		slices.SortFunc(ts, func(x, y TaskID) int {
			if r := strings.Compare(x.Connector, y.Connector); r != 0 {
				return r
			}
			return cmp.Compare(x.Task, y.Task)
		})
		if len(ts) == 0 {
			return nil
		}
		return ts
	}
	sortStrings := func(ss []string) []string {
		ss = slices.Clone(distinct(ss))
		slices.Sort(ss)
		if len(ss) == 0 {
			return nil
		}
		return ss
	}
	c.Connectors, c.RevokedConnectors = sortStrings(c.Connectors), sortStrings(c.RevokedConnectors)
	c.Tasks, c.RevokedTasks = sortTasks(c.Tasks), sortTasks(c.RevokedTasks)
	return &c
}

func TestProtocolMatchesKafka(t *testing.T) {
	for _, c := range loadGolden(t) {
		t.Run(c.Name, func(t *testing.T) {
			want, err := hex.DecodeString(c.Hex)
			if err != nil {
				t.Fatal(err)
			}
			switch c.Kind {
			case "metadata":
				var v goldenMetadata
				if err := json.Unmarshal(c.Value, &v); err != nil {
					t.Fatal(err)
				}
				state := WorkerState{URL: v.URL, ConfigOffset: v.ConfigOffset, Assignment: v.Assignment.assignment()}
				if !c.DecodeOnly {
					got, err := EncodeMetadata(c.Protocol, state)
					if err != nil {
						t.Fatal(err)
					}
					if hex.EncodeToString(got) != c.Hex {
						t.Errorf("EncodeMetadata(%s):\n got %x\nwant %s", c.Protocol, got, c.Hex)
					}
				}
				got, err := DecodeMetadata(c.Protocol, want)
				if err != nil {
					t.Fatalf("DecodeMetadata: %v", err)
				}
				if got.URL != state.URL || got.ConfigOffset != state.ConfigOffset ||
					!reflect.DeepEqual(normalize(got.Assignment), normalize(state.Assignment)) {
					t.Errorf("DecodeMetadata:\n got %+v %+v\nwant %+v %+v", got, got.Assignment, state, state.Assignment)
				}
			case "assignment":
				var v goldenAssignment
				if err := json.Unmarshal(c.Value, &v); err != nil {
					t.Fatal(err)
				}
				a := v.assignment()
				if !c.DecodeOnly {
					got, err := EncodeAssignment(c.Protocol, a)
					if err != nil {
						t.Fatal(err)
					}
					if hex.EncodeToString(got) != c.Hex {
						t.Errorf("EncodeAssignment(%s):\n got %x\nwant %s", c.Protocol, got, c.Hex)
					}
				}
				got, err := DecodeAssignment(want)
				if err != nil {
					t.Fatalf("DecodeAssignment: %v", err)
				}
				if c.DecodeOnly {
					// Kafka's decoder output, in wire order.
					if !reflect.DeepEqual(normalize(got), normalize(a)) || !slices.Equal(got.Connectors, nilIfEmpty(a.Connectors)) {
						t.Errorf("DecodeAssignment:\n got %+v\nwant %+v", got, a)
					}
					return
				}
				if !reflect.DeepEqual(normalize(got), normalize(a)) {
					t.Errorf("DecodeAssignment:\n got %+v\nwant %+v", normalize(got), normalize(a))
				}
			default:
				t.Fatalf("unknown kind %q", c.Kind)
			}
		})
	}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func TestDecodeRejectsCorruptInput(t *testing.T) {
	good, err := EncodeAssignment(ProtocolCompatible, &Assignment{
		Leader: "l", LeaderURL: "u", ConfigOffset: 3, Connectors: []string{"a"},
		Tasks: []TaskID{{"a", 0}}, RevokedTasks: []TaskID{{"b", 1}}, Delay: 10,
	})
	if err != nil {
		t.Fatal(err)
	}
	// Every truncation inside the fixed fields or inside an array element
	// is an error; truncations at a field boundary after the config
	// offset are the tolerated "missing fields".
	fixed := 2 + 2 + 3 + 3 + 8
	for n := 0; n < len(good); n++ {
		_, err := DecodeAssignment(good[:n])
		atBoundary := n == fixed || n == len(good)-4 || n == fixed+4+(2+1+4+8)
		if n < fixed && err == nil {
			t.Errorf("truncated to %d bytes (inside the fixed fields): no error", n)
		}
		if n > fixed && !atBoundary && err == nil {
			t.Errorf("truncated to %d bytes: no error", n)
		}
		if atBoundary && err != nil {
			t.Errorf("truncated to %d bytes (a field boundary): %v", n, err)
		}
	}
	huge := slices.Clone(good)
	copy(huge[fixed:], []byte{0x7f, 0xff, 0xff, 0xff}) // array count far beyond the buffer
	if _, err := DecodeAssignment(huge); err == nil || !strings.Contains(err.Error(), "does not fit") {
		t.Errorf("huge array count: err = %v", err)
	}
	if _, err := DecodeMetadata("eager", []byte{0, 0}); err == nil {
		t.Error("unknown protocol name accepted")
	}
	if _, err := DecodeAssignment([]byte{0xff, 0xff}); err == nil {
		t.Error("negative version accepted")
	}
}

func TestJavaHashSetOrder(t *testing.T) {
	// Orders printed by Java 17: new HashSet<>(List.of(...)) iteration.
	cases := []struct{ in, want []string }{
		{[]string{"pg-cdc", "s3-sink"}, []string{"s3-sink", "pg-cdc"}},
		{[]string{"b", "a", "b"}, []string{"a", "b"}},
		{nil, nil},
	}
	for _, c := range cases {
		if got := javaHashSetOrder(c.in); !slices.Equal(got, c.want) {
			t.Errorf("javaHashSetOrder(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if h := javaStringHash("hello"); int32(h) != 99162322 {
		t.Errorf("javaStringHash(hello) = %d, want 99162322", int32(h))
	}
	if h := javaStringHash("sink-🚀"); int32(h) != int32(javaHashReference("sink-🚀")) {
		t.Errorf("surrogate pairs hash differently")
	}
}

// javaHashReference spells out String.hashCode's formula over UTF-16
// code units, s[0]*31^(n-1) + ... + s[n-1], independently of the loop
// in javaStringHash.
func javaHashReference(s string) uint32 {
	units := []uint16{}
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			units = append(units, uint16(0xD800+(r>>10)), uint16(0xDC00+(r&0x3FF)))
		} else {
			units = append(units, uint16(r))
		}
	}
	var h uint32
	for i, u := range units {
		p := uint32(1)
		for range len(units) - 1 - i {
			p *= 31
		}
		h += uint32(u) * p
	}
	return h
}
