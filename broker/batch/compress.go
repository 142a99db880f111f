package batch

// Compression codecs, matched to what Kafka's Java client, librdkafka and
// franz-go write and read.
//
//   - gzip: an RFC 1952 stream (klauspost/compress/gzip, default level);
//     concatenated members are read, as Java's GZIPInputStream does.
//   - snappy: written in the xerial framing of snappy-java's
//     SnappyOutputStream, which is what the Java producer and broker write:
//     the 8-byte magic "\x82SNAPPY\x00", version 1, minimum compatible
//     version 1 (both big-endian int32), then blocks of at most 32 KiB, each a
//     big-endian int32 length and a raw snappy block. Java's
//     SnappyInputStream and librdkafka read it (interop_test.go,
//     client_test.go), as do franz-go and sarama. On input we accept that framing
//     (including streams concatenated after a block, as SnappyInputStream
//     does) and a bare raw snappy block, which is what librdkafka writes and
//     what SnappyInputStream falls back to when the magic is absent.
//   - lz4: the LZ4 frame format as Kafka's Lz4BlockOutputStream writes it:
//     64 KiB independent blocks, no block or content checksum, fast level.
//     Any valid frame is read (pierrec/lz4), including 4 MiB blocks and
//     content checksums as franz-go writes them.
//   - zstd: one frame per batch from klauspost/compress/zstd's EncodeAll at
//     the default level (Kafka's default is zstd level 3); it records the
//     content size, which lets librdkafka size its output exactly.
//
// Encoders and decoders are pooled: creating a zstd encoder or decoder
// allocates megabytes, and gzip/lz4 state tens of kilobytes.
//
// Every decompression is bounded by a maxSize: the bytes a batch may
// decompress to. Snappy's and zstd's declared lengths are checked before
// anything is allocated; gzip and lz4 stream through a reader that stops
// one byte past the bound. A bomb costs at most maxSize (rounded up to a
// power of two for zstd) of memory before it is refused with ErrTooLarge.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// DefaultMaxSize bounds decompressed records when a caller passes no limit
// (maxSize <= 0, or a zero Decoder.MaxSize). The broker passes its own,
// derived from message.max.bytes.
const DefaultMaxSize = 128 << 20

// ErrTooLarge is returned when records would decompress past the caller's
// limit. It is not ErrCorrupt: the data may be valid, only too big for us.
var ErrTooLarge = errors.New("decompressed records exceed the size limit")

// Compress appends src compressed with codec to dst. CodecNone appends src
// unchanged.
func Compress(codec Codec, dst, src []byte) ([]byte, error) {
	switch codec {
	case CodecNone:
		return append(dst, src...), nil
	case CodecGzip:
		w := gzipWriters.Get().(*gzipWriter)
		defer gzipWriters.Put(w)
		return w.compress(dst, src)
	case CodecSnappy:
		return appendXerial(dst, src), nil
	case CodecLZ4:
		w := lz4Writers.Get().(*lz4Writer)
		defer lz4Writers.Put(w)
		return w.compress(dst, src)
	case CodecZstd:
		e := zstdEncoders.Get().(*zstd.Encoder)
		defer zstdEncoders.Put(e)
		return e.EncodeAll(src, dst), nil
	}
	return dst, fmt.Errorf("compress: unknown codec %s", codec)
}

// Decompress appends src decompressed with codec to dst. At most maxSize
// bytes are appended (DefaultMaxSize if maxSize <= 0); more is ErrTooLarge.
// Malformed input is an error wrapping ErrCorrupt.
func Decompress(codec Codec, dst, src []byte, maxSize int) ([]byte, error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxSize
	}
	out, err := decompress(codec, dst, src, maxSize)
	if err != nil {
		if errors.Is(err, ErrTooLarge) {
			return dst, fmt.Errorf("decompress %s: %w (limit %d bytes)", codec, err, maxSize)
		}
		return dst, fmt.Errorf("%w: decompress %s: %w", ErrCorrupt, codec, err)
	}
	return out, nil
}

