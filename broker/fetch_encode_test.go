package broker

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/log"
)

// TestEncodeFetchMatchesKmsg checks, for every Fetch version we serve,
// that splicing file ranges into the encoded response yields exactly the
// bytes kmsg produces with the records inline.
func TestEncodeFetchMatchesKmsg(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "seg"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	content := make([]byte, 1<<16)
	for i := range content {
		content[i] = byte(rand.IntN(256))
	}
	f.Write(content)

	rng := rand.New(rand.NewPCG(1, 2))
	for v := apiVersions[int16(kmsg.Fetch)].Min; v <= apiVersions[int16(kmsg.Fetch)].Max; v++ {
		for trial := 0; trial < 30; trial++ {
			resp := kmsg.NewPtrFetchResponse()
			resp.Version = v
			want := kmsg.NewPtrFetchResponse()
			want.Version = v
			var data []fetchData
			for ti := 0; ti < 1+rng.IntN(3); ti++ {
				topic := kmsg.NewFetchResponseTopic()
				topic.Topic = "topic-" + string(rune('a'+ti))
				topic.TopicID = [16]byte{byte(ti), 1, 2, 3}
				wantTopic := topic
				for pi := 0; pi < 1+rng.IntN(200); pi++ {
					p := kmsg.NewFetchResponseTopicPartition()
					p.Partition = int32(pi)
					p.HighWatermark = rng.Int64N(1 << 40)
					p.RecordBatches = emptyRecords
					wp := p
					if rng.IntN(3) > 0 {
						// Records from one or two ranges of the file; sizes
						// cross the varint-length boundaries.
						var res log.ReadResult
						var inline []byte
						for r := 0; r < 1+rng.IntN(2); r++ {
							size := []int{1, 126, 127, 128, 300, 16383, 16384, 20000}[rng.IntN(8)]
							pos := rng.IntN(len(content) - size)
							res.Ranges = append(res.Ranges, log.FileRange{File: f, Pos: int64(pos), Size: size})
							res.Size += size
							inline = append(inline, content[pos:pos+size]...)
						}
						wp.RecordBatches = inline
						data = append(data, fetchData{topic: ti, partition: pi, res: res})
					}
					topic.Partitions = append(topic.Partitions, p)
					wantTopic.Partitions = append(wantTopic.Partitions, wp)
				}
				resp.Topics = append(resp.Topics, topic)
				want.Topics = append(want.Topics, wantTopic)
			}
			parts, err := encodeFetch(resp, data)
			if err != nil {
				t.Fatalf("v%d: %v", v, err)
			}
			var got []byte
			for _, p := range parts {
				if p.File != nil {
					got = append(got, content[p.Pos:p.Pos+int64(p.Size)]...)
				} else {
					got = append(got, p.Bytes...)
				}
			}
			if exp := want.AppendTo(nil); !bytes.Equal(got, exp) {
				t.Fatalf("v%d trial %d: spliced encoding (%d bytes) differs from kmsg's (%d bytes)", v, trial, len(got), len(exp))
			}
		}
	}
}
