package httpsec

import (
	"fmt"
	"os"
	"strings"
	"unicode"
)

// Kafka's basic authentication REST extension and its login module.
const (
	BasicAuthExtension = "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
	propertyFileModule = "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule"
	jaasSection        = "KafkaConnect"
)

// jaasModule is one login module entry of a JAAS section.
type jaasModule struct {
	class, flag string
	options     map[string]string
}

// parseJAAS reads a JAAS configuration file's sections (the syntax of
// Java's ConfigFile: Name { class flag key="value" ...; ... }; with //
// and /* */ comments).
func parseJAAS(text string) (map[string][]jaasModule, error) {
	toks, err := jaasTokens(text)
	if err != nil {
		return nil, err
	}
	out := map[string][]jaasModule{}
	i := 0
	next := func() string {
		if i >= len(toks) {
			return ""
		}
		i++
		return toks[i-1]
	}
	for i < len(toks) {
		name := next()
		if next() != "{" {
			return nil, fmt.Errorf("JAAS file: expected { after %s", name)
		}
		var mods []jaasModule
		for {
			t := next()
			if t == "}" {
				break
			}
			if t == "" {
				return nil, fmt.Errorf("JAAS file: section %s is not closed with };", name)
			}
			m := jaasModule{class: t, flag: next(), options: map[string]string{}}
			for {
				k := next()
				if k == ";" {
					break
				}
				if k == "" || next() != "=" {
					return nil, fmt.Errorf("JAAS file: section %s, module %s: expected key=\"value\" options ending with ;", name, m.class)
				}
				m.options[k] = next()
			}
			mods = append(mods, m)
		}
		if t := next(); t != ";" {
			return nil, fmt.Errorf("JAAS file: expected ; after section %s", name)
		}
		out[name] = mods
	}
	return out, nil
}

func jaasTokens(s string) ([]string, error) {
	var toks []string
	r := []rune(s)
	for i := 0; i < len(r); {
		c := r[i]
		switch {
		case unicode.IsSpace(c):
			i++
		case c == '/' && i+1 < len(r) && r[i+1] == '/':
			for i < len(r) && r[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(r) && r[i+1] == '*':
			end := strings.Index(string(r[i+2:]), "*/")
			if end < 0 {
				return nil, fmt.Errorf("JAAS file: unclosed /* comment")
			}
			i += 2 + len([]rune(string(r[i+2:])[:end])) + 2
		case c == '{' || c == '}' || c == ';' || c == '=':
			toks = append(toks, string(c))
			i++
		case c == '"' || c == '\'':
			j := i + 1
			var b strings.Builder
			for ; j < len(r) && r[j] != c; j++ {
				if r[j] == '\\' && j+1 < len(r) {
					j++
				}
				b.WriteRune(r[j])
			}
			if j >= len(r) {
				return nil, fmt.Errorf("JAAS file: unclosed quoted value")
			}
			toks = append(toks, b.String())
			i = j + 1
		default:
			j := i
			for j < len(r) && !unicode.IsSpace(r[j]) && !strings.ContainsRune("{};=\"'", r[j]) {
				j++
			}
			toks = append(toks, string(r[i:j]))
			i = j
		}
	}
	return toks, nil
}

// jaasCredentialsFile is the file option of the KafkaConnect section's
// PropertyFileLoginModule in the JAAS file at path.
func jaasCredentialsFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("JAAS file for %s: %w", BasicAuthExtension, err)
	}
	sections, err := parseJAAS(string(b))
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	mods, ok := sections[jaasSection]
	if !ok {
		return "", fmt.Errorf("JAAS file %s has no %s section; add: %s { %s required file=\"/path/credentials.properties\"; };", path, jaasSection, jaasSection, propertyFileModule)
	}
	for _, m := range mods {
		if m.class == propertyFileModule {
			if strings.TrimSpace(m.options["file"]) == "" {
				return "", fmt.Errorf("JAAS file %s: %s needs file=\"/path/credentials.properties\"", path, propertyFileModule)
			}
			return m.options["file"], nil
		}
	}
	return "", fmt.Errorf("JAAS file %s: the %s section must use %s (the only login module Fjord reads)", path, jaasSection, propertyFileModule)
}

// jaasPathFromOpts finds -Djava.security.auth.login.config=path in a
// JVM options string (KAFKA_OPTS).
func jaasPathFromOpts(opts string) string {
	for _, f := range strings.Fields(opts) {
		if v, ok := strings.CutPrefix(f, "-Djava.security.auth.login.config="); ok {
			return strings.Trim(v, `"'`)
		}
	}
	return ""
}