func decompress(codec Codec, dst, src []byte, maxSize int) ([]byte, error) {
	switch codec {
	case CodecNone:
		if len(src) > maxSize {
			return dst, ErrTooLarge
		}
		return append(dst, src...), nil
	case CodecGzip:
		r := gzipReaders.Get().(*gzipReader)
		defer gzipReaders.Put(r)
		return r.decompress(dst, src, maxSize)
	case CodecSnappy:
		return decodeSnappy(dst, src, maxSize)
	case CodecLZ4:
		r := lz4Readers.Get().(*lz4Reader)
		defer lz4Readers.Put(r)
		return r.decompress(dst, src, maxSize)
	case CodecZstd:
		return decodeZstd(dst, src, maxSize)
	}
	return dst, fmt.Errorf("unknown codec %d", int8(codec))
}

// appender is an io.Writer that appends to a slice, so the stream encoders
// can write straight into the caller's dst.
type appender struct{ b []byte }

func (a *appender) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

// readBounded appends everything r yields to dst, failing with ErrTooLarge
// once more than maxSize bytes came out. guess sizes the first growth.
func readBounded(dst []byte, r io.Reader, maxSize, guess int) ([]byte, error) {
	start := len(dst)
	dst = slices.Grow(dst, min(guess, maxSize+1))
	for {
		if len(dst) == cap(dst) {
			n := len(dst) - start
			if n > maxSize {
				return dst, ErrTooLarge
			}
			// Double, but never past one byte over the limit: that byte
			// is how we tell "exactly maxSize" from "more".
			dst = slices.Grow(dst, min(max(n, 4096), maxSize+1-n))
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if len(dst)-start > maxSize {
			return dst, ErrTooLarge
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

// gzip

type gzipWriter struct {
	w   *gzip.Writer
	out appender
}

var gzipWriters = sync.Pool{New: func() any {
	gw := new(gzipWriter)
	gw.w = gzip.NewWriter(&gw.out)
	return gw
}}

func (gw *gzipWriter) compress(dst, src []byte) ([]byte, error) {
	gw.out.b = dst
	gw.w.Reset(&gw.out)
	_, err := gw.w.Write(src)
	if err == nil {
		err = gw.w.Close()
	}
	out := gw.out.b
	gw.out.b = nil // do not keep the caller's buffer alive in the pool
	if err != nil {
		return dst, fmt.Errorf("compress gzip: %w", err)
	}
	return out, nil
}

type gzipReader struct {
	r   gzip.Reader
	src bytes.Reader
}

var gzipReaders = sync.Pool{New: func() any { return new(gzipReader) }}

func (gr *gzipReader) decompress(dst, src []byte, maxSize int) ([]byte, error) {
	gr.src.Reset(src)
	defer gr.src.Reset(nil)
	if err := gr.r.Reset(&gr.src); err != nil {
		return dst, err
	}
	return readBounded(dst, &gr.r, maxSize, 4*len(src)+512)
}

// lz4

type lz4Writer struct {
	w   *lz4.Writer
	out appender
}

var lz4Writers = sync.Pool{New: func() any {
	lw := new(lz4Writer)
	lw.w = lz4.NewWriter(&lw.out)
	// Kafka's Lz4BlockOutputStream: 64 KiB blocks, no checksums. The
	// small block also keeps each pooled writer's buffers small.
	if err := lw.w.Apply(lz4.BlockSizeOption(lz4.Block64Kb), lz4.ChecksumOption(false), lz4.ConcurrencyOption(1)); err != nil {
		panic(fmt.Sprintf("lz4 writer options: %v", err)) // constant options: cannot fail
	}
	return lw
}}

func (lw *lz4Writer) compress(dst, src []byte) ([]byte, error) {
	lw.out.b = dst
	lw.w.Reset(&lw.out)
	_, err := lw.w.Write(src)
	if err == nil {
		err = lw.w.Close()
	}
	out := lw.out.b
	lw.out.b = nil
	if err != nil {
		return dst, fmt.Errorf("compress lz4: %w", err)
	}
	return out, nil
}

type lz4Reader struct {
	r   *lz4.Reader
	src bytes.Reader
}

var lz4Readers = sync.Pool{New: func() any {
	lr := new(lz4Reader)
	lr.r = lz4.NewReader(nil)
	return lr
}}

func (lr *lz4Reader) decompress(dst, src []byte, maxSize int) ([]byte, error) {
	lr.src.Reset(src)
	lr.r.Reset(&lr.src)
	out, err := readBounded(dst, lr.r, maxSize, 4*len(src)+512)
	lr.r.Reset(nil) // return the block buffer to lz4's pool
	lr.src.Reset(nil)
	return out, err
}

// zstd

var zstdEncoders = sync.Pool{New: func() any {
	e, err := zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstd.SpeedDefault),
		zstd.WithEncoderConcurrency(1),
		// A batch is at most a few MiB; a 1 MiB window loses little
		// ratio and keeps each pooled encoder's history small.
		zstd.WithWindowSize(1<<20),
		// An empty input still yields a frame, which every reader
		// accepts; no output at all would not decode.
		zstd.WithZeroFrames(true))
	if err != nil {
		panic(fmt.Sprintf("zstd encoder options: %v", err)) // constant options: cannot fail
	}
	return e
}}

// zstdMinClass is the smallest memory bound a pooled zstd decoder gets.
// klauspost's decoder refuses frames whose window exceeds its memory bound,
// and Java's streaming ZstdOutputStream declares its level's window (2 MiB
// at the default level 3, 8 MiB up to level 18) however small the batch is.
// So tiny bounds would refuse ordinary Java batches.
const zstdMinClass = 8 << 20

// zstdDecoders holds one pool per power-of-two memory bound: the bound is
// fixed when a decoder is created and creating one is expensive, while the
// broker passes only a few distinct limits.
var zstdDecoders [64]sync.Pool

// zstdDecoder is a pooled decoder with the reader it streams from.
type zstdDecoder struct {
	d   *zstd.Decoder
	src bytes.Reader
}

// decodeZstd decodes in one call when the frame declares its content size
// (our encoder and franz-go's do), after checking the size against the
// limit. Frames without it (Java's and librdkafka's streaming encoders, see
// testdata/golden) are streamed through readBounded, so a bomb costs no
// more than the limit: DecodeAll would only notice at the decoder's
// power-of-two bound, after doubling its buffer past it.
func decodeZstd(dst, src []byte, maxSize int) ([]byte, error) {
	if len(src) == 0 {
		return dst, nil // no frames decode to nothing, as in DecodeAll
	}
	var h zstd.Header
	if err := h.Decode(src); err != nil {
		return dst, err
	}
	if h.HasFCS && h.FrameContentSize > uint64(maxSize) {
		return dst, ErrTooLarge
	}
	class := max(maxSize, zstdMinClass)
	shift := bits.Len(uint(class - 1)) // smallest power of two >= class
	pool := &zstdDecoders[shift]
	zd, _ := pool.Get().(*zstdDecoder)
	if zd == nil {
		d, err := zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(1), // synchronous: no goroutines to leak from a pool
			zstd.WithDecoderMaxMemory(uint64(1)<<shift))
		if err != nil {
			return dst, fmt.Errorf("zstd decoder: %w", err)
		}
		zd = &zstdDecoder{d: d}
	}
	defer pool.Put(zd)
	start := len(dst)
	var out []byte
	var err error
	if h.HasFCS && !h.Skippable {
		out, err = zd.d.DecodeAll(src, dst)
	} else {
		zd.src.Reset(src)
		if err = zd.d.Reset(&zd.src); err == nil {
			out, err = readBounded(dst, zd.d, maxSize, 4*len(src)+512)
		}
		zd.d.Reset(nil) // release src
		zd.src.Reset(nil)
	}
	if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) {
		return dst, fmt.Errorf("%w: %w", ErrTooLarge, err)
	}
	if err != nil {
		return dst, err
	}
	if len(out)-start > maxSize {
		return dst, ErrTooLarge
	}
	return out, nil
}

