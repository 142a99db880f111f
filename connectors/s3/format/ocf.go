package format

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zstd"
)

// Avro object container files (the Avro spec's "Object Container
// Files"), framed here around goavro's binary codec so that the header
// carries the full writer schema (connect.* properties, logical types)
// while values are encoded with a codec built from its plain form.

var ocfMagic = []byte{'O', 'b', 'j', 1}

// ocfSyncInterval is Java's DataFileConstants.DEFAULT_SYNC_INTERVAL: a
// block is written once its encoded records reach it.
const ocfSyncInterval = 64000

// maxBlockBytes bounds one block when reading, compressed or not.
const maxBlockBytes = 256 << 20

// ocfWriter writes one container file.
type ocfWriter struct {
	w     io.Writer
	codec string
	sync  [16]byte
	block []byte // the encoded records of the current block
	count int64
	out   []byte // the framed block
	fw    *flate.Writer
	zbuf  bytes.Buffer
	z     []byte
}

func appendLong(b []byte, n int64) []byte { return binary.AppendVarint(b, n) }

func appendAvroBytes(b, v []byte) []byte {
	b = appendLong(b, int64(len(v)))
	return append(b, v...)
}

// newOCFWriter writes the header: magic, metadata (avro.schema and
// avro.codec, as Java's DataFileWriter writes them) and a random sync
// marker.
func newOCFWriter(w io.Writer, schema, codec string) (*ocfWriter, error) {
	o := &ocfWriter{w: w, codec: codec}
	if _, err := rand.Read(o.sync[:]); err != nil {
		return nil, err
	}
	h := append([]byte(nil), ocfMagic...)
	h = appendLong(h, 2)
	h = appendAvroBytes(h, []byte("avro.schema"))
	h = appendAvroBytes(h, []byte(schema))
	h = appendAvroBytes(h, []byte("avro.codec"))
	h = appendAvroBytes(h, []byte(codec))
	h = appendLong(h, 0)
	h = append(h, o.sync[:]...)
	if _, err := w.Write(h); err != nil {
		return nil, err
	}
	return o, nil
}

// added counts one record appended to o.block and writes the block once
// it is big enough.
func (o *ocfWriter) added() error {
	o.count++
	if len(o.block) >= ocfSyncInterval {
		return o.flush()
	}
	return nil
}

func (o *ocfWriter) flush() error {
	if o.count == 0 {
		return nil
	}
	data := o.block
	switch o.codec {
	case "deflate":
		o.zbuf.Reset()
		if o.fw == nil {
			fw, err := flate.NewWriter(&o.zbuf, flate.DefaultCompression)
			if err != nil {
				return err
			}
			o.fw = fw
		} else {
			o.fw.Reset(&o.zbuf)
		}
		if _, err := o.fw.Write(data); err != nil {
			return err
		}
		if err := o.fw.Close(); err != nil {
			return err
		}
		data = o.zbuf.Bytes()
	case "snappy":
		// Avro's snappy codec: the compressed block, then the CRC32 of
		// the uncompressed data, big-endian.
		o.z = snappy.Encode(o.z[:cap(o.z)], data)
		data = binary.BigEndian.AppendUint32(o.z, crc32.ChecksumIEEE(o.block))
		o.z = data[:0]
	}
	out := appendLong(o.out[:0], o.count)
	out = appendLong(out, int64(len(data)))
	out = append(out, data...)
	out = append(out, o.sync[:]...)
	o.out = out
	o.block, o.count = o.block[:0], 0
	_, err := o.w.Write(out)
	return err
}

// ocfReader reads a container file's header and then its blocks.
type ocfReader struct {
	r      *bufio.Reader
	left   int64 // bytes of the object not read yet
	schema string
	codec  string
	sync   [16]byte
	raw    []byte
	zr     io.ReadCloser
}

var errOCFTruncated = errors.New("truncated Avro container file")

func (o *ocfReader) readByte() (byte, error) {
	if o.left <= 0 {
		return 0, errOCFTruncated
	}
	c, err := o.r.ReadByte()
	if err != nil {
		return 0, errOCFTruncated
	}
	o.left--
	return c, nil
}

func (o *ocfReader) readLong() (int64, error) {
	var u uint64
	for shift := uint(0); shift < 70; shift += 7 {
		c, err := o.readByte()
		if err != nil {
			return 0, err
		}
		u |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return int64(u>>1) ^ -int64(u&1), nil
		}
	}
	return 0, errors.New("Avro varint longer than 10 bytes")
}

