package controller

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/fjordhq/fjord/broker/metadata"
)

// journal is the single-node controller's durable metadata log: one line
// per committed batch of records,
//
//	<crc32c of json, 8 hex digits> <json array of records>\n
//
// appended and fsynced before the change is published. A torn or corrupt
// tail (a crash mid-write) is truncated on open. When the journal grows,
// it is rewritten as one batch that rebuilds the current image (a
// snapshot), via a temp file and an atomic rename.
type journal struct {
	path    string
	f       *os.File
	entries int   // batches in the file
	next    int64 // offset of the next record
}

const journalName = "metadata.journal"

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// openJournal opens dir's journal and calls apply for each intact batch.
func openJournal(dir string, apply func(first int64, recs []metadata.Record) error) (*journal, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create metadata dir: %w", err)
	}
	j := &journal{path: filepath.Join(dir, journalName)}
	f, err := os.OpenFile(j.path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open metadata journal: %w", err)
	}
	j.f = f
	r := bufio.NewReader(f)
	var good int64
	for {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			break
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("read metadata journal: %w", err)
		}
		recs, ok := decodeEntry(line)
		if !ok {
			break
		}
		if err := apply(j.next, recs); err != nil {
			f.Close()
			return nil, fmt.Errorf("replay metadata journal %s: %w", j.path, err)
		}
		j.next += int64(len(recs))
		j.entries++
		good += int64(len(line))
	}
	if st, err := f.Stat(); err == nil && st.Size() > good {
		// A crash during an append leaves a partial line: drop it. It was
		// never acknowledged, since acknowledgement follows the fsync.
		if err := f.Truncate(good); err != nil {
			f.Close()
			return nil, fmt.Errorf("truncate torn metadata journal: %w", err)
		}
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

func decodeEntry(line []byte) ([]metadata.Record, bool) {
	line = bytes.TrimSuffix(line, []byte("\n"))
	if len(line) < 10 || line[8] != ' ' {
		return nil, false
	}
	var want [4]byte
	if _, err := hex.Decode(want[:], line[:8]); err != nil {
		return nil, false
	}
	body := line[9:]
	got := crc32.Checksum(body, crcTable)
	if got != uint32(want[0])<<24|uint32(want[1])<<16|uint32(want[2])<<8|uint32(want[3]) {
		return nil, false
	}
	var recs []metadata.Record
	if err := json.Unmarshal(body, &recs); err != nil {
		return nil, false
	}
	return recs, true
}

func encodeEntry(recs []metadata.Record) ([]byte, error) {
	body, err := json.Marshal(recs)
	if err != nil {
		return nil, err
	}
	line := make([]byte, 0, len(body)+10)
	line = fmt.Appendf(line, "%08x ", crc32.Checksum(body, crcTable))
	line = append(line, body...)
	return append(line, '\n'), nil
}

// append durably writes recs and returns the offset of the first.
func (j *journal) append(recs []metadata.Record) (int64, error) {
	line, err := encodeEntry(recs)
	if err != nil {
		return 0, err
	}
	if _, err := j.f.Write(line); err != nil {
		return 0, fmt.Errorf("write metadata journal: %w", err)
	}
	if err := j.f.Sync(); err != nil {
		return 0, fmt.Errorf("sync metadata journal: %w", err)
	}
	first := j.next
	j.next += int64(len(recs))
	j.entries++
	return first, nil
}

// compact replaces the journal with one entry holding recs, which must
// rebuild the current image. Offsets keep counting from where they were.
func (j *journal) compact(recs []metadata.Record) error {
	line, err := encodeEntry(recs)
	if err != nil {
		return err
	}
	tmp := j.path + ".tmp"
	if err := writeFileSync(tmp, line); err != nil {
		return err
	}
	if err := os.Rename(tmp, j.path); err != nil {
		return fmt.Errorf("replace metadata journal: %w", err)
	}
	syncDir(filepath.Dir(j.path))
	f, err := os.OpenFile(j.path, os.O_RDWR|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("reopen metadata journal: %w", err)
	}
	j.f.Close()
	j.f = f
	j.entries = 1
	return nil
}

func (j *journal) close() error { return j.f.Close() }

func writeFileSync(path string, data []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
