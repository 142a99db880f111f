package admin

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
)

// committed is group's committed offsets as kadm reads them.
func (e *kxEnv) committed(t *testing.T, group string) map[string]int64 {
	t.Helper()
	os, err := e.adm.FetchOffsets(testkit.Context(t, 10*time.Second), group)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	os.Each(func(o kadm.OffsetResponse) { out[fmt.Sprintf("%s-%d", o.Topic, o.Partition)] = o.At })
	return out
}

func TestConsumerGroups(t *testing.T) {
	e := kxStart(t, Options{})
	e.createTopic(t, "gin", 2)
	base := time.UnixMilli(1_700_000_000_000)
	kxTimed(t, e, "gin", 2, 5, base) // offsets 0-4 in both partitions

	// A real franz-go consumer group reads everything and commits.
	consumer, err := kgo.NewClient(kgo.SeedBrokers(e.addr), kgo.ClientID("reader-app"), kgo.ConsumerGroup("readers"),
		kgo.ConsumeTopics("gin"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	ctx := testkit.Context(t, 30*time.Second)
	for n := 0; n < 10; {
		fs := consumer.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		n += fs.NumRecords()
	}
	if err := consumer.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	// Three more records it has not committed: lag 3.
	e.produce(t, &kgo.Record{Topic: "gin", Partition: 0, Value: []byte("a")}, &kgo.Record{Topic: "gin", Partition: 0, Value: []byte("b")},
		&kgo.Record{Topic: "gin", Partition: 1, Value: []byte("c")})

	var list []groupSummary
	e.do(t, "GET", "/groups", nil, http.StatusOK, &list)
	if len(list) != 1 {
		t.Fatalf("groups: %+v", list)
	}
	if g := list[0]; g.GroupID != "readers" || g.State != "Stable" || g.ProtocolType != "consumer" || g.Protocol == "" ||
		g.Members != 1 || g.Coordinator != 0 || g.Lag != 3 || fmt.Sprint(g.Topics) != "[gin]" {
		t.Fatalf("group summary: %+v", g)
	}

	var d groupDetail
	e.do(t, "GET", "/groups/readers", nil, http.StatusOK, &d)
	if d.State != "Stable" || d.MemberCount != 1 || len(d.Members) != 1 || d.Lag != 3 {
		t.Fatalf("group detail: %+v", d)
	}
	m := d.Members[0]
	if m.ClientID != "reader-app" || m.MemberID == "" || m.ClientHost == "" || fmt.Sprint(m.Assignments) != "[{gin [0 1]}]" {
		t.Fatalf("member: %+v", m)
	}
	if len(d.Offsets) != 2 {
		t.Fatalf("offsets: %+v", d.Offsets)
	}
	// franz-go commits its member id as the offsets' metadata.
	for i, want := range []groupOffset{
		{Topic: "gin", Partition: 0, CommittedOffset: 5, EndOffset: 7, Lag: 2, Metadata: m.MemberID, MemberID: m.MemberID},
		{Topic: "gin", Partition: 1, CommittedOffset: 5, EndOffset: 6, Lag: 1, Metadata: m.MemberID, MemberID: m.MemberID},
	} {
		if d.Offsets[i] != want {
			t.Fatalf("offset %d: %+v, want %+v", i, d.Offsets[i], want)
		}
	}

	// While it has members the group can be neither reset nor deleted.
	e.wantError(t, "POST", "/groups/readers/offsets/reset", map[string]any{"to": "earliest"}, http.StatusConflict,
		"Assignments can only be reset if the group 'readers' is inactive, but the current state is Stable.")
	e.wantError(t, "DELETE", "/groups/readers", nil, http.StatusConflict, "NON_EMPTY_GROUP: ")
	if c := e.committed(t, "readers"); c["gin-0"] != 5 || c["gin-1"] != 5 {
		t.Fatalf("refused reset changed offsets: %v", c)
	}

	consumer.Close() // leaves the group
	testkit.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		var d groupDetail
		e.do(t, "GET", "/groups/readers", nil, http.StatusOK, &d)
		if d.State != "Empty" || d.MemberCount != 0 || len(d.Members) != 0 {
			return fmt.Errorf("group after its consumer left: %+v", d)
		}
		if len(d.Offsets) != 2 || d.Offsets[0].MemberID != "" || d.Offsets[0].Lag != 2 || d.Lag != 3 {
			return fmt.Errorf("offsets of the empty group: %+v", d.Offsets)
		}
		return nil
	})

	// A dry run answers the new offsets and changes nothing.
	var res resetResult
	e.do(t, "POST", "/groups/readers/offsets/reset", map[string]any{"to": "earliest", "dry_run": true}, http.StatusOK, &res)
	if !res.DryRun || fmt.Sprint(res.Offsets) != "[{gin 0 5 0} {gin 1 5 0}]" {
		t.Fatalf("dry run: %+v", res)
	}
	if c := e.committed(t, "readers"); c["gin-0"] != 5 || c["gin-1"] != 5 {
		t.Fatalf("dry run changed offsets: %v", c)
	}

	// Each kind of reset, checked in the committed offsets.
	for _, tc := range []struct {
		body map[string]any
		want string // the offsets answered
		p0   int64
		p1   int64
	}{
		{map[string]any{"to": "offset", "offset": 2, "topics": []string{"gin"}}, "[{gin 0 5 2} {gin 1 5 2}]", 2, 2},
		{map[string]any{"to": "shift", "shift": 3}, "[{gin 0 2 5} {gin 1 2 5}]", 5, 5},
		{map[string]any{"to": "shift", "shift": 100}, "[{gin 0 5 7} {gin 1 5 6}]", 7, 6},  // clamped to the end
		{map[string]any{"to": "shift", "shift": -100}, "[{gin 0 7 0} {gin 1 6 0}]", 0, 0}, // and to the start
		{map[string]any{"to": "latest"}, "[{gin 0 0 7} {gin 1 0 6}]", 7, 6},
		// The first record at or after 4.5 s: p0's offset 2 (5 s), p1's offset 2 (6 s).
		{map[string]any{"to": "timestamp", "timestamp": base.Add(4500 * time.Millisecond).UnixMilli()}, "[{gin 0 7 2} {gin 1 6 2}]", 2, 2},
		{map[string]any{"to": "earliest"}, "[{gin 0 2 0} {gin 1 2 0}]", 0, 0},
	} {
		var res resetResult
		e.do(t, "POST", "/groups/readers/offsets/reset", tc.body, http.StatusOK, &res)
		if res.DryRun || fmt.Sprint(res.Offsets) != tc.want {
			t.Fatalf("reset %v: %+v, want %s", tc.body, res, tc.want)
		}
		if c := e.committed(t, "readers"); c["gin-0"] != tc.p0 || c["gin-1"] != tc.p1 {
			t.Fatalf("after reset %v: committed %v, want %d and %d", tc.body, c, tc.p0, tc.p1)
		}
	}

	e.wantError(t, "POST", "/groups/readers/offsets/reset", map[string]any{}, http.StatusBadRequest, `"to" is required`)
	e.wantError(t, "POST", "/groups/readers/offsets/reset", map[string]any{"to": "middle"}, http.StatusBadRequest, `"to" must be`)
	e.wantError(t, "POST", "/groups/readers/offsets/reset", map[string]any{"to": "timestamp"}, http.StatusBadRequest, `"to": "timestamp" needs "timestamp"`)
	e.wantError(t, "POST", "/groups/readers/offsets/reset", map[string]any{"to": "earliest", "topics": []string{"nope"}}, http.StatusNotFound, "UNKNOWN_TOPIC_OR_PARTITION: ")
	e.wantError(t, "POST", "/groups/fresh/offsets/reset", map[string]any{"to": "earliest"}, http.StatusBadRequest, "group 'fresh' has no committed offsets")
	e.wantError(t, "POST", "/groups/fresh/offsets/reset", map[string]any{"to": "shift", "shift": 1, "topics": []string{"gin"}}, http.StatusBadRequest, "cannot shift the offset of gin-0")
	// As kafka-consumer-groups does, naming topics sets a new group's offsets.
	e.do(t, "POST", "/groups/fresh/offsets/reset", map[string]any{"to": "latest", "topics": []string{"gin"}}, http.StatusOK, &res)
	if fmt.Sprint(res.Offsets) != "[{gin 0 -1 7} {gin 1 -1 6}]" {
		t.Fatalf("new group's reset: %+v", res)
	}
	if c := e.committed(t, "fresh"); c["gin-0"] != 7 || c["gin-1"] != 6 {
		t.Fatalf("new group's offsets: %v", c)
	}

	// Delete the empty group: then it is unknown.
	e.do(t, "DELETE", "/groups/readers", nil, http.StatusNoContent, nil)
	e.wantError(t, "GET", "/groups/readers", nil, http.StatusNotFound, "GROUP_ID_NOT_FOUND: Group 'readers' does not exist.")
	e.wantError(t, "DELETE", "/groups/readers", nil, http.StatusNotFound, "GROUP_ID_NOT_FOUND: ")
	e.do(t, "GET", "/groups", nil, http.StatusOK, &list)
	if len(list) != 1 || list[0].GroupID != "fresh" || list[0].State != "Empty" || list[0].Lag != 0 {
		t.Fatalf("groups after delete: %+v", list)
	}
}
