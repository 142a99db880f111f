package transforms

import (
	"fmt"
	"regexp"
	"strings"
)

// javaRegex is a java.util.regex.Pattern as Go's regexp runs it: the
// syntax both share (classes, groups, named groups, quantifiers,
// anchors). Java-only constructs (lookaround, backreferences, possessive
// quantifiers) are refused at configure time.
type javaRegex struct {
	re   *regexp.Regexp // unanchored, for find()
	full *regexp.Regexp // anchored, for matches()
}

func compileJavaRegex(pattern string) (*javaRegex, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	full, err := regexp.Compile(`^(?:` + pattern + `)$`)
	if err != nil {
		return nil, err
	}
	return &javaRegex{re: re, full: full}, nil
}

// matches is Java's Matcher.matches: the whole input matches.
func (j *javaRegex) matches(s string) bool { return j.full.MatchString(s) }

// replaceFirst is Java's Matcher.replaceFirst with a Java replacement
// string ($1, ${name}, backslash escapes).
func (j *javaRegex) replaceFirst(s, replacement string) (string, error) {
	m := j.re.FindStringSubmatchIndex(s)
	if m == nil {
		return s, nil
	}
	var b strings.Builder
	b.WriteString(s[:m[0]])
	if err := appendJavaReplacement(&b, j.re, s, m, replacement); err != nil {
		return "", err
	}
	b.WriteString(s[m[1]:])
	return b.String(), nil
}

// appendJavaReplacement expands replacement as Java's
// Matcher.appendReplacement: "\x" is a literal x, "$n" the longest group
// number that exists, "${name}" a named group; an unmatched group adds
// nothing.
func appendJavaReplacement(b *strings.Builder, re *regexp.Regexp, s string, m []int, repl string) error {
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

// regexValidator is Kafka's transforms RegexValidator.
func regexValidator(name string, v any) error {
	s, _ := v.(string)
	if _, err := compileJavaRegex(s); err != nil {
		return fmt.Errorf("Invalid regex: %s", err.Error())
	}
	return nil
}
