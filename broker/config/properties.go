package config

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ParseProperties reads a Java .properties file the way java.util.Properties
// does, so that a server.properties written for Kafka means the same here:
// "=", ":" or whitespace between key and value; "#" and "!" comment lines;
// a line ending in an odd number of backslashes continues on the next line
// (whose leading whitespace is dropped); \t \n \r \f \uXXXX escapes, and a
// backslash before any other character stands for that character (so keys
// may contain "\ ", "\=" and "\:"); the last of duplicate keys wins.
//
// One deliberate difference: Kafka loads the file as ISO-8859-1, which
// garbles UTF-8 text; we read UTF-8 when the input is valid UTF-8 and fall
// back to ISO-8859-1 only when it is not. For ASCII files (nearly all of
// them, since Java tooling writes \uXXXX escapes) the two are identical.
func ParseProperties(r io.Reader) (map[string]string, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read properties: %w", err)
	}
	var text []rune
	if utf8.Valid(b) {
		text = []rune(string(b))
	} else {
		text = make([]rune, len(b))
		for i, c := range b {
			text[i] = rune(c) // ISO-8859-1 maps each byte to the same code point
		}
	}
	props := map[string]string{}
	lr := lineReader{in: text, lineNo: 1}
	for {
		line, lineNo, ok := lr.next()
		if !ok {
			return props, nil
		}
		key, value, err := splitKeyValue(line)
		if err != nil {
			return nil, fmt.Errorf("properties line %d: %w", lineNo, err)
		}
		props[key] = value
	}
}

// isPropSpace reports the characters Properties treats as whitespace.
func isPropSpace(c rune) bool { return c == ' ' || c == '\t' || c == '\f' }

// lineReader yields logical lines: comments and blank lines skipped,
// continuations joined, escapes still in place (splitKeyValue needs them to
// find the separator).
type lineReader struct {
	in     []rune
	pos    int
	lineNo int
}

func (lr *lineReader) next() (line []rune, startLine int, ok bool) {
	var buf []rune
	skipSpace := true     // at the start of a natural line
	isNewLine := true     // at the start of a logical line (comments allowed)
	continuation := false // the previous natural line ended with a backslash
	backslash := false    // the previous character was an unescaped backslash
	startLine = lr.lineNo
	for lr.pos < len(lr.in) {
		c := lr.in[lr.pos]
		lr.pos++
		if skipSpace {
			if isPropSpace(c) {
				continue
			}
			// Blank lines between logical lines are skipped, but a blank
			// line after a continuation ends the logical line.
			if !continuation && (c == '\r' || c == '\n') {
				lr.eatNewline(c)
				startLine = lr.lineNo
				continue
			}
			skipSpace = false
			continuation = false
		}
		if isNewLine {
			isNewLine = false
			if c == '#' || c == '!' {
				lr.skipComment()
				skipSpace, isNewLine = true, true
				startLine = lr.lineNo
				continue
			}
		}
		if c != '\n' && c != '\r' {
			buf = append(buf, c)
			if c == '\\' {
				backslash = !backslash
			} else {
				backslash = false
			}
			continue
		}
		lr.eatNewline(c)
		if len(buf) == 0 {
			// Only possible for a blank line ending a continuation.
			skipSpace, isNewLine = true, true
			startLine = lr.lineNo
			continue
		}
		if backslash {
			buf = buf[:len(buf)-1]
			backslash = false
			skipSpace, continuation = true, true
			continue
		}
		return buf, startLine, true
	}
	if len(buf) == 0 {
		return nil, 0, false
	}
	if backslash {
		buf = buf[:len(buf)-1] // a backslash at end of input continues into nothing
	}
	return buf, startLine, true
}

// eatNewline consumes the \n of a \r\n pair and counts the line.
func (lr *lineReader) eatNewline(c rune) {
	if c == '\r' && lr.pos < len(lr.in) && lr.in[lr.pos] == '\n' {
		lr.pos++
	}
	lr.lineNo++
}

// skipComment consumes the rest of a comment line. Comments never
// continue, whatever they end with.
func (lr *lineReader) skipComment() {
	for lr.pos < len(lr.in) {
		c := lr.in[lr.pos]
		lr.pos++
		if c == '\n' || c == '\r' {
			lr.eatNewline(c)
			return
		}
	}
}

// splitKeyValue finds the key's end (the first unescaped '=', ':' or
// whitespace), skips whitespace and at most one separator, and unescapes both.
func splitKeyValue(line []rune) (string, string, error) {
	keyLen, valueStart := len(line), len(line)
	hasSep, backslash := false, false
	for i, c := range line {
		if (c == '=' || c == ':') && !backslash {
			keyLen, valueStart, hasSep = i, i+1, true
			break
		}
		if isPropSpace(c) && !backslash {
			keyLen, valueStart = i, i+1
			break
		}
		if c == '\\' {
			backslash = !backslash
		} else {
			backslash = false
		}
	}
	for valueStart < len(line) {
		c := line[valueStart]
		if !isPropSpace(c) {
			if hasSep || (c != '=' && c != ':') {
				break
			}
			hasSep = true
		}
		valueStart++
	}
	key, err := unescape(line[:keyLen])
	if err != nil {
		return "", "", err
	}
	value, err := unescape(line[valueStart:])
	if err != nil {
		return "", "", err
	}
	return key, value, nil
}

var errMalformedUnicode = errors.New(`malformed \uxxxx encoding`)

// unescape resolves backslash escapes. \u escapes are UTF-16 code units,
// as in Java: a surrogate pair becomes one character.
func unescape(in []rune) (string, error) {
	var sb strings.Builder
	var pendingHigh rune = -1 // a high surrogate waiting for its low half
	flushHigh := func() {
		if pendingHigh >= 0 {
			sb.WriteRune(utf8.RuneError)
			pendingHigh = -1
		}
	}
	for i := 0; i < len(in); i++ {
		c := in[i]
		if c != '\\' || i+1 >= len(in) {
			flushHigh()
			sb.WriteRune(c)
			continue
		}
		i++
		c = in[i]
		if c != 'u' {
			flushHigh()
			switch c {
			case 't':
				c = '\t'
			case 'r':
				c = '\r'
			case 'n':
				c = '\n'
			case 'f':
				c = '\f'
			}
			sb.WriteRune(c)
			continue
		}
		if i+5 > len(in) {
			return "", errMalformedUnicode
		}
		var v rune
		for _, h := range in[i+1 : i+5] {
			d, ok := hexDigit(h)
			if !ok {
				return "", errMalformedUnicode
			}
			v = v<<4 | d
		}
		i += 4
		switch {
		case utf16.IsSurrogate(v) && v < 0xDC00:
			flushHigh()
			pendingHigh = v
		case utf16.IsSurrogate(v) && pendingHigh >= 0:
			sb.WriteRune(utf16.DecodeRune(pendingHigh, v))
			pendingHigh = -1
		default:
			flushHigh()
			if utf16.IsSurrogate(v) {
				v = utf8.RuneError // a lone low surrogate has no UTF-8 form
			}
			sb.WriteRune(v)
		}
	}
	flushHigh()
	return sb.String(), nil
}

func hexDigit(c rune) (rune, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// ApplyOverrides sets each "key=value" (the --override flags of
// kafka-server-start and `fjord broker`) in props, splitting at the first
// '=' as Kafka does; the value may be empty, the key may not.
func ApplyOverrides(props map[string]string, overrides []string) error {
	for _, o := range overrides {
		k, v, ok := strings.Cut(o, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return fmt.Errorf("override %q: want key=value", o)
		}
		props[strings.TrimSpace(k)] = v
	}
	return nil
}