func (o *ocfReader) readFull(n int64) ([]byte, error) {
	if n < 0 || n > o.left || n > maxBlockBytes {
		return nil, fmt.Errorf("Avro container length %d exceeds the %d bytes left", n, o.left)
	}
	if int64(cap(o.raw)) < n {
		o.raw = make([]byte, n)
	}
	b := o.raw[:n]
	if _, err := io.ReadFull(o.r, b); err != nil {
		return nil, errOCFTruncated
	}
	o.left -= n
	return b, nil
}

func newOCFReader(r io.ReaderAt, size int64) (*ocfReader, error) {
	o := &ocfReader{r: bufio.NewReaderSize(io.NewSectionReader(r, 0, size), 64<<10), left: size}
	magic, err := o.readFull(4)
	if err != nil || !bytes.Equal(magic, ocfMagic) {
		return nil, errors.New("not an Avro container file (no Obj\\x01 magic)")
	}
	meta := map[string]string{}
	for {
		count, err := o.readLong()
		if err != nil {
			return nil, err
		}
		if count == 0 {
			break
		}
		if count < 0 {
			count = -count
			if _, err := o.readLong(); err != nil {
				return nil, err
			}
		}
		if count < 0 || count > o.left {
			return nil, fmt.Errorf("Avro container metadata of %d entries exceeds the file", count)
		}
		for range count {
			kl, err := o.readLong()
			if err != nil {
				return nil, err
			}
			k, err := o.readFull(kl)
			if err != nil {
				return nil, err
			}
			key := string(k)
			vl, err := o.readLong()
			if err != nil {
				return nil, err
			}
			v, err := o.readFull(vl)
			if err != nil {
				return nil, err
			}
			meta[key] = string(v)
		}
	}
	sync, err := o.readFull(16)
	if err != nil {
		return nil, err
	}
	copy(o.sync[:], sync)
	o.schema = meta["avro.schema"]
	if o.schema == "" {
		return nil, errors.New("Avro container file without avro.schema")
	}
	o.codec = meta["avro.codec"]
	switch o.codec {
	case "":
		o.codec = "null"
	case "null", "deflate", "snappy", "bzip2", "zstandard":
	default:
		return nil, fmt.Errorf("Avro codec %q is not supported (null, deflate, snappy, bzip2, zstandard)", o.codec)
	}
	return o, nil
}

// nextBlock returns the next block's record count and decompressed
// data, io.EOF at the end of the file.
func (o *ocfReader) nextBlock() (int64, []byte, error) {
	if o.left == 0 {
		return 0, nil, io.EOF
	}
	count, err := o.readLong()
	if err != nil {
		return 0, nil, err
	}
	n, err := o.readLong()
	if err != nil {
		return 0, nil, err
	}
	data, err := o.readFull(n)
	if err != nil {
		return 0, nil, err
	}
	if data, err = o.decompress(data); err != nil {
		return 0, nil, err
	}
	sync, err := o.readFull(16)
	if err != nil {
		return 0, nil, err
	}
	if !bytes.Equal(sync, o.sync[:]) {
		return 0, nil, errors.New("Avro container block does not end with the file's sync marker")
	}
	if count < 0 || count > int64(len(data))+1<<16 {
		return 0, nil, fmt.Errorf("Avro container block of %d records in %d bytes", count, len(data))
	}
	return count, data, nil
}

func (o *ocfReader) decompress(data []byte) ([]byte, error) {
	var r io.Reader
	switch o.codec {
	case "null":
		return bytes.Clone(data), nil
	case "snappy":
		if len(data) < 4 {
			return nil, errors.New("snappy block without its checksum")
		}
		body, sum := data[:len(data)-4], binary.BigEndian.Uint32(data[len(data)-4:])
		if n, err := snappy.DecodedLen(body); err != nil || n > maxBlockBytes {
			return nil, fmt.Errorf("snappy block: %v", err)
		}
		out, err := snappy.Decode(nil, body)
		if err != nil {
			return nil, fmt.Errorf("snappy block: %w", err)
		}
		if crc32.ChecksumIEEE(out) != sum {
			return nil, errors.New("snappy block checksum mismatch")
		}
		return out, nil
	case "deflate":
		r = flate.NewReader(bytes.NewReader(data))
	case "bzip2":
		r = bzip2.NewReader(bytes.NewReader(data))
	case "zstandard":
		d, err := zstd.NewReader(bytes.NewReader(data), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxBlockBytes))
		if err != nil {
			return nil, err
		}
		defer d.Close()
		r = d
	}
	out, err := io.ReadAll(io.LimitReader(r, maxBlockBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s block: %w", o.codec, err)
	}
	if len(out) > maxBlockBytes {
		return nil, fmt.Errorf("%s block decompresses to more than %d bytes", o.codec, maxBlockBytes)
	}
	return out, nil
}
