package javaregex

import "testing"

// Java's answers for these were taken from String.replaceAll /
// replaceFirst / matches (the replacement rules of Matcher.appendReplacement).
func TestReplace(t *testing.T) {
	re, err := Compile(`([a-z]+)-(\d+)`)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ in, repl, all, first string }{
		{"ab-1 cd-22", "$2:$1", "1:ab 22:cd", "1:ab cd-22"},
		{"ab-1", `\$1`, "$1", "$1"},
		{"ab-1", "$12", "ab2", "ab2"}, // two groups: $1 then a literal 2
		{"none", "x", "none", "none"},
	} {
		if got, err := re.ReplaceAll(c.in, c.repl); err != nil || got != c.all {
			t.Errorf("ReplaceAll(%q, %q) = %q, %v; want %q", c.in, c.repl, got, err, c.all)
		}
		if got, err := re.ReplaceFirst(c.in, c.repl); err != nil || got != c.first {
			t.Errorf("ReplaceFirst(%q, %q) = %q, %v; want %q", c.in, c.repl, got, err, c.first)
		}
	}
	for _, bad := range []string{"$", `x\`, "$3", "$x", "${nope}"} {
		if _, err := re.ReplaceAll("ab-1", bad); err == nil {
			t.Errorf("replacement %q: no error", bad)
		}
	}
	if !re.Matches("ab-1") || re.Matches("ab-1 cd-2") {
		t.Error("Matches is not a whole-input match")
	}
	if _, err := Compile(`(?=x)`); err == nil {
		t.Error("look-ahead compiled")
	}
}
