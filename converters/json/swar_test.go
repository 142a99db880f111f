package json

import (
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

// plainRunRef is plainRun one byte at a time.
func plainRunRef(b []byte) int {
	for i, c := range b {
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return i
		}
	}
	return len(b)
}

// appendStringRef is appendString as it was before the eight-byte scan:
// the new one must write the same bytes for every input.
func appendStringRef(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
		case r > 0xffff:
			dst = append(dst, s[start:i]...)
			r -= 0x10000
			dst = appendU(dst, 0xd800+(r>>10))
			dst = appendU(dst, 0xdc00+(r&0x3ff))
		default:
			i += n
			continue
		}
		i += n
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// Every byte value at every position of runs of every length up to 40:
// the eight-byte scan stops exactly where the byte loop does.
func TestPlainRunEveryByte(t *testing.T) {
	for n := 0; n <= 40; n++ {
		base := make([]byte, n)
		for i := range base {
			base[i] = 'a' + byte(i%26)
		}
		if got := plainRun(base); got != n {
			t.Fatalf("plain run of %d: %d", n, got)
		}
		if got := plainRunString(string(base)); got != n {
			t.Fatalf("plain run string of %d: %d", n, got)
		}
		for pos := 0; pos < n; pos++ {
			for c := 0; c < 256; c++ {
				b := append([]byte(nil), base...)
				b[pos] = byte(c)
				want := plainRunRef(b)
				if got := plainRun(b); got != want {
					t.Fatalf("plainRun(%q) = %d, want %d", b, got, want)
				}
				if got := plainRunString(string(b)); got != want {
					t.Fatalf("plainRunString(%q) = %d, want %d", b, got, want)
				}
			}
		}
	}
}

// Random strings mixing plain text, escapes, controls, multi-byte and
// invalid UTF-8: appendString writes what the byte loop wrote, and the
// scanner reads back what was written.
func TestAppendStringSameAsByteLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "hello world ", "0123456789abcdef", "\"", "\\", "\n", "\t", "\x00", "\x1f", "\x7f",
		"é", "ß", "€", "😀", "\u2028", "\xff", "\xc3", "/", "<>&", "ord-0000012345"}
	for n := 0; n < 20000; n++ {
		var s []byte
		for k := rng.IntN(12); k > 0; k-- {
			s = append(s, pieces[rng.IntN(len(pieces))]...)
		}
		want := appendStringRef(nil, string(s))
		got := appendString(nil, string(s))
		if string(got) != string(want) {
			t.Fatalf("appendString(%q) = %s, want %s", s, got, want)
		}
		sc := scanner{data: got}
		raw, _, err := sc.stringRaw()
		if err != nil || sc.pos != len(got) || string(raw) != string(got[1:len(got)-1]) {
			t.Fatalf("stringRaw(%s) = %q, %v at %d", got, raw, err, sc.pos)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain ascii text", "tab\there", "quote\"and\\slash", "caf\u00e9 \U0001F600", "\xff\xfe bad"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := appendString(nil, s), appendStringRef(nil, s); string(got) != string(want) {
			t.Fatalf("appendString(%q) = %s, want %s", s, got, want)
		}
		if got, want := plainRunString(s), plainRunRef([]byte(s)); got != want {
			t.Fatalf("plainRunString(%q) = %d, want %d", s, got, want)
		}
	})
}
