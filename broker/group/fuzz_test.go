package group

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// fuzzRecords frames records for FuzzReplay: per record a uvarint key
// length and the key, then a uvarint of value length+1 (0: tombstone) and
// the value.
func fuzzRecords(recs ...Record) []byte {
	var b []byte
	for _, r := range recs {
		b = binary.AppendUvarint(b, uint64(len(r.Key)))
		b = append(b, r.Key...)
		if r.Value == nil {
			b = binary.AppendUvarint(b, 0)
			continue
		}
		b = binary.AppendUvarint(b, uint64(len(r.Value))+1)
		b = append(b, r.Value...)
	}
	return b
}

func parseFuzzRecords(b []byte) []Record {
	var recs []Record
	for len(b) > 0 && len(recs) < 1000 {
		kl, n := binary.Uvarint(b)
		if n <= 0 || kl > uint64(len(b)-n) {
			break
		}
		b = b[n:]
		r := Record{Key: b[:kl]}
		b = b[kl:]
		vl, n := binary.Uvarint(b)
		if n <= 0 || (vl > 0 && vl-1 > uint64(len(b)-n)) {
			break
		}
		b = b[n:]
		if vl > 0 {
			r.Value = append([]byte{}, b[:vl-1]...)
			b = b[vl-1:]
		}
		recs = append(recs, r)
	}
	return recs
}

// fuzzSeeds are realistic partitions: Kafka 4.4's own records, our
// rebalances and commits, tombstones, old value versions.
func fuzzSeeds() [][]byte {
	kafkaGroup, _ := hex.DecodeString("00030008636f6e73756d6572000000010012636f6f70657261746976652d737469636b79002a696e7374312d31646331373237642d643266332d343632622d613638612d646531653163643463376530000001a22658393f00000001002a696e7374312d31646331373237642d643266332d343632622d613638612d6465316531636434633765300005696e73743100036b676f000a2f3132372e302e302e310000ea600000afc80000001b000300000001000174000000040000000000000000ffffffffffff0000001d00000000000100017400000003000000000000000100000002ffffffff")
	kafkaOffset, _ := hex.DecodeString("0004000000000000001e000000002b696e7374312d31646331373237642d643266332d343632622d613638612d646531653163643463376530000001a2265839720100108eac8a5b0314441e80c9e36bb2cd78f7")
	g := newGroup(&Coordinator{log: quietLogger(), now: time.Now}, "g", 0, nil)
	g.protocolType, g.protocol, g.hasProtocol, g.generation, g.leader, g.stateMs = "consumer", "range", true, 3, "m1", 1
	g.add(&member{id: "m1", clientID: "c", sessionTimeoutMs: 10000, rebalanceTimeoutMs: 30000, protocolType: "consumer",
		protocols: []protocol{{"range", consumerMeta("t")}}, assignment: []byte("a")}, nil)
	g.add(&member{id: "m2", instanceID: kmsg.StringPtr("i2"), clientID: "c", sessionTimeoutMs: 10, rebalanceTimeoutMs: 10, protocolType: "consumer",
		protocols: []protocol{{"range", consumerMeta("t", "u")}}}, nil)
	v0 := kmsg.NewGroupMetadataValue() // an old (0.9) group record
	v0.Version, v0.ProtocolType, v0.Generation, v0.Protocol, v0.Leader = 0, "consumer", 1, kmsg.StringPtr("range"), kmsg.StringPtr("x")
	v0.Members = []kmsg.GroupMetadataValueMember{{MemberID: "x", SessionTimeoutMillis: 6000, Subscription: consumerMeta("t")}}
	o0 := kmsg.NewOffsetCommitValue()
	o0.Version, o0.Offset, o0.CommitTimestamp = 0, 3, 1
	return [][]byte{
		fuzzRecords(Record{Key: []byte{0, 2, 0, 2, 'g', '1'}, Value: kafkaGroup}, Record{Key: offsetKey("g1", "t", 2), Value: kafkaOffset}),
		fuzzRecords(
			Record{Key: groupKey("g"), Value: emptyGroupValue(1)},
			Record{Key: groupKey("g"), Value: groupValue(g, nil)},
			Record{Key: offsetKey("g", "t", 0), Value: offsetValue(&offsetEntry{offset: 1, leaderEpoch: -1, commitMs: 1, expireMs: -1})},
			Record{Key: offsetKey("g", "t", 1), Value: offsetValue(&offsetEntry{offset: 2, leaderEpoch: 3, commitMs: 1, expireMs: 5})},
			Record{Key: offsetKey("s", "t", 0), Value: offsetValue(&offsetEntry{offset: 9, leaderEpoch: -1, commitMs: 1, expireMs: -1})},
			Record{Key: offsetKey("g", "t", 1)},
		),
		fuzzRecords(
			Record{Key: groupKey("old"), Value: v0.AppendTo(nil)},
			Record{Key: []byte{0, 0, 0, 3, 'o', 'l', 'd', 0, 1, 't', 0, 0, 0, 0}, Value: o0.AppendTo(nil)},
			Record{Key: groupKey("gone"), Value: emptyGroupValue(1)},
			Record{Key: groupKey("gone")},
			Record{Key: []byte{0, 3, 0, 1, 'c'}, Value: []byte{0, 0}},
		),
	}
}

