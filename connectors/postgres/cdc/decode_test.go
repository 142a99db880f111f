package cdc

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// pgoutput's change messages decode in place, old and new tuples alike.
func TestDecodeChange(t *testing.T) {
	tupleBytes := func(cols ...any) []byte {
		var b []byte
		b = binary.BigEndian.AppendUint16(b, uint16(len(cols)))
		for _, c := range cols {
			switch v := c.(type) {
			case nil:
				b = append(b, 'n')
			case byte:
				b = append(b, v)
			case string:
				b = append(b, 't')
				b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
				b = append(b, v...)
			}
		}
		return b
	}
	msg := func(op byte, rel uint32, parts ...[]byte) []byte {
		b := []byte{op}
		b = binary.BigEndian.AppendUint32(b, rel)
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	var c change
	if err := decodeChange(msg('I', 7, []byte{'N'}, tupleBytes("1", nil, "x\ty")), &c); err != nil {
		t.Fatal(err)
	}
	if c.op != 'I' || c.relation != 7 || c.oldKind != 0 || string(c.new.kinds) != "tnt" || string(c.new.values[2]) != "x\ty" || c.new.values[1] != nil {
		t.Fatalf("insert decoded as %+v", c)
	}
	if err := decodeChange(msg('U', 8, []byte{'O'}, tupleBytes("1", "a"), []byte{'N'}, tupleBytes("1", byte('u'))), &c); err != nil {
		t.Fatal(err)
	}
	if c.oldKind != 'O' || string(c.old.values[1]) != "a" || string(c.new.kinds) != "tu" {
		t.Fatalf("update decoded as %+v", c)
	}
	if err := decodeChange(msg('D', 9, []byte{'K'}, tupleBytes("5", nil)), &c); err != nil {
		t.Fatal(err)
	}
	if c.op != 'D' || c.oldKind != 'K' || string(c.old.values[0]) != "5" {
		t.Fatalf("delete decoded as %+v", c)
	}
	for _, bad := range [][]byte{
		msg('I', 1, []byte{'X'}),
		msg('I', 1, []byte{'N', 0, 2, 't', 0, 0, 0, 9, 'a'}), // length past the end
		msg('D', 1, []byte{'N'}, tupleBytes("1")),
		msg('Q', 1, []byte{'N'}),
		{'I', 0},
	} {
		if err := decodeChange(bad, &c); err == nil {
			t.Errorf("decodeChange(%q) = nil, want an error", bad)
		}
	}
}

// COPY's text format: tabs between columns, \N for NULL, escapes.
func TestUnescapeCopy(t *testing.T) {
	for in, want := range map[string]string{
		`plain`:           "plain",
		`a\tb\nc\\d`:      "a\tb\nc\\d",
		`\x41\x4a2`:       "AJ2",
		`\101\0601`:       "A01",
		`\b\f\r\v`:        "\b\f\r\v",
		`\q`:              "q",
		`\xZ`:             "xZ",
		`tab\\N`:          `tab\N`,
		"utf8 \\303\\251": "utf8 é",
	} {
		got, err := unescapeCopy(nil, []byte(in))
		if err != nil || string(got) != want {
			t.Errorf("unescapeCopy(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := unescapeCopy(nil, []byte(`ends\`)); err == nil {
		t.Error("a trailing lone backslash is not an error")
	}
}

func FuzzDecodeChange(f *testing.F) {
	f.Add([]byte{'I', 0, 0, 0, 1, 'N', 0, 1, 't', 0, 0, 0, 1, 'x'})
	f.Add([]byte{'U', 0, 0, 0, 1, 'O', 0, 1, 'n', 'N', 0, 1, 'u'})
	f.Add([]byte{'D', 0, 0, 0, 1, 'K', 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		var c change
		if err := decodeChange(b, &c); err != nil {
			return
		}
		// Whatever decodes only references the input.
		for _, tp := range []tuple{c.old, c.new} {
			for _, v := range tp.values {
				if len(v) > 0 && !bytes.Contains(b, v) {
					t.Fatalf("value %q not from the message", v)
				}
			}
		}
	})
}

func FuzzUnescapeCopy(f *testing.F) {
	f.Add([]byte(`a\tb\\\x41\101`))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := unescapeCopy(nil, b)
		if err == nil && len(out) > len(b) {
			t.Fatalf("unescaping grew %q to %q", b, out)
		}
	})
}
