package file

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fjordhq/fjord/connect"
)

// BenchmarkSourcePoll reads a file of 100-byte lines.
func BenchmarkSourcePoll(b *testing.B) {
	name := filepath.Join(b.TempDir(), "in.txt")
	line := strings.Repeat("x", 99) + "\n"
	const lines = 200000
	if err := os.WriteFile(name, []byte(strings.Repeat(line, lines)), 0o644); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(line)))
	n := 0
	for b.Loop() {
		if n%lines == 0 {
			b.StopTimer()
			task := &SourceTask{}
			task.Initialize(&taskContext{offsets: memOffsets{}})
			task.Start(context.Background(), map[string]string{"file": name, "topic": "t"})
			b.StartTimer()
			for got := 0; got < lines; {
				recs, err := task.Poll(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				got += len(recs)
			}
			task.Stop()
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkSinkPut writes struct values (JavaString of a Struct) and
// strings, committing (write and fsync) every million records.
func BenchmarkSinkPut(b *testing.B) {
	s := connect.NewStruct().Name("v").Field("id", connect.Int64Schema).Field("name", connect.StringSchema).
		Field("amount", connect.Float64Schema).Field("ok", connect.BooleanSchema).Build()
	for _, bc := range []struct {
		name  string
		value any
	}{
		{"string", strings.Repeat("y", 99)},
		{"struct", connect.NewStructValue(s).MustPut("id", int64(12345)).MustPut("name", "abcdefghij").MustPut("amount", 123.45).MustPut("ok", true)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			task := &SinkTask{}
			if err := task.Start(context.Background(), map[string]string{"file": filepath.Join(b.TempDir(), "out.txt")}); err != nil {
				b.Fatal(err)
			}
			defer task.Stop()
			batch := make([]*connect.SinkRecord, 1000)
			for i := range batch {
				batch[i] = &connect.SinkRecord{Value: bc.value}
			}
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				if err := task.Put(context.Background(), batch); err != nil {
					b.Fatal(err)
				}
				n += len(batch)
				if n%1000000 == 0 {
					if _, err := task.PreCommit(context.Background(), nil); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
