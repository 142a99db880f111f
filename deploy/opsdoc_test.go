package deploy

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

const opsDoc = "docs/operations.md"

// shellLines are the command lines of the doc's ```sh blocks, with
// backslash continuations joined.
func shellLines(t *testing.T) []string {
	t.Helper()
	var out []string
	in := false
	cur := ""
	for line := range strings.Lines(string(readFile(t, opsDoc))) {
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, "```sh"):
			in = true
			continue
		case strings.HasPrefix(line, "```"):
			in = false
			continue
		}
		if !in {
			continue
		}
		if c, ok := strings.CutSuffix(line, `\`); ok {
			cur += c + " "
			continue
		}
		out = append(out, cur+line)
		cur = ""
	}
	return out
}

// docFjordCommands are the fjord command lines in the doc's shell blocks:
// the words after each "fjord" word up to the end of that command.
func docFjordCommands(t *testing.T) [][]string {
	t.Helper()
	var cmds [][]string
	for _, line := range shellLines(t) {
		if i := strings.Index(line, "#"); i >= 0 && (i == 0 || line[i-1] == ' ') {
			line = line[:i]
		}
		words := strings.Fields(line)
		for i, w := range words {
			if w != "fjord" || (i > 0 && (words[i-1] == "-n" || words[i-1] == "namespace")) {
				continue // "kubectl -n fjord", "create namespace fjord": the namespace
			}
			var cmd []string
			for _, a := range words[i+1:] {
				if a == "|" || a == "&&" || a == ";" || a == "&" || strings.HasPrefix(a, "2>") || a == ">" {
					break
				}
				end := strings.HasSuffix(a, ";")
				cmd = append(cmd, strings.TrimSuffix(a, ";"))
				if end {
					break
				}
			}
			cmds = append(cmds, cmd)
		}
	}
	return cmds
}

// TestOperationsDocCommands: every fjord command the operations guide
// shows is a subcommand of the built binary, with flags it has.
func TestOperationsDocCommands(t *testing.T) {
	cmds := docFjordCommands(t)
	if len(cmds) < 15 {
		t.Fatalf("found %d fjord commands in %s; the parser lost them", len(cmds), opsDoc)
	}
	helps := map[string]string{}
	help := func(path []string) string {
		k := strings.Join(path, " ")
		if h, ok := helps[k]; ok {
			return h
		}
		helps[k] = fjordHelp(t, path...)
		return helps[k]
	}
	for _, cmd := range cmds {
		var path []string
		rest := cmd
		for len(rest) > 0 && listsSubcommand(help(path), rest[0]) {
			path = append(path, rest[0])
			rest = rest[1:]
		}
		if len(path) == 0 {
			t.Errorf("%s: `fjord %s`: no such subcommand", opsDoc, strings.Join(cmd, " "))
			continue
		}
		h := help(path)
		for _, a := range rest {
			if !strings.HasPrefix(a, "-") || a == "-" {
				continue
			}
			flag, _, _ := strings.Cut(a, "=")
			if !flagListed(h, flag) {
				t.Errorf("%s: `fjord %s`: %s has no flag %s", opsDoc, strings.Join(cmd, " "), strings.Join(path, " "), flag)
			}
		}
	}
}

func flagListed(help, flag string) bool {
	if strings.HasPrefix(flag, "--") {
		return regexp.MustCompile(`(?m)^\s+(-\w, )?` + regexp.QuoteMeta(flag) + `\b`).MatchString(help)
	}
	return regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(flag) + `, --`).MatchString(help)
}

// docMetricNames are the fjord_* metric names the operations guide names.
func docMetricNames(t *testing.T) []string {
	t.Helper()
	names := regexp.MustCompile(`\bfjord_[a-z_]+[a-z]\b`).FindAllString(string(readFile(t, opsDoc)), -1)
	slices.Sort(names)
	return slices.Compact(names)
}

// TestOperationsDocCommandParser: the parser finds commands where the
// doc writes them (after exec, kubectl --, until, in pipes).
func TestOperationsDocCommandParser(t *testing.T) {
	joined := map[string]bool{}
	for _, c := range docFjordCommands(t) {
		joined[strings.Join(c, " ")] = true
	}
	for _, want := range []string{
		"cluster describe",                       // after kubectl exec and compose exec
		"healthcheck http://kafka-1:8080/readyz", // after until
		"cluster remove-broker 4 --throttle 50000000",
	} {
		if !joined[want] {
			t.Errorf("the doc's command `fjord %s` was not found; found %v", want, joined)
		}
	}
	if len(docMetricNames(t)) < 10 {
		t.Errorf("the metric names parser found %v", docMetricNames(t))
	}
}

// TestKubernetesSecretExample: the credentials template names the keys
// docs/operations.md reads from it.
func TestKubernetesSecretExample(t *testing.T) {
	k := loadK8s(t)
	s := k.get("Secret", "fjord-connector-credentials")
	ops := string(readFile(t, "docs/operations.md"))
	for key := range get(s, "stringData").(map[string]any) {
		if !strings.Contains(ops, key) {
			t.Errorf("secret key %s is not used in docs/operations.md", key)
		}
	}
}
