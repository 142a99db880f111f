package sink

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
)

// A spool gives back exactly what was written, across chunk boundaries,
// from memory and after spilling to disk, by Read, Seek and ReadAt.
func TestSpoolRoundTrip(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, limit := range []int64{64 << 20, 3*spoolChunk + 17} {
		sp := newSpool(limit)
		var want bytes.Buffer
		for want.Len() < 5*spoolChunk {
			p := make([]byte, rnd.IntN(300_000))
			for i := range p {
				p[i] = byte(rnd.Uint32())
			}
			want.Write(p)
			if _, err := sp.Write(p); err != nil {
				t.Fatal(err)
			}
		}
		if spilled := sp.file != nil; spilled != (limit < int64(want.Len())) {
			t.Fatalf("limit %d: spilled=%v for %d bytes", limit, spilled, want.Len())
		}
		for range 2 { // a retried upload reads it again
			r, err := sp.reader()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Seek(0, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(r)
			if err != nil || !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("limit %d: read %d bytes (err %v), want %d equal bytes", limit, len(got), err, want.Len())
			}
			if ra, ok := r.(io.ReaderAt); ok {
				p := make([]byte, 1000)
				off := int64(spoolChunk - 500)
				if n, err := ra.ReadAt(p, off); n != 1000 || err != nil || !bytes.Equal(p, want.Bytes()[off:off+1000]) {
					t.Fatalf("ReadAt across a chunk boundary: %d %v", n, err)
				}
			}
		}
		sp.release()
	}
}
