package source

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/fjordhq/fjord/connect"
)

// encodeTopicPartition is Kafka's TopicPartition.toString, the form
// task.assigned.partitions lists: "topic-partition".
func encodeTopicPartition(tp connect.TopicPartition) string {
	return tp.Topic + "-" + strconv.Itoa(int(tp.Partition))
}

// decodeTopicPartition splits at the last '-', as MirrorUtils does
// (topic names may contain '-', partition numbers may not).
func decodeTopicPartition(s string) (connect.TopicPartition, error) {
	i := strings.LastIndexByte(s, '-')
	if i < 0 {
		return connect.TopicPartition{}, fmt.Errorf("%q is not a topic-partition", s)
	}
	p, err := strconv.ParseInt(s[i+1:], 10, 32)
	if err != nil || p < 0 {
		return connect.TopicPartition{}, fmt.Errorf("%q is not a topic-partition", s)
	}
	return connect.TopicPartition{Topic: s[:i], Partition: int32(p)}, nil
}

// encodeAssignment is a task's task.assigned.partitions value.
func encodeAssignment(tps []connect.TopicPartition) string {
	parts := make([]string, len(tps))
	for i, tp := range tps {
		parts[i] = encodeTopicPartition(tp)
	}
	return strings.Join(parts, ",")
}

// decodeAssignment reads task.assigned.partitions (a LIST: commas, blanks
// trimmed).
func decodeAssignment(v string) ([]connect.TopicPartition, error) {
	var out []connect.TopicPartition
	seen := map[connect.TopicPartition]bool{}
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		tp, err := decodeTopicPartition(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", TaskTopicPartitionsConfig, err)
		}
		if !seen[tp] {
			seen[tp] = true
			out = append(out, tp)
		}
	}
	return out, nil
}

// roundRobin deals the topic-partitions, sorted by topic then partition,
// to min(maxTasks, len) tasks in turn, as MirrorSourceConnector.taskConfigs:
// a topic's partitions spread over the tasks, so one busy topic does not
// land on one task.
func roundRobin(tps []connect.TopicPartition, maxTasks int) [][]connect.TopicPartition {
	n := min(maxTasks, len(tps))
	if n <= 0 {
		return nil
	}
	sorted := slices.Clone(tps)
	sortTopicPartitions(sorted)
	out := make([][]connect.TopicPartition, n)
	for i, tp := range sorted {
		out[i%n] = append(out[i%n], tp)
	}
	return out
}

func sortTopicPartitions(tps []connect.TopicPartition) {
	slices.SortFunc(tps, func(a, b connect.TopicPartition) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
}

// partitionCounts counts each topic's partitions.
func partitionCounts(tps []connect.TopicPartition) map[string]int32 {
	out := map[string]int32{}
	for _, tp := range tps {
		out[tp.Topic]++
	}
	return out
}

// sameSet reports whether a and b hold the same topic-partitions.
func sameSet(a, b []connect.TopicPartition) bool {
	set := func(x []connect.TopicPartition) map[connect.TopicPartition]bool {
		m := make(map[connect.TopicPartition]bool, len(x))
		for _, tp := range x {
			m[tp] = true
		}
		return m
	}
	return maps.Equal(set(a), set(b))
}