// snappy

var xerialMagic = [8]byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const (
	xerialHeaderSize = 16
	xerialBlockSize  = 32 << 10 // snappy-java's default block size
	// xerialMagicHead is the magic's first 4 bytes read as a block length:
	// SnappyInputStream takes it as the start of a concatenated stream.
	xerialMagicHead = 0x82534e41
)

func appendXerialHeader(dst []byte) []byte {
	dst = append(dst, xerialMagic[:]...)
	dst = binary.BigEndian.AppendUint32(dst, 1) // version
	return binary.BigEndian.AppendUint32(dst, 1)
}

// appendXerial appends src in snappy-java's framing.
func appendXerial(dst, src []byte) []byte {
	dst = appendXerialHeader(dst)
	for len(src) > 0 {
		n := min(len(src), xerialBlockSize)
		need := s2.MaxEncodedLen(n)
		dst = slices.Grow(dst, 4+need)
		at := len(dst)
		block := s2.EncodeSnappy(dst[at+4:at+4+need], src[:n])
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(block)))
		dst = dst[:at+4+len(block)]
		src = src[n:]
	}
	return dst
}

var errXerial = errors.New("malformed xerial snappy framing")

func decodeSnappy(dst, src []byte, maxSize int) ([]byte, error) {
	if len(src) < xerialHeaderSize || !bytes.Equal(src[:8], xerialMagic[:]) {
		return appendSnappyBlock(dst, src, maxSize)
	}
	// First pass: walk the block lengths and sum the declared decoded
	// sizes, so the limit is checked and dst grows once.
	total := 0
	for rest := src[xerialHeaderSize:]; len(rest) > 0; {
		block, next, err := nextXerialBlock(rest)
		if err != nil {
			return dst, err
		}
		rest = next
		if block == nil {
			continue
		}
		n, err := s2.DecodedLen(block)
		if err != nil {
			return dst, err
		}
		if total += n; total > maxSize {
			return dst, ErrTooLarge
		}
	}
	dst = slices.Grow(dst, total)
	for rest := src[xerialHeaderSize:]; len(rest) > 0; {
		block, next, _ := nextXerialBlock(rest)
		rest = next
		if block == nil {
			continue
		}
		var err error
		if dst, err = appendSnappyBlock(dst, block, maxSize); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// nextXerialBlock splits one block off a xerial body. A nil block with no
// error is a concatenated stream's header, skipped.
func nextXerialBlock(p []byte) (block, rest []byte, err error) {
	if len(p) < 4 {
		return nil, nil, errXerial
	}
	n := binary.BigEndian.Uint32(p)
	if n == xerialMagicHead {
		if len(p) < xerialHeaderSize || !bytes.Equal(p[:8], xerialMagic[:]) {
			return nil, nil, errXerial
		}
		return nil, p[xerialHeaderSize:], nil
	}
	if n > uint32(len(p)-4) {
		return nil, nil, errXerial
	}
	return p[4 : 4+n], p[4+n:], nil
}

// appendSnappyBlock appends one raw snappy block, decoding in place.
func appendSnappyBlock(dst, block []byte, maxSize int) ([]byte, error) {
	n, err := s2.DecodedLen(block)
	if err != nil {
		return dst, err
	}
	if n > maxSize {
		return dst, ErrTooLarge
	}
	dst = slices.Grow(dst, n)
	at := len(dst)
	if _, err := s2.Decode(dst[at:at+n], block); err != nil {
		return dst, err
	}
	return dst[:at+n], nil
}
