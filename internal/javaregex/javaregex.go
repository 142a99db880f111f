// Package javaregex runs java.util.regex patterns and replacement
// strings with Go's regexp, for the Kafka settings whose values are Java
// regular expressions: Connect's RegexRouter and TopicNameMatches, and
// the broker's ssl.principal.mapping.rules.
//
// Patterns use the syntax Java and RE2 share (classes, groups, named
// groups, lazy quantifiers, anchors); Java-only constructs (look-around,
// back references, possessive quantifiers) fail to compile, so they are
// refused when configured rather than behaving differently.
package javaregex

import (
	"fmt"
	"regexp"
	"strings"
)

// Regex is a compiled java.util.regex.Pattern.
type Regex struct {
	re   *regexp.Regexp // unanchored, for find()
	full *regexp.Regexp // anchored, for matches()
}

// Compile compiles a Java pattern.
func Compile(pattern string) (*Regex, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	full, err := regexp.Compile(`^(?:` + pattern + `)$`)
	if err != nil {
		return nil, err
	}
	return &Regex{re: re, full: full}, nil
}

// String is the pattern as written.
func (j *Regex) String() string { return j.re.String() }

// NumSubexp is the number of capturing groups (Matcher.groupCount).
func (j *Regex) NumSubexp() int { return j.re.NumSubexp() }

// Matches is Java's Matcher.matches: the whole input matches.
func (j *Regex) Matches(s string) bool { return j.full.MatchString(s) }

// ReplaceFirst is Java's Matcher.replaceFirst with a Java replacement
// string ($1, ${name}, backslash escapes).
func (j *Regex) ReplaceFirst(s, replacement string) (string, error) {
	m := j.re.FindStringSubmatchIndex(s)
	if m == nil {
		return s, nil
	}
	var b strings.Builder
	b.WriteString(s[:m[0]])
	if err := appendReplacement(&b, j.re, s, m, replacement); err != nil {
		return "", err
	}
	b.WriteString(s[m[1]:])
	return b.String(), nil
}

// ReplaceAll is Java's Matcher.replaceAll: every match replaced. Go's
// regexp skips an empty match right after another match, where Java
// replaces it too (only patterns that can match nothing, such as "x*",
// differ).
func (j *Regex) ReplaceAll(s, replacement string) (string, error) {
	var b strings.Builder
	last := 0
	for _, m := range j.re.FindAllStringSubmatchIndex(s, -1) {
		b.WriteString(s[last:m[0]])
		if err := appendReplacement(&b, j.re, s, m, replacement); err != nil {
			return "", err
		}
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String(), nil
}

// appendReplacement expands replacement as Java's
// Matcher.appendReplacement: "\x" is a literal x, "$n" the longest group
// number that exists, "${name}" a named group; an unmatched group adds
// nothing.
func appendReplacement(b *strings.Builder, re *regexp.Regexp, s string, m []int, repl string) error {
	groups := re.NumSubexp()
	group := func(i int) {
		if m[2*i] >= 0 {
			b.WriteString(s[m[2*i]:m[2*i+1]])
		}
	}
	for i := 0; i < len(repl); {
		c := repl[i]
		switch c {
		case '\\':
			i++
			if i >= len(repl) {
				return fmt.Errorf("character to be escaped is missing")
			}
			b.WriteByte(repl[i])
			i++
		case '$':
			i++
			if i >= len(repl) {
				return fmt.Errorf("Illegal group reference: group index is missing")
			}
			if repl[i] == '{' {
				end := strings.IndexByte(repl[i:], '}')
				if end < 0 {
					return fmt.Errorf("named capturing group is missing trailing '}'")
				}
				name := repl[i+1 : i+end]
				if name == "" {
					return fmt.Errorf("named capturing group has 0 length name")
				}
				idx := re.SubexpIndex(name)
				if idx < 0 {
					return fmt.Errorf("No group with name {%s}", name)
				}
				group(idx)
				i += end + 1
				continue
			}
			if repl[i] < '0' || repl[i] > '9' {
				return fmt.Errorf("Illegal group reference")
			}
			n := int(repl[i] - '0')
			i++
			for i < len(repl) && repl[i] >= '0' && repl[i] <= '9' {
				next := n*10 + int(repl[i]-'0')
				if next > groups {
					break
				}
				n = next
				i++
			}
			if n > groups {
				return fmt.Errorf("No group %d", n)
			}
			group(n)
		default:
			b.WriteByte(c)
			i++
		}
	}
	return nil
}
