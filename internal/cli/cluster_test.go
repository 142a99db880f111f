package cli

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka's AdminUtils javadoc example, rack-unaware: five brokers, ten
// partitions, start index and shift 0.
func TestAssignReplicasRackUnaware(t *testing.T) {
	brokers := []brokerRack{{ID: 0}, {ID: 1}, {ID: 2}, {ID: 3}, {ID: 4}}
	got, err := assignReplicas(brokers, 10, 3, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int32][]int32{
		0: {0, 1, 2}, 1: {1, 2, 3}, 2: {2, 3, 4}, 3: {3, 4, 0}, 4: {4, 0, 1},
		// Second round: followers shifted one further.
		5: {0, 2, 3}, 6: {1, 3, 4}, 7: {2, 4, 0}, 8: {3, 0, 1}, 9: {4, 1, 2},
	}
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

// Kafka's javadoc example, rack-aware: the rack-alternated list is
// 0,3,1,5,4,2 and partition 6 starts the shifted round.
func TestAssignReplicasRackAware(t *testing.T) {
	racks := map[int32]string{0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
	if got := rackAlternated(racks); !slices.Equal(got, []int32{0, 3, 1, 5, 4, 2}) {
		t.Fatalf("rack-alternated list %v, want 0,3,1,5,4,2", got)
	}
	var brokers []brokerRack
	for id := int32(0); id < 6; id++ {
		brokers = append(brokers, brokerRack{id, racks[id]})
	}
	got, err := assignReplicas(brokers, 7, 3, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int32][]int32{
		0: {0, 3, 1}, 1: {3, 1, 5}, 2: {1, 5, 4}, 3: {5, 4, 2}, 4: {4, 2, 0}, 5: {2, 0, 3},
		6: {0, 4, 2},
	}
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	for p, reps := range got {
		seen := map[string]bool{}
		for _, r := range reps {
			if seen[racks[r]] {
				t.Errorf("partition %d has two replicas in %s: %v", p, racks[r], reps)
			}
			seen[racks[r]] = true
		}
	}
}

func TestAssignReplicasRefuses(t *testing.T) {
	if _, err := assignReplicas([]brokerRack{{ID: 1}, {ID: 2}}, 3, 3, -1, -1); err == nil || !strings.Contains(err.Error(), "larger than available brokers: 2") {
		t.Errorf("rf 3 on 2 brokers: %v", err)
	}
	if _, err := assignReplicas([]brokerRack{{1, "a"}, {ID: 2}}, 1, 1, -1, -1); err == nil || !strings.Contains(err.Error(), "Not all brokers have rack information") {
		t.Errorf("mixed racks: %v", err)
	}
	// Random start: still every partition on rf distinct brokers.
	got, err := assignReplicas([]brokerRack{{ID: 1}, {ID: 2}, {ID: 3}}, 12, 3, -1, -1)
	if err != nil {
		t.Fatal(err)
	}
	for p, reps := range got {
		s := slices.Clone(reps)
		slices.Sort(s)
		if !slices.Equal(slices.Compact(s), []int32{1, 2, 3}) {
			t.Errorf("partition %d: %v", p, reps)
		}
	}
}

func TestReassignmentJSONRoundTrip(t *testing.T) {
	a := assignment{{"b", 0}: {3, 1}, {"a", 1}: {2}, {"a", 0}: {1, 2}}
	got := formatReassignmentJSON(a)
	// Kafka's layout: compact, sorted, log_dirs "any".
	want := `{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1,2],"log_dirs":["any","any"]},` +
		`{"topic":"a","partition":1,"replicas":[2],"log_dirs":["any"]},{"topic":"b","partition":0,"replicas":[3,1],"log_dirs":["any","any"]}]}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	back, order, err := parseReassignmentJSON([]byte(got))
	if err != nil {
		t.Fatal(err)
	}
	if !maps.EqualFunc(back, a, slices.Equal) || len(order) != 3 {
		t.Fatalf("round trip: %v %v", back, order)
	}
	// Files without version or log_dirs are accepted, as by Kafka.
	if _, _, err := parseReassignmentJSON([]byte(`{"partitions":[{"topic":"t","partition":0,"replicas":[1]}]}`)); err != nil {
		t.Fatal(err)
	}
}

func TestReassignmentJSONRefused(t *testing.T) {
	for in, want := range map[string]string{
		`{"version":2,"partitions":[]}`:                                                                          "Not supported version field value 2",
		`{"version":1,"partitions":[]}`:                                                                          "Partition reassignment list cannot be empty",
		`{"partitions":[{"topic":"t","partition":0,"replicas":[]}]}`:                                             "Partition replica list cannot be empty",
		`{"partitions":[{"topic":"t","partition":0,"replicas":[1,1,2]}]}`:                                        "Partition replica lists may not contain duplicate entries: t-0 contains multiple entries for 1",
		`{"partitions":[{"topic":"t","partition":0,"replicas":[1]},{"topic":"t","partition":0,"replicas":[2]}]}`: "Partition reassignment contains duplicate topic partitions: t-0",
		`{"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any"]}]}`:                       "is different from size of log dirs list",
		`{"partitions":[{"topic":"t","partition":0,"replicas":[1],"log_dirs":["/data"]}]}`:                       "not supported",
		`{"partitions":`: "not valid JSON",
	} {
		_, _, err := parseReassignmentJSON([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", in, err, want)
		}
	}
}

func TestTopicsToMoveAndBrokerList(t *testing.T) {
	topics, err := parseTopicsToMoveJSON([]byte(`{"version":1,"topics":[{"topic":"foo"},{"topic":"bar"}]}`))
	if err != nil || !slices.Equal(topics, []string{"foo", "bar"}) {
		t.Fatalf("%v %v", topics, err)
	}
	if _, err := parseTopicsToMoveJSON([]byte(`{"topics":[{"topic":"foo"},{"topic":"foo"}]}`)); err == nil || !strings.Contains(err.Error(), "duplicate entries: foo") {
		t.Errorf("duplicate topics: %v", err)
	}
	ids, err := parseBrokerList("3, 1,2")
	if err != nil || !slices.Equal(ids, []int32{3, 1, 2}) {
		t.Fatalf("%v %v", ids, err)
	}
	for _, bad := range []string{"", "1,x", "1,1", "-2"} {
		if _, err := parseBrokerList(bad); err == nil {
			t.Errorf("--broker-list %q accepted", bad)
		}
	}
}

// The throttle configs are what kafka-reassign-partitions computes: all
// current replicas leader-throttled, new ones follower-throttled.
func TestThrottledReplicas(t *testing.T) {
	current := assignment{{"t", 0}: {1, 2}, {"t", 1}: {2, 3}}
	proposed := assignment{{"t", 0}: {3, 2}, {"t", 1}: {2, 3}}
	// Partition 2 is already moving from 1 to 4.
	ongoing := map[tp]kmsg.ListPartitionReassignmentsResponseTopicPartition{
		{"t", 2}: {Partition: 2, Replicas: []int32{1, 4}, AddingReplicas: []int32{4}, RemovingReplicas: []int32{1}},
	}
	moves := proposedMoves(ongoing, proposed, current)
	leader, follower := throttledReplicas(moves)
	if leader["t"] != "0:1,0:2,1:2,1:3,2:1" {
		t.Errorf("leader.replication.throttled.replicas = %q", leader["t"])
	}
	if follower["t"] != "0:3,2:4" {
		t.Errorf("follower.replication.throttled.replicas = %q", follower["t"])
	}
	if got := reassigningBrokers(moves); !slices.Equal(got, []int32{1, 2, 3, 4}) {
		t.Errorf("reassigning brokers %v", got)
	}
}

func TestPlanRemoval(t *testing.T) {
	brokers := []clusterBroker{{ID: 1, Rack: "a"}, {ID: 2, Rack: "a"}, {ID: 3, Rack: "b"}, {ID: 4, Rack: "b"}, {ID: 5, Rack: "c", Fenced: true}}
	parts := []partitionState{
		{Topic: "t", Partition: 0, Replicas: []int32{3, 1}},
		{Topic: "t", Partition: 1, Replicas: []int32{1, 4}},
		{Topic: "t", Partition: 2, Replicas: []int32{2, 4}},
	}
	plan, err := planRemoval(3, brokers, parts)
	if err != nil {
		t.Fatal(err)
	}
	// 3 (rack b, preferred leader) is replaced in place by the other rack-b
	// broker, keeping the partition on two racks; the fenced broker is not
	// a candidate; partitions without 3 do not move.
	want := assignment{{"t", 0}: {4, 1}}
	if !maps.EqualFunc(plan, want, slices.Equal) {
		t.Fatalf("plan %v, want %v", plan, want)
	}
	// RF 2 on two live brokers left after removing one: impossible.
	_, err = planRemoval(1, brokers[:2], []partitionState{{Topic: "x", Partition: 0, Replicas: []int32{1, 2}}})
	if err == nil || !strings.Contains(err.Error(), "x-0") {
		t.Fatalf("impossible removal: %v", err)
	}
	// Without racks the least-loaded broker takes each replica in turn.
	flat := []clusterBroker{{ID: 1}, {ID: 2}, {ID: 3}, {ID: 4}}
	plan, err = planRemoval(1, flat, []partitionState{
		{Topic: "y", Partition: 0, Replicas: []int32{1, 2}},
		{Topic: "y", Partition: 1, Replicas: []int32{1, 3}},
		{Topic: "y", Partition: 2, Replicas: []int32{2, 3}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want = assignment{{"y", 0}: {4, 2}, {"y", 1}: {4, 3}}
	if !maps.EqualFunc(plan, want, slices.Equal) {
		t.Fatalf("plan %v, want %v", plan, want)
	}
}
