package file

import "unicode/utf8"

// decodeJavaUTF8 returns b as Java's UTF-8 decoder (InputStreamReader,
// new String(b, UTF_8)) reads it: every malformed sequence becomes one
// U+FFFD, with Java's idea of how long a malformed sequence is, which
// differs from Go's (one U+FFFD per bad byte) and from Unicode's maximal
// subparts (Java swallows a whole encoded surrogate ED A0 80 as one).
// A truncated sequence at the end counts as one, as at end of input.
func decodeJavaUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return string(appendJavaDecoded(make([]byte, 0, len(b)+8), b))
}

const replacement = "\uFFFD"

func isCont(c byte) bool { return c&0xc0 == 0x80 }

func appendJavaDecoded(dst, b []byte) []byte {
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x80 {
			dst = append(dst, c)
			i++
			continue
		}
		n := javaMalformed(b[i:])
		if n == 0 {
			_, size := utf8.DecodeRune(b[i:])
			dst = append(dst, b[i:i+size]...)
			i += size
			continue
		}
		dst = append(dst, replacement...)
		i += n
	}
	return dst
}

// javaMalformed returns 0 if b starts with a valid multi-byte sequence,
// else the number of bytes Java's decoder replaces by one U+FFFD (the
// logic of sun.nio.cs.UTF_8.Decoder's decodeArrayLoop and malformedN).
func javaMalformed(b []byte) int {
	b1 := b[0]
	rem := len(b)
	switch {
	case b1 >= 0xc2 && b1 <= 0xdf:
		if rem < 2 {
			return rem
		}
		if !isCont(b[1]) {
			return 1
		}
		return 0
	case b1 >= 0xe0 && b1 <= 0xef:
		if rem < 3 {
			if rem > 1 && ((b1 == 0xe0 && b[1]&0xe0 == 0x80) || !isCont(b[1])) {
				return 1
			}
			return rem
		}
		b2, b3 := b[1], b[2]
		if (b1 == 0xe0 && b2&0xe0 == 0x80) || !isCont(b2) || !isCont(b3) {
			if (b1 == 0xe0 && b2&0xe0 == 0x80) || !isCont(b2) {
				return 1
			}
			return 2
		}
		if b1 == 0xed && b2 >= 0xa0 { // an encoded UTF-16 surrogate
			return 3
		}
		return 0
	case b1 >= 0xf0 && b1 <= 0xf7:
		bad2 := func(b2 byte) bool {
			return (b1 == 0xf0 && (b2 < 0x90 || b2 > 0xbf)) || (b1 == 0xf4 && b2&0xf0 != 0x80) || !isCont(b2)
		}
		if rem < 4 {
			if b1 > 0xf4 || rem > 1 && bad2(b[1]) {
				return 1
			}
			if rem > 2 && !isCont(b[2]) {
				return 2
			}
			return rem
		}
		if !isCont(b[1]) || !isCont(b[2]) || !isCont(b[3]) || b1 > 0xf4 || bad2(b[1]) {
			// malformedN(4)
			if b1 > 0xf4 || bad2(b[1]) {
				return 1
			}
			if !isCont(b[2]) {
				return 2
			}
			return 3
		}
		return 0
	}
	return 1
}
