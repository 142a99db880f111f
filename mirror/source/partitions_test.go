package source

import (
	"reflect"
	"testing"

	"github.com/fjordhq/fjord/connect"
)

func TestTopicPartitionEncoding(t *testing.T) {
	for _, tp := range []connect.TopicPartition{{Topic: "orders", Partition: 0}, {Topic: "my-topic-3", Partition: 12}, {Topic: "a.b-c", Partition: 7}, {Topic: "orders-", Partition: 1}} {
		s := encodeTopicPartition(tp)
		got, err := decodeTopicPartition(s)
		if err != nil || got != tp {
			t.Errorf("decode(%q) = %v, %v; want %v", s, got, err, tp)
		}
	}
	if got := encodeTopicPartition(connect.TopicPartition{Topic: "my-topic", Partition: 3}); got != "my-topic-3" {
		t.Errorf("encode = %q, want Kafka's TopicPartition.toString my-topic-3", got)
	}
	for _, bad := range []string{"orders", "orders-", "orders-x", "-"} {
		if _, err := decodeTopicPartition(bad); err == nil {
			t.Errorf("decode(%q) accepted", bad)
		}
	}
	tps, err := decodeAssignment(" t-0 , t-1,u-2,t-0,")
	if err != nil {
		t.Fatal(err)
	}
	want := []connect.TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}, {Topic: "u", Partition: 2}}
	if !reflect.DeepEqual(tps, want) {
		t.Errorf("decodeAssignment = %v, want %v", tps, want)
	}
	if got := encodeAssignment(want); got != "t-0,t-1,u-2" {
		t.Errorf("encodeAssignment = %q", got)
	}
}

// MM2's own example (MirrorSourceConnector.taskConfigs): three tasks,
// topics of 8, 2 and 2 partitions.
func TestRoundRobinAsMM2(t *testing.T) {
	var tps []connect.TopicPartition
	for topic, n := range map[string]int32{"t0": 8, "t1": 2, "t2": 2} {
		for p := n - 1; p >= 0; p-- {
			tps = append(tps, connect.TopicPartition{Topic: topic, Partition: p})
		}
	}
	got := roundRobin(tps, 3)
	want := [][]string{
		{"t0-0", "t0-3", "t0-6", "t1-1"},
		{"t0-1", "t0-4", "t0-7", "t2-0"},
		{"t0-2", "t0-5", "t1-0", "t2-1"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d tasks, want %d", len(got), len(want))
	}
	for i := range want {
		var names []string
		for _, tp := range got[i] {
			names = append(names, encodeTopicPartition(tp))
		}
		if !reflect.DeepEqual(names, want[i]) {
			t.Errorf("task %d = %v, want %v", i, names, want[i])
		}
	}
	if n := len(roundRobin(tps[:2], 5)); n != 2 {
		t.Errorf("2 partitions over tasks.max 5 gave %d tasks, want 2", n)
	}
	if roundRobin(nil, 3) != nil {
		t.Error("no partitions should give no tasks")
	}
}
