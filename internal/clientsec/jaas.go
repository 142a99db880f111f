package clientsec

import (
	"fmt"
	"strings"
)

// LoginModule is one entry of a JAAS configuration line
// (sasl.jaas.config): the login module class, its control flag and its
// options.
type LoginModule struct {
	Class   string
	Flag    string
	Options map[string]string
}

// ParseJAAS parses Kafka's sasl.jaas.config, which holds exactly one login
// module: `<class> <flag> key=value ... ;` where values are bare words or
// "double" / 'single' quoted strings (Kafka's JaasConfig, which tokenises
// like Java's StreamTokenizer: a backslash in a quoted string escapes the
// next character). Errors never quote option values, which hold
// passwords.
func ParseJAAS(s string) (*LoginModule, error) {
	toks, err := jaasTokens(s)
	if err != nil {
		return nil, err
	}
	bad := func(why string) error {
		return fmt.Errorf("sasl.jaas.config is not a valid JAAS login module line (%s); expected e.g. org.apache.kafka.common.security.plain.PlainLoginModule required username=\"alice\" password=\"...\";", why)
	}
	if len(toks) < 3 || toks[len(toks)-1] != ";" {
		return nil, bad("it must end with ';'")
	}
	lm := &LoginModule{Class: toks[0], Flag: strings.ToLower(toks[1]), Options: map[string]string{}}
	switch lm.Flag {
	case "required", "requisite", "sufficient", "optional":
	default:
		return nil, bad("the control flag after the class must be required, requisite, sufficient or optional")
	}
	rest := toks[2 : len(toks)-1]
	for len(rest) > 0 {
		if rest[0] == ";" {
			return nil, bad("sasl.jaas.config must contain exactly one login module")
		}
		if len(rest) < 3 || rest[1] != "=" {
			return nil, bad("options must be key=value")
		}
		lm.Options[rest[0]] = rest[2]
		rest = rest[3:]
	}
	return lm, nil
}

// jaasTokens splits a JAAS line into words, quoted strings (quotes
// removed), "=" and ";".
func jaasTokens(s string) ([]string, error) {
	var toks []string
	r := []rune(s)
	for i := 0; i < len(r); {
		c := r[i]
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
			for i < len(r) {
				if r[i] == '\\' && i+1 < len(r) {
					b.WriteRune(r[i+1])
					i += 2
					continue
				}
				if r[i] == c {
					closed = true
					i++
					break
				}
				b.WriteRune(r[i])
				i++
			}
			if !closed {
				return nil, fmt.Errorf("sasl.jaas.config has an unterminated %c-quoted value", c)
			}
			toks = append(toks, b.String())
		default:
			start := i
			for i < len(r) && !strings.ContainsRune(" \t\n\r=;\"'", r[i]) {
				i++
			}
			toks = append(toks, string(r[start:i]))
		}
	}
	return toks, nil
}
