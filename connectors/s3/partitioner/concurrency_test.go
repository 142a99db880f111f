package partitioner

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// TestConcurrentEncode runs each partitioner from several goroutines
// (the caches are shared); run with -race.
func TestConcurrentEncode(t *testing.T) {
	cases := []struct {
		props map[string]string
		rec   func(i int) *connect.SinkRecord
		want  func(i int) string
	}{
		{map[string]string{},
			func(i int) *connect.SinkRecord { return &connect.SinkRecord{Partition: int32(i % 40)} },
			func(i int) string { return "partition=" + strconv.Itoa(i%40) }},
		{map[string]string{ClassConfig: FieldClass, FieldNameConfig: "shard"},
			func(i int) *connect.SinkRecord { return structRecord(order(map[string]any{"shard": int32(i % 5)}), 0) },
			func(i int) string { return "shard=" + strconv.Itoa(i%5) }},
		{utcHourly,
			func(i int) *connect.SinkRecord { return structRecord(order(nil), 1710064800000+int64(i%3)*3_600_000) },
			func(i int) string { return "year=2024/month=03/day=10/hour=" + strconv.Itoa(10+i%3) }},
	}
	for _, c := range cases {
		p, err := New(c.props)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				for i := g; i < 400; i += 4 {
					got, err := p.Encode(c.rec(i), time.Time{})
					if err != nil || got != c.want(i) {
						t.Errorf("record %d: %q, %v; want %q", i, got, err, c.want(i))
						return
					}
				}
			}(g)
		}
		wg.Wait()
	}
}
