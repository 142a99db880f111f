package json

import (
	"bytes"
	"encoding/base64"
)

// Kafka decodes BYTES (and BASE64 decimals) with Jackson's default
// variant: the standard alphabet, padding required, whitespace (any
// char up to U+0020) skipped between 4-character groups only, and more
// groups may follow a padded one.

var b64 [256]int8

func init() {
	for i := range b64 {
		b64[i] = -1
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := 0; i < len(alphabet); i++ {
		b64[alphabet[i]] = int8(i)
	}
}

// decodeBase64 decodes s as Jackson's TextNode.binaryValue() does.
func decodeBase64(s []byte) ([]byte, bool) { return decodeBase64To(nil, s) }

// decodeBase64To appends the decoding of s to dst.
func decodeBase64To(dst, s []byte) ([]byte, bool) {
	// The common case (no whitespace, valid padding) is the standard
	// decoding; only inputs it refuses take the slow path.
	// (Go's decoder skips CR and LF anywhere, Jackson does not.)
	if bytes.IndexAny(s, "\r\n") < 0 {
		if out, err := base64.StdEncoding.Strict().AppendDecode(dst, s); err == nil {
			return out, true
		}
	}
	out := dst
	i := 0
	for {
		for i < len(s) && s[i] <= ' ' {
			i++
		}
		if i >= len(s) {
			return out, true
		}
		if i+1 >= len(s) {
			return nil, false
		}
		a, b := b64[s[i]], b64[s[i+1]]
		if a < 0 || b < 0 {
			return nil, false
		}
		i += 2
		if i+1 >= len(s) {
			return nil, false // padding required
		}
		if s[i] == '=' {
			if s[i+1] != '=' {
				return nil, false
			}
			out = append(out, byte(a)<<2|byte(b)>>4)
			i += 2
			continue
		}
		c := b64[s[i]]
		if c < 0 {
			return nil, false
		}
		if s[i+1] == '=' {
			out = append(out, byte(a)<<2|byte(b)>>4, byte(b)<<4|byte(c)>>2)
			i += 2
			continue
		}
		d := b64[s[i+1]]
		if d < 0 {
			return nil, false
		}
		out = append(out, byte(a)<<2|byte(b)>>4, byte(b)<<4|byte(c)>>2, byte(c)<<6|byte(d))
		i += 2
	}
}
