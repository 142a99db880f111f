package transforms

import (
	"fmt"

	"github.com/fjordhq/fjord/internal/javaregex"
)

// javaRegex is a java.util.regex.Pattern as Go's regexp runs it
// (internal/javaregex, shared with the broker's
// ssl.principal.mapping.rules).
type javaRegex struct {
	*javaregex.Regex
	re fmt.Stringer // the pattern as written
}

func compileJavaRegex(pattern string) (*javaRegex, error) {
	r, err := javaregex.Compile(pattern)
	if err != nil {
		return nil, err
	}
	return &javaRegex{Regex: r, re: r}, nil
}

// matches is Java's Matcher.matches: the whole input matches.
func (j *javaRegex) matches(s string) bool { return j.Matches(s) }

// replaceFirst is Java's Matcher.replaceFirst with a Java replacement
// string ($1, ${name}, backslash escapes).
func (j *javaRegex) replaceFirst(s, replacement string) (string, error) {
	return j.ReplaceFirst(s, replacement)
}

// regexValidator is Kafka's transforms RegexValidator.
func regexValidator(name string, v any) error {
	s, _ := v.(string)
	if _, err := compileJavaRegex(s); err != nil {
		return fmt.Errorf("Invalid regex: %s", err.Error())
	}
	return nil
}
