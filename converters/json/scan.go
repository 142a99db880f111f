package json

import (
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// Limits Kafka's JSON parser (Jackson 2.21's StreamReadConstraints)
// enforces; inputs beyond them fail there, and fail here.
const (
	maxDepth     = 1000
	maxNumberLen = 1000
)

// scanner reads JSON from a byte slice, as Jackson does with Kafka's
// settings: leading zeros in numbers allowed, nothing else lenient.
type scanner struct {
	data  []byte
	pos   int
	depth int
	// scratch holds decoded strings with escapes.
	scratch []byte
}

// syntaxError is a malformed document: Kafka wraps Jackson's parse
// error in "Converting byte[] to Kafka Connect data failed due to
// serialization error: ".
type syntaxError struct {
	msg string
	pos int
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at offset %d", e.msg, e.pos) }

func (s *scanner) errorf(format string, args ...any) error {
	return &syntaxError{msg: fmt.Sprintf(format, args...), pos: s.pos}
}

func (s *scanner) unexpected() error {
	if s.pos >= len(s.data) {
		return s.errorf("unexpected end of input")
	}
	return s.errorf("unexpected character %q", s.data[s.pos])
}

// ws skips JSON whitespace: space, tab, CR, LF only (Jackson refuses
// other control characters).
func (s *scanner) ws() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// peek returns the next non-space byte (0 at the end).
func (s *scanner) peek() byte {
	s.ws()
	if s.pos >= len(s.data) {
		return 0
	}
	return s.data[s.pos]
}

func (s *scanner) enter() error {
	s.depth++
	if s.depth > maxDepth {
		return s.errorf("document nesting depth exceeds the maximum allowed (%d)", maxDepth)
	}
	return nil
}

// literal consumes true, false or null (the caller saw its first byte).
func (s *scanner) literal(word string) error {
	if len(s.data)-s.pos < len(word) || string(s.data[s.pos:s.pos+len(word)]) != word {
		return s.errorf("unrecognized token")
	}
	s.pos += len(word)
	// Jackson refuses "truex" and "nullable": a token may not run on
	// into identifier characters.
	if s.pos < len(s.data) {
		c := s.data[s.pos]
		if c == '_' || c == '$' || c >= 0x80 || (c >= '0' && c <= '9') || (c|0x20 >= 'a' && c|0x20 <= 'z') {
			return s.errorf("unrecognized token %q", word+string(c))
		}
	}
	return nil
}

// number scans a number token and returns its text and whether it is a
// floating point token (fraction or exponent).
func (s *scanner) number() (text []byte, float bool, err error) {
	start := s.pos
	d := s.data
	i := s.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	intStart := i
	for i < len(d) && d[i] >= '0' && d[i] <= '9' {
		i++
	}
	intLen := i - intStart
	if intLen == 0 {
		s.pos = i
		return nil, false, s.errorf("invalid number")
	}
	fracLen, expLen := 0, 0
	if i < len(d) && d[i] == '.' {
		float = true
		i++
		fs := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		fracLen = i - fs
		if fracLen == 0 {
			s.pos = i
			return nil, false, s.errorf("decimal point not followed by a digit")
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		float = true
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		es := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		expLen = i - es
		if expLen == 0 {
			s.pos = i
			return nil, false, s.errorf("exponent indicator not followed by a digit")
		}
	}
	s.pos = i
	if intLen+fracLen+expLen > maxNumberLen {
		return nil, false, s.errorf("number value length exceeds the maximum allowed (%d)", maxNumberLen)
	}
	return d[start:i], float, nil
}

// stringRaw scans a string (the caller saw the opening quote) and
// returns its content bytes, undecoded, and whether it has escapes.
func (s *scanner) stringRaw() (raw []byte, escaped bool, err error) {
	s.pos++ // opening quote
	start := s.pos
	d := s.data
	ascii := true
	for i := start; i < len(d); i++ {
		c := d[i]
		if c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' {
			// A run of plain ASCII, eight bytes at a time.
			if i += plainRun(d[i:]); i >= len(d) {
				break
			}
			c = d[i]
		}
		switch {
		case c == '"':
			s.pos = i + 1
			raw = d[start:i]
			if !ascii && !utf8.Valid(raw) {
				s.pos = start
				return nil, false, s.errorf("invalid UTF-8 in string")
			}
			return raw, escaped, nil
		case c == '\\':
			escaped = true
			i++
			if i >= len(d) {
				s.pos = i
				return nil, false, s.errorf("unexpected end of input in string")
			}
			switch d[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(d) {
					s.pos = i
					return nil, false, s.errorf("unexpected end of input in unicode escape")
				}
				for k := 1; k <= 4; k++ {
					if hexVal(d[i+k]) < 0 {
						s.pos = i + k
						return nil, false, s.errorf("invalid hex digit in unicode escape")
					}
				}
				i += 4
			default:
				s.pos = i
				return nil, false, s.errorf("unrecognized character escape %q", d[i])
			}
		case c < 0x20:
			s.pos = i
			return nil, false, s.errorf("illegal unquoted control character in string")
		case c >= 0x80:
			ascii = false
		}
	}
	s.pos = len(d)
	return nil, false, s.errorf("unexpected end of input in string")
}

// str scans a string and returns it decoded.
func (s *scanner) str() (string, error) {
	raw, escaped, err := s.stringRaw()
	if err != nil {
		return "", err
	}
	if !escaped {
		return string(raw), nil
	}
	s.scratch = unescape(s.scratch[:0], raw)
	return string(s.scratch), nil
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// unescape decodes the escapes of a scanned (valid) string. UTF-16
// surrogate pairs join; a lone surrogate, which a Java string holds but
// a Go string cannot, becomes U+FFFD.
func unescape(dst, raw []byte) []byte {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			dst = append(dst, c)
			continue
		}
		i++
		switch raw[i] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := rune(hex4(raw[i+1:]))
			i += 4
			if utf16.IsSurrogate(r) {
				if r < 0xdc00 && i+6 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
					r2 := rune(hex4(raw[i+3:]))
					if p := utf16.DecodeRune(r, r2); p != utf8.RuneError {
						dst = utf8.AppendRune(dst, p)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
		default: // '"', '\\', '/'
			dst = append(dst, raw[i])
		}
	}
	return dst
}

func hex4(b []byte) int {
	return hexVal(b[0])<<12 | hexVal(b[1])<<8 | hexVal(b[2])<<4 | hexVal(b[3])
}

// skip scans one value without building it, validating its syntax.
func (s *scanner) skip() error {
	switch c := s.peek(); c {
	case '{':
		if err := s.enter(); err != nil {
			return err
		}
		s.pos++
		if s.peek() == '}' {
			s.pos++
			s.depth--
			return nil
		}
		for {
			if s.peek() != '"' {
				return s.unexpected()
			}
			if _, _, err := s.stringRaw(); err != nil {
				return err
			}
			if s.peek() != ':' {
				return s.unexpected()
			}
			s.pos++
			if err := s.skip(); err != nil {
				return err
			}
			switch s.peek() {
			case ',':
				s.pos++
			case '}':
				s.pos++
				s.depth--
				return nil
			default:
				return s.unexpected()
			}
		}
	case '[':
		if err := s.enter(); err != nil {
			return err
		}
		s.pos++
		if s.peek() == ']' {
			s.pos++
			s.depth--
			return nil
		}
		for {
			if err := s.skip(); err != nil {
				return err
			}
			switch s.peek() {
			case ',':
				s.pos++
			case ']':
				s.pos++
				s.depth--
				return nil
			default:
				return s.unexpected()
			}
		}
	case '"':
		_, _, err := s.stringRaw()
		return err
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			_, _, err := s.number()
			return err
		}
		return s.unexpected()
	}
}

// rootEnd checks what may follow a root-level value: after a number
// Jackson wants whitespace (or the end); after anything else it reads no
// further.
func (s *scanner) rootEnd(wasNumber bool) error {
	if !wasNumber || s.pos >= len(s.data) {
		return nil
	}
	switch s.data[s.pos] {
	case ' ', '\t', '\n', '\r':
		return nil
	}
	return s.errorf("expected space separating root-level values")
}

// skipBOM skips a UTF-8 byte order mark, as Jackson does.
func (s *scanner) skipBOM() {
	if len(s.data) >= 3 && s.data[0] == 0xef && s.data[1] == 0xbb && s.data[2] == 0xbf {
		s.pos = 3
	}
}

// validateRoot checks the syntax of a whole document (the root value and
// what follows it), for error precedence: Kafka parses the whole tree
// before converting, so a syntax error anywhere wins over a conversion
// error.
func validateRoot(data []byte) error {
	s := scanner{data: data}
	s.skipBOM()
	c := s.peek()
	if s.pos >= len(s.data) {
		return nil
	}
	if err := s.skip(); err != nil {
		return err
	}
	return s.rootEnd(c == '-' || (c >= '0' && c <= '9'))
}