func FuzzReplay(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		recs := parseFuzzRecords(data)
		synctest.Test(t, func(t *testing.T) {
			store := NewMemStore()
			if err := store.Append(context.Background(), 0, recs); err != nil {
				t.Fatal(err)
			}
			cfg := testConfig()
			cfg.OffsetsTopicPartitions = 1 // every group lives in partition 0
			cfg.MaxGroupSize = 3
			c := New(cfg, store, Options{Logger: quietLogger()})
			defer c.Close()
			if err := c.Load(0); err != nil {
				t.Fatalf("load: %v", err)
			}
			ctx := context.Background()
			// Whatever was loaded must be describable, fetchable, joinable,
			// expirable and deletable without a panic.
			lr := c.ListGroups(ctx, kmsg.NewPtrListGroupsRequest())
			var ids []string
			for _, g := range lr.Groups {
				ids = append(ids, g.Group)
			}
			c.DescribeGroups(ctx, &kmsg.DescribeGroupsRequest{Version: 5, Groups: ids})
			for _, id := range ids {
				f := kmsg.NewPtrOffsetFetchRequest()
				f.Version = 8
				f.Groups = []kmsg.OffsetFetchRequestGroup{{Group: id}}
				c.OffsetFetch(ctx, f)
				c.Heartbeat(ctx, &kmsg.HeartbeatRequest{Group: id, MemberID: "m1", Generation: 3})
				done := make(chan struct{})
				go func() {
					defer close(done)
					c.JoinGroup(ctx, joinReq(id, "", withVersion(3)))
				}()
				synctest.Wait()
			}
			// Let the session and rebalance timers of sane groups fire.
			time.Sleep(2 * time.Hour)
			c.expireOffsets()
			c.DeleteGroups(ctx, &kmsg.DeleteGroupsRequest{Groups: ids})
			synctest.Wait()
		})
	})
}

// TestFuzzSeedCorpus checks that testdata/fuzz/FuzzReplay holds exactly
// fuzzSeeds; GROUP_WRITE_FUZZ_SEEDS=1 rewrites it.
func TestFuzzSeedCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzReplay")
	write := os.Getenv("GROUP_WRITE_FUZZ_SEEDS") != ""
	if write {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range fuzzSeeds() {
		name := filepath.Join(dir, fmt.Sprintf("seed-%d", i))
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s)
		if write {
			if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(name)
		if err != nil || string(got) != body {
			t.Fatalf("%s is missing or stale (%v); regenerate with GROUP_WRITE_FUZZ_SEEDS=1", name, err)
		}
	}
}

func TestFuzzFramingRoundTrip(t *testing.T) {
	for _, s := range fuzzSeeds() {
		recs := parseFuzzRecords(s)
		if got := fuzzRecords(recs...); string(got) != string(s) {
			t.Fatalf("framing does not round trip")
		}
	}
}
