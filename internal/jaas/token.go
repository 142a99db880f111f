package jaas

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

type tokenKind int

const (
	word   tokenKind = iota // a bare word
	quoted                  // a quoted string, quotes and escapes removed
	punct                   // one of = ; and, in files, { }
)

type token struct {
	kind tokenKind
	text string
}

// is reports whether t is the punctuation p. A quoted ";" is a value,
// not the end of a module, which is why tokens keep their kind.
func (t token) is(p string) bool { return t.kind == punct && t.text == p }

// value reports whether t can be a class, key or value.
func (t token) value() bool { return t.kind != punct }

// tokenize splits JAAS text into tokens. In a file (Java's ConfigFile)
// braces delimit sections and // and /* */ start comments; in a
// sasl.jaas.config line they are ordinary characters, so bare values such
// as ${file:/path:key} keep their braces. The input is copied byte for
// byte: escapes aside, values come out exactly as written.
func tokenize(s string, file bool) ([]token, error) {
	punctuation := "=;"
	if file {
		punctuation = "=;{}"
	}
	var toks []token
	for i := 0; i < len(s); {
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case unicode.IsSpace(c):
			i += size
		case file && strings.HasPrefix(s[i:], "//"):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case file && strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("unclosed /* comment")
			}
			i += 2 + end + 2
		case strings.ContainsRune(punctuation, c):
			toks = append(toks, token{punct, string(c)})
			i += size
		case c == '"' || c == '\'':
			var b strings.Builder
			closed := false
			for i++; i < len(s); i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				} else if s[i] == byte(c) {
					closed = true
					i++
					break
				}
				b.WriteByte(s[i])
			}
			if !closed {
				return nil, fmt.Errorf("unterminated %c-quoted value", c)
			}
			toks = append(toks, token{quoted, b.String()})
		default:
			start := i
			for i < len(s) {
				r, n := utf8.DecodeRuneInString(s[i:])
				if unicode.IsSpace(r) || r == '"' || r == '\'' || strings.ContainsRune(punctuation, r) {
					break
				}
				i += n
			}
			toks = append(toks, token{word, s[start:i]})
		}
	}
	return toks, nil
}
