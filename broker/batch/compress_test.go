package batch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy/xerial"
	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kgo"
)

var codecs = []Codec{CodecNone, CodecGzip, CodecSnappy, CodecLZ4, CodecZstd}

// testInputs are sizes around the codecs' block boundaries (32 KiB xerial,
// 64 KiB lz4, 128 KiB zstd blocks), compressible and not.
func testInputs() map[string][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	text := func(n int) []byte {
		b := make([]byte, 0, n)
		for len(b) < n {
			b = append(b, "fjord kafka batch record offset "[rng.IntN(6)*5:][:5]...)
		}
		return b[:n]
	}
	return map[string][]byte{
		"empty":         {},
		"one":           {'x'},
		"text-100":      text(100),
		"text-32k":      text(32 << 10),
		"text-32k+1":    text(32<<10 + 1),
		"text-64k+7":    text(64<<10 + 7),
		"text-300k":     text(300 << 10),
		"random-70k":    random(70 << 10),
		"zeros-1m":      make([]byte, 1<<20),
		"random-1m+123": random(1<<20 + 123),
	}
}

func TestCompressRoundTrip(t *testing.T) {
	for name, in := range testInputs() {
		for _, c := range codecs {
			t.Run(c.String()+"/"+name, func(t *testing.T) {
				// Appending to a non-empty dst must keep its prefix.
				prefix := []byte("prefix")
				comp, err := Compress(c, bytes.Clone(prefix), in)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.HasPrefix(comp, prefix) {
					t.Fatal("compress clobbered dst")
				}
				out, err := Decompress(c, bytes.Clone(prefix), comp[len(prefix):], len(in)+1)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(out[:len(prefix)], prefix) || !bytes.Equal(out[len(prefix):], in) {
					t.Fatalf("round trip: got %d bytes, want %d", len(out)-len(prefix), len(in))
				}
				// The limit is inclusive: exactly len(in) passes. (A
				// limit of 0 means the default, so start at 2 bytes.)
				if len(in) > 1 {
					if _, err := Decompress(c, nil, comp[len(prefix):], len(in)); err != nil {
						t.Fatalf("limit == size: %v", err)
					}
					_, err := Decompress(c, nil, comp[len(prefix):], len(in)-1)
					if !errors.Is(err, ErrTooLarge) {
						t.Fatalf("limit size-1: got %v, want ErrTooLarge", err)
					}
				}
			})
		}
	}
}

// TestCrossImplementation checks our output against decoders we did not
// write, and theirs against ours: franz-go's compressor and decompressor
// (its own framing code over the same libraries) and klauspost's xerial
// package (a fork of eapache/go-xerial-snappy, what sarama uses).
func TestCrossImplementation(t *testing.T) {
	kdec := kgo.DefaultDecompressor()
	for name, in := range testInputs() {
		if len(in) == 0 {
			continue // kgo's compressor is never asked to compress nothing
		}
		for _, c := range codecs[1:] {
			ours, err := Compress(c, nil, in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := kdec.Decompress(ours, kgo.CompressionCodecType(c))
			if err != nil || !bytes.Equal(got, in) {
				t.Fatalf("%s/%s: franz-go cannot read ours: %v", c, name, err)
			}
			kcomp, err := kgo.DefaultCompressor(map[Codec]kgo.CompressionCodec{
				CodecGzip: kgo.GzipCompression(), CodecSnappy: kgo.SnappyCompression(),
				CodecLZ4: kgo.Lz4Compression(), CodecZstd: kgo.ZstdCompression(),
			}[c])
			if err != nil {
				t.Fatal(err)
			}
			theirs, used := kcomp.Compress(new(bytes.Buffer), in)
			if used != kgo.CompressionCodecType(c) {
				t.Fatalf("franz-go used codec %d", used)
			}
			got, err = Decompress(c, nil, theirs, 0)
			if err != nil || !bytes.Equal(got, in) {
				t.Fatalf("%s/%s: cannot read franz-go's: %v", c, name, err)
			}
		}
		ours, _ := Compress(CodecSnappy, nil, in)
		got, err := xerial.Decode(ours)
		if err != nil || !bytes.Equal(got, in) {
			t.Fatalf("snappy/%s: xerial package cannot read ours: %v", name, err)
		}
		got, err = Decompress(CodecSnappy, nil, xerial.Encode(nil, in), 0)
		if err != nil || !bytes.Equal(got, in) {
			t.Fatalf("snappy/%s: cannot read xerial package's: %v", name, err)
		}
	}
}

// TestSnappyFraming pins the exact framing Java's SnappyInputStream
// expects, and the inputs it accepts besides: raw blocks (librdkafka) and
// streams concatenated after a block.
func TestSnappyFraming(t *testing.T) {
	in := bytes.Repeat([]byte("0123456789abcdef"), 5000) // 80000 bytes: 3 blocks
	out, err := Compress(CodecSnappy, nil, in)
	if err != nil {
		t.Fatal(err)
	}
	wantHeader := []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1}
	if !bytes.Equal(out[:16], wantHeader) {
		t.Fatalf("header %x, want %x", out[:16], wantHeader)
	}
	var sizes []int
	for p := out[16:]; len(p) > 0; {
		n := int(binary.BigEndian.Uint32(p))
		l, err := s2.DecodedLen(p[4 : 4+n])
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, l)
		p = p[4+n:]
	}
	if len(sizes) != 3 || sizes[0] != 32768 || sizes[1] != 32768 || sizes[2] != 80000-65536 {
		t.Fatalf("block sizes %v, want 32 KiB blocks", sizes)
	}

	raw := s2.EncodeSnappy(nil, in)
	if got, err := Decompress(CodecSnappy, nil, raw, 0); err != nil || !bytes.Equal(got, in) {
		t.Fatalf("raw block: %v", err)
	}
	cat := append(bytes.Clone(out), out...)
	if got, err := Decompress(CodecSnappy, nil, cat, 0); err != nil || !bytes.Equal(got, append(bytes.Clone(in), in...)) {
		t.Fatalf("concatenated streams: %v", err)
	}
	header := out[:16]
	if got, err := Decompress(CodecSnappy, []byte{}, header, 0); err != nil || len(got) != 0 {
		t.Fatalf("header only: %q, %v", got, err)
	}
	for _, bad := range [][]byte{
		append(bytes.Clone(header), 0, 0, 1),           // short block length
		append(bytes.Clone(header), 0, 0, 0, 9, 1),     // block past the end
		append(bytes.Clone(header), 0x82, 'S', 'N', 0), // truncated second header
		append(bytes.Clone(header), 0, 0, 0, 2, 0xff, 0xff),
	} {
		if _, err := Decompress(CodecSnappy, nil, bad, 0); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%x: got %v, want ErrCorrupt", bad, err)
		}
	}
}

