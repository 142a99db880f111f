package bench

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// pgoutputCounter walks what `pg_recvlogical -f -` writes for a pgoutput
// slot (protocol version 1): each logical replication message's bytes
// followed by a newline. The messages are binary and may themselves hold
// newlines, so the stream is split by decoding each message's layout
// (PostgreSQL's "Logical Replication Message Formats"), not by lines. It
// counts row changes, so that the benchmark knows the moment
// pg_recvlogical has received the last row of a load.
type pgoutputCounter struct {
	r *bufio.Reader
	// Counts by message type: 'I' inserts, 'U' updates, 'D' deletes,
	// 'B' begins, 'C' commits, 'R' relations, 'T' truncates.
	counts [256]int64
}

func newPgoutputCounter(r io.Reader) *pgoutputCounter {
	return &pgoutputCounter{r: bufio.NewReaderSize(r, 1<<20)}
}

// next reads one message and its trailing newline and returns its type;
// io.EOF at a clean end of stream.
func (c *pgoutputCounter) next() (byte, error) {
	typ, err := c.r.ReadByte()
	if err != nil {
		return 0, err // io.EOF between messages is the clean end
	}
	if err := c.body(typ); err != nil {
		return typ, fmt.Errorf("pgoutput message %q: %w", typ, noEOF(err))
	}
	nl, err := c.r.ReadByte()
	if err != nil {
		return typ, fmt.Errorf("pgoutput message %q: %w", typ, noEOF(err))
	}
	if nl != '\n' {
		return typ, fmt.Errorf("pgoutput message %q: followed by %#x, not pg_recvlogical's newline", typ, nl)
	}
	c.counts[typ]++
	return typ, nil
}

// noEOF turns an end of stream inside a message into an error of its own.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

func (c *pgoutputCounter) body(typ byte) error {
	switch typ {
	case 'B': // final LSN, commit time, xid
		return c.skip(8 + 8 + 4)
	case 'C': // flags, commit LSN, end LSN, commit time
		return c.skip(1 + 8 + 8 + 8)
	case 'O': // origin LSN, name
		if err := c.skip(8); err != nil {
			return err
		}
		return c.cstring()
	case 'Y': // type oid, namespace, name
		if err := c.skip(4); err != nil {
			return err
		}
		if err := c.cstring(); err != nil {
			return err
		}
		return c.cstring()
	case 'R':
		return c.relation()
	case 'I': // relation oid, 'N', new tuple
		if err := c.skip(4); err != nil {
			return err
		}
		return c.taggedTuple("N")
	case 'U': // relation oid, optional 'K' or 'O' old tuple, 'N' new tuple
		if err := c.skip(4); err != nil {
			return err
		}
		tag, err := c.r.ReadByte()
		if err != nil {
			return err
		}
		if tag == 'K' || tag == 'O' {
			if err := c.tuple(); err != nil {
				return err
			}
			if tag, err = c.r.ReadByte(); err != nil {
				return err
			}
		}
		if tag != 'N' {
			return fmt.Errorf("update has tuple tag %q, want 'N'", tag)
		}
		return c.tuple()
	case 'D': // relation oid, 'K' or 'O' old tuple
		if err := c.skip(4); err != nil {
			return err
		}
		return c.taggedTuple("KO")
	case 'T': // relation count, options, relation oids
		n, err := c.uint32()
		if err != nil {
			return err
		}
		return c.skip(1 + 4*int(n))
	case 'M': // flags, LSN, prefix, content length, content
		if err := c.skip(1 + 8); err != nil {
			return err
		}
		if err := c.cstring(); err != nil {
			return err
		}
		n, err := c.uint32()
		if err != nil {
			return err
		}
		return c.skip(int(n))
	}
	return fmt.Errorf("unknown message type (protocol version 1 has B C O Y R I U D T M)")
}

func (c *pgoutputCounter) relation() error {
	if err := c.skip(4); err != nil { // oid
		return err
	}
	if err := c.cstring(); err != nil { // namespace
		return err
	}
	if err := c.cstring(); err != nil { // name
		return err
	}
	if err := c.skip(1); err != nil { // replica identity
		return err
	}
	n, err := c.uint16()
	if err != nil {
		return err
	}
	for range n {
		if err := c.skip(1); err != nil { // flags
			return err
		}
		if err := c.cstring(); err != nil { // column name
			return err
		}
		if err := c.skip(4 + 4); err != nil { // type oid, type modifier
			return err
		}
	}
	return nil
}

func (c *pgoutputCounter) taggedTuple(tags string) error {
	tag, err := c.r.ReadByte()
	if err != nil {
		return err
	}
	for i := range len(tags) {
		if tag == tags[i] {
			return c.tuple()
		}
	}
	return fmt.Errorf("tuple tag %q, want one of %q", tag, tags)
}

// tuple skips TupleData: a column count, then per column 'n' (null), 'u'
// (unchanged TOAST), or 't'/'b' with a length and the value.
func (c *pgoutputCounter) tuple() error {
	n, err := c.uint16()
	if err != nil {
		return err
	}
	for range n {
		kind, err := c.r.ReadByte()
		if err != nil {
			return err
		}
		switch kind {
		case 'n', 'u':
		case 't', 'b':
			size, err := c.uint32()
			if err != nil {
				return err
			}
			if err := c.skip(int(size)); err != nil {
				return err
			}
		default:
			return fmt.Errorf("column kind %q", kind)
		}
	}
	return nil
}

func (c *pgoutputCounter) skip(n int) error {
	if n < 0 {
		return errors.New("negative length")
	}
	_, err := c.r.Discard(n)
	return err
}

func (c *pgoutputCounter) cstring() error {
	for {
		_, err := c.r.ReadSlice(0)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}

func (c *pgoutputCounter) uint16() (uint16, error) {
	var b [2]byte
	if _, err := io.ReadFull(c.r, b[:]); err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint16(b[:]), nil
}

func (c *pgoutputCounter) uint32() (uint32, error) {
	var b [4]byte
	if _, err := io.ReadFull(c.r, b[:]); err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint32(b[:]), nil
}
