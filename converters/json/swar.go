package json

import "encoding/binary"

// plainRun returns how many bytes at the start of b are plain string
// content: printable ASCII other than '"' and '\\', which JSON strings
// hold as they are. It looks at eight bytes at a time (the encoder and
// the scanner spend most of their time on such runs: names, ids, text),
// so only the bytes that need a closer look go through the byte loops.
func plainRun(b []byte) int {
	const (
		lo = 0x0101010101010101
		hi = 0x8080808080808080
	)
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		q := x ^ (lo * '"')
		s := x ^ (lo * '\\')
		// A byte below 0x20, equal to '"' or '\\' (a zero after the
		// XOR), or with its top bit set (non-ASCII) sets its top bit in
		// m. Borrows can only mark bytes above a marked one, so m == 0
		// means all eight bytes are plain.
		m := ((x - lo*0x20) | (q - lo) | (s - lo) | x) & hi
		if m != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return i
		}
	}
	return i
}

// plainRunString is plainRun for a string.
func plainRunString(s string) int {
	const (
		lo = 0x0101010101010101
		hi = 0x8080808080808080
	)
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		q := x ^ (lo * '"')
		b := x ^ (lo * '\\')
		if ((x-lo*0x20)|(q-lo)|(b-lo)|x)&hi != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return i
		}
	}
	return i
}
