package file

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeJavaUTF8 checks the decoder never panics, always yields valid
// UTF-8, keeps valid input unchanged and every ASCII byte of any input
// (Java never folds an ASCII byte into a malformed sequence, which is why
// lines can be split before decoding).
func FuzzDecodeJavaUTF8(f *testing.F) {
	for _, s := range []string{"abc", "\xed\xa0\x80", "\xf0\x9f\x98", "\xe0\x80\x80A", "é€😀"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := decodeJavaUTF8(b)
		if !utf8.ValidString(s) {
			t.Fatalf("invalid output %q", s)
		}
		if utf8.Valid(b) && s != string(b) {
			t.Fatalf("valid input changed: %q -> %q", b, s)
		}
		var asciiIn, asciiOut []byte
		for _, c := range b {
			if c < 0x80 {
				asciiIn = append(asciiIn, c)
			}
		}
		for _, c := range []byte(s) {
			if c < 0x80 {
				asciiOut = append(asciiOut, c)
			}
		}
		if !bytes.Equal(asciiIn, asciiOut) {
			t.Fatalf("ASCII bytes changed: %q -> %q", asciiIn, asciiOut)
		}
	})
}

// FuzzSourceLines writes arbitrary bytes in two parts and checks the task
// reads the lines a plain reference splitter finds, with byte positions
// that end each line, whatever the batch size.
func FuzzSourceLines(f *testing.F) {
	f.Add([]byte("a\nb\r\nc\rd"), []byte("\n"), uint8(2))
	f.Add([]byte("x\r"), []byte("\ny\r\r\n"), uint8(0))
	f.Add([]byte("\xff\n\xe2\x82"), []byte("\xac\n"), uint8(1))
	f.Fuzz(func(t *testing.T, first, second []byte, batch uint8) {
		name := filepath.Join(t.TempDir(), "in")
		if err := os.WriteFile(name, first, 0o644); err != nil {
			t.Fatal(err)
		}
		task := &SourceTask{}
		task.Initialize(&taskContext{offsets: memOffsets{}})
		if err := task.Start(context.Background(), map[string]string{"file": name, "topic": "t", "batch.size": string(rune('0' + batch%10))}); err != nil {
			t.Fatal(err)
		}
		defer task.Stop()
		var got []string
		var pos []int64
		// A done context makes Poll skip its idle wait.
		done, cancel := context.WithCancel(context.Background())
		cancel()
		drain := func() {
			for range 1000 {
				recs, err := task.Poll(done)
				if err != nil {
					t.Fatal(err)
				}
				if len(recs) == 0 {
					return
				}
				for _, r := range recs {
					got = append(got, r.Value.(string))
					pos = append(pos, r.SourceOffset[PositionField].(int64))
				}
			}
		}
		drain()
		fh, _ := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
		fh.Write(second)
		fh.Close()
		drain()

		all := append(append([]byte{}, first...), second...)
		wantLines, wantPos := referenceLines(all)
		if len(got) != len(wantLines) {
			t.Fatalf("%q: got %d lines %q, want %q", all, len(got), got, wantLines)
		}
		for i := range got {
			if got[i] != wantLines[i] || pos[i] != wantPos[i] {
				t.Fatalf("%q line %d: got %q@%d, want %q@%d", all, i, got[i], pos[i], wantLines[i], wantPos[i])
			}
		}
	})
}

// referenceLines splits complete lines: \n, \r\n, or \r followed by a
// byte other than \n; a final \r is not yet a terminator.
func referenceLines(b []byte) ([]string, []int64) {
	var lines []string
	var pos []int64
	start := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '\n':
			lines, pos = append(lines, decodeJavaUTF8(b[start:i])), append(pos, int64(i+1))
			start = i + 1
		case '\r':
			if i+1 == len(b) {
				return lines, pos
			}
			end := i + 1
			if b[i+1] == '\n' {
				end = i + 2
			}
			lines, pos = append(lines, decodeJavaUTF8(b[start:i])), append(pos, int64(end))
			start = end
			i = end - 1
		}
	}
	return lines, pos
}