// TestLZ4Frame pins the frame descriptor Kafka's Lz4BlockOutputStream
// writes and requires: version 1, independent blocks, no checksums, 64 KiB
// blocks (FLG 0x60, BD 0x40).
func TestLZ4Frame(t *testing.T) {
	out, err := Compress(CodecLZ4, nil, bytes.Repeat([]byte("kafka"), 40000))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out[:6], []byte{0x04, 0x22, 0x4d, 0x18, 0x60, 0x40}) {
		t.Fatalf("frame header %x", out[:7])
	}
}

// TestBombs feeds each codec input that declares or expands to far more
// than the limit, and checks the refusal comes before the memory is spent.
func TestBombs(t *testing.T) {
	const big = 32 << 20
	zeros := make([]byte, big)
	for _, c := range codecs[1:] {
		comp, err := Compress(c, nil, zeros)
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtimeMem
		before.read()
		_, err = Decompress(c, nil, comp, 1<<20)
		after.read()
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("%s: %d bytes compressed: got %v, want ErrTooLarge", c, len(comp), err)
		}
		// zstd decoders are bounded at 8 MiB at least; the rest at the
		// limit, plus the codec's own block buffers.
		grew := after.alloc - before.alloc
		if grew > 24<<20 {
			t.Fatalf("%s: allocated %d MiB refusing a bomb", c, grew>>20)
		}
		t.Logf("%s: %d MiB bomb in %d bytes refused after allocating %d KiB", c, big>>20, len(comp), grew>>10)
	}
	// A zstd frame without a declared content size, as Java's streaming
	// ZstdOutputStream writes, is bounded while decoding.
	var stream bytes.Buffer
	zw, err := zstd.NewWriter(&stream)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(zeros); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	var before, after runtimeMem
	before.read()
	_, err = Decompress(CodecZstd, nil, stream.Bytes(), 1<<20)
	after.read()
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("zstd stream bomb: %v", err)
	}
	if grew := after.alloc - before.alloc; grew > 24<<20 {
		t.Fatalf("zstd stream bomb: allocated %d MiB", grew>>20)
	} else {
		t.Logf("zstd frame without content size: refused after allocating %d KiB", grew>>10)
	}

	// A raw snappy block declaring 4 GiB must not be allocated.
	huge := binary.AppendUvarint(nil, 1<<32-1)
	if _, err := Decompress(CodecSnappy, nil, huge, 1<<20); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("snappy declared 4 GiB: %v", err)
	}
}

// TestConcurrentCodecs exercises the pools from many goroutines (run with
// -race).
func TestConcurrentCodecs(t *testing.T) {
	in := testInputs()["text-300k"]
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 {
				c := codecs[(g+i)%len(codecs)]
				comp, err := Compress(c, nil, in)
				if err == nil {
					var out []byte
					out, err = Decompress(c, nil, comp, 2<<20)
					if err == nil && !bytes.Equal(out, in) {
						err = errors.New(c.String() + ": mismatch")
					}
				}
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestUnknownCodec(t *testing.T) {
	if _, err := Compress(Codec(5), nil, []byte("x")); err == nil {
		t.Fatal("compress with codec 5 succeeded")
	}
	if _, err := Decompress(Codec(7), nil, []byte("x"), 0); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("decompress codec 7: %v", err)
	}
}
