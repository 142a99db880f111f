package protocol

import (
	"fmt"
	"strings"
)

// JAAS is one login module entry of a sasl.jaas.config value:
//
//	org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="pw" user_alice="a";
//
// Kafka's JaasConfig accepts exactly one entry per sasl.jaas.config.
type JAAS struct {
	LoginModule string
	Flag        string // required, requisite, sufficient or optional
	Options     map[string]string
}

// ParseJAAS parses a sasl.jaas.config value as Kafka's JaasConfig does:
// the login module class, its control flag, options as key=value with
// values bare or double-quoted (backslash escapes inside quotes), and a
// closing ';'.
func ParseJAAS(s string) (JAAS, error) {
	var j JAAS
	toks, err := jaasTokens(s)
	if err != nil {
		return j, err
	}
	if len(toks) < 3 || toks[len(toks)-1] != ";" {
		return j, fmt.Errorf("sasl.jaas.config must be '<LoginModule> <flag> [key=\"value\" ...];' (got %q)", s)
	}
	toks = toks[:len(toks)-1]
	j.LoginModule, j.Flag = toks[0], strings.ToLower(toks[1])
	switch j.Flag {
	case "required", "requisite", "sufficient", "optional":
	default:
		return j, fmt.Errorf("sasl.jaas.config: invalid control flag %q (use required, requisite, sufficient or optional)", toks[1])
	}
	j.Options = map[string]string{}
	rest := toks[2:]
	for i := 0; i < len(rest); i += 3 {
		if i+2 >= len(rest) || rest[i+1] != "=" || rest[i] == ";" || rest[i] == "=" {
			return j, fmt.Errorf("sasl.jaas.config: options must be key=value (near %q); a value with spaces needs double quotes", strings.Join(rest[i:], " "))
		}
		j.Options[rest[i]] = rest[i+2]
	}
	return j, nil
}

// jaasTokens splits into words, '=' and ';', with quoted strings as one
// word (Java's StreamTokenizer as JaasConfig configures it).
func jaasTokens(s string) ([]string, error) {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '=' || c == ';':
			toks = append(toks, string(c))
			i++
		case c == '"' || c == '\'':
			var b strings.Builder
			i++
			closed := false
			for i < len(s) {
				if s[i] == c {
					closed = true
					i++
					break
				}
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				b.WriteByte(s[i])
				i++
			}
			if !closed {
				return nil, fmt.Errorf("sasl.jaas.config: unterminated quoted value")
			}
			toks = append(toks, b.String())
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n\r=;\"'", rune(s[j])) {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		}
	}
	return toks, nil
}

// PlainUsersFromJAAS returns the user_<name>="<password>" options of a
// PlainLoginModule entry, the broker's PLAIN credentials.
func PlainUsersFromJAAS(j JAAS) PlainUsers {
	users := PlainUsers{}
	for k, v := range j.Options {
		if name, ok := strings.CutPrefix(k, "user_"); ok && name != "" {
			users[name] = v
		}
	}
	return users
}
