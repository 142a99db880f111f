package str

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/fjordhq/fjord/converters/internal/jvm"
)

// charset encodes and decodes as a java.nio.charset.Charset does with
// String.getBytes and new String(bytes, charset).
type charset struct {
	name   string
	encode func(s string) []byte
	decode func(b []byte) string
}

var utf8Charset = &charset{
	name:   "UTF-8",
	encode: func(s string) []byte { return []byte(strings.ToValidUTF8(s, "\uFFFD")) },
	decode: jvm.DecodeUTF8,
}

var charsets = map[string]*charset{}

func init() {
	reg := func(cs *charset, aliases ...string) {
		for _, a := range append(aliases, cs.name) {
			charsets[strings.ToLower(a)] = cs
		}
	}
	reg(utf8Charset, "UTF8", "unicode-1-1-utf-8")
	reg(&charset{name: "UTF-16", encode: func(s string) []byte { return encodeUTF16(s, true, true) },
		decode: func(b []byte) string { return decodeUTF16(b, true, true) }}, "UTF_16", "utf16", "unicode", "UnicodeBig")
	reg(&charset{name: "UTF-16BE", encode: func(s string) []byte { return encodeUTF16(s, true, false) },
		decode: func(b []byte) string { return decodeUTF16(b, true, false) }}, "UTF_16BE", "ISO-10646-UCS-2", "X-UTF-16BE", "UnicodeBigUnmarked")
	reg(&charset{name: "UTF-16LE", encode: func(s string) []byte { return encodeUTF16(s, false, false) },
		decode: func(b []byte) string { return decodeUTF16(b, false, false) }}, "UTF_16LE", "X-UTF-16LE", "UnicodeLittleUnmarked")
	reg(&charset{name: "ISO-8859-1", encode: func(s string) []byte { return encodeSingleByte(s, 0xff) },
		decode: decodeLatin1}, "iso-ir-100", "ISO_8859_1", "latin1", "l1", "IBM819", "cp819", "csISOLatin1", "819",
		"IBM-819", "ISO8859_1", "ISO_8859-1:1987", "ISO_8859-1", "8859_1", "ISO8859-1")
	reg(&charset{name: "US-ASCII", encode: func(s string) []byte { return encodeSingleByte(s, 0x7f) },
		decode: decodeASCII}, "iso-ir-6", "ANSI_X3.4-1986", "ISO_646.irv:1991", "ASCII", "iso_646.irv:1983",
		"ANSI_X3.4-1968", "ISO646-US", "default", "cp367", "csASCII", "ascii7", "646", "us", "IBM367")
}

func lookupCharset(name string) (*charset, error) {
	if cs, ok := charsets[strings.ToLower(strings.TrimSpace(name))]; ok {
		return cs, nil
	}
	return nil, fmt.Errorf("Unsupported encoding %s (Fjord's StringConverter supports UTF-8, UTF-16, UTF-16BE, UTF-16LE, ISO-8859-1 and US-ASCII)", name)
}

// encodeUTF16 writes UTF-16; Java's "UTF-16" writes a big-endian byte
// order mark first.
func encodeUTF16(s string, bigEndian, bom bool) []byte {
	if s == "" {
		return []byte{}
	}
	units := utf16.Encode([]rune(strings.ToValidUTF8(s, "\uFFFD")))
	out := make([]byte, 0, 2*len(units)+2)
	if bom {
		out = append(out, 0xfe, 0xff)
	}
	for _, u := range units {
		if bigEndian {
			out = append(out, byte(u>>8), byte(u))
		} else {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	return out
}

// decodeUTF16 reads UTF-16; Java's "UTF-16" honours (and drops) a byte
// order mark, big-endian without one. Malformed input (a lone
// surrogate, a trailing odd byte) becomes U+FFFD.
func decodeUTF16(b []byte, bigEndian, bom bool) string {
	if bom && len(b) >= 2 {
		switch {
		case b[0] == 0xfe && b[1] == 0xff:
			b, bigEndian = b[2:], true
		case b[0] == 0xff && b[1] == 0xfe:
			b, bigEndian = b[2:], false
		}
	}
	unit := func(i int) uint16 {
		if bigEndian {
			return uint16(b[i])<<8 | uint16(b[i+1])
		}
		return uint16(b[i+1])<<8 | uint16(b[i])
	}
	out := make([]byte, 0, len(b))
	i := 0
	for ; i+1 < len(b); i += 2 {
		u := unit(i)
		switch {
		case u >= 0xd800 && u < 0xdc00: // high surrogate: needs a low one
			if i+3 < len(b) {
				if l := unit(i + 2); l >= 0xdc00 && l < 0xe000 {
					out = utf8.AppendRune(out, utf16.DecodeRune(rune(u), rune(l)))
					i += 2
					continue
				}
				// Java reports the pair as one malformed sequence.
				out = utf8.AppendRune(out, utf8.RuneError)
				i += 2
				continue
			}
			out = utf8.AppendRune(out, utf8.RuneError)
		case u >= 0xdc00 && u < 0xe000:
			out = utf8.AppendRune(out, utf8.RuneError)
		default:
			out = utf8.AppendRune(out, rune(u))
		}
	}
	if i < len(b) {
		out = utf8.AppendRune(out, utf8.RuneError)
	}
	return string(out)
}

// encodeSingleByte writes each character below max as a byte and any
// other as '?'.
func encodeSingleByte(s string, max rune) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r <= max {
			out = append(out, byte(r))
		} else {
			out = append(out, '?')
		}
	}
	return out
}

func decodeLatin1(b []byte) string {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		out = utf8.AppendRune(out, rune(c))
	}
	return string(out)
}

func decodeASCII(b []byte) string {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c < 0x80 {
			out = append(out, c)
		} else {
			out = utf8.AppendRune(out, utf8.RuneError)
		}
	}
	return string(out)
}
