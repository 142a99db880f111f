package jaas

import (
	"errors"
	"strings"
)

// LoginModule is one login module entry: its class, its control flag
// (lower case) and its options.
type LoginModule struct {
	Class   string
	Flag    string // required, requisite, sufficient or optional
	Options map[string]string
}

// The ways a login module entry can be malformed. Callers that word
// their own messages tell them apart with errors.Is.
var (
	ErrFlag    = errors.New("the control flag after the class must be required, requisite, sufficient or optional")
	ErrOptions = errors.New("options must be key=value; a value with spaces needs double quotes")
	ErrEnd     = errors.New("a login module must end with ';'")
	ErrOneOnly = errors.New("sasl.jaas.config must contain exactly one login module")
)

// parser walks a token list.
type parser struct {
	toks []token
	i    int
}

func (p *parser) more() bool { return p.i < len(p.toks) }

// next returns the next token; past the end, a punctuation token that
// matches nothing.
func (p *parser) next() token {
	if !p.more() {
		return token{punct, ""}
	}
	p.i++
	return p.toks[p.i-1]
}

// module reads `<class> <flag> [key=value ...] ;`.
func (p *parser) module() (LoginModule, error) {
	lm := LoginModule{Options: map[string]string{}}
	class := p.next()
	if !class.value() {
		return lm, ErrEnd
	}
	lm.Class = class.text
	flag := p.next()
	lm.Flag = strings.ToLower(flag.text)
	switch {
	case !flag.value():
		return lm, ErrFlag
	case lm.Flag == "required", lm.Flag == "requisite", lm.Flag == "sufficient", lm.Flag == "optional":
	default:
		return lm, ErrFlag
	}
	for {
		k := p.next()
		switch {
		case k.is(";"):
			return lm, nil
		case k.is(""):
			return lm, ErrEnd
		case !k.value():
			return lm, ErrOptions
		}
		eq, v := p.next(), p.next()
		if !eq.is("=") || !v.value() {
			return lm, ErrOptions
		}
		lm.Options[k.text] = v.text
	}
}

// ParseModule parses a sasl.jaas.config value, which holds exactly one
// login module (Kafka's JaasConfig). Errors wrap ErrFlag, ErrOptions,
// ErrEnd or ErrOneOnly, or report an unterminated quoted value.
func ParseModule(s string) (LoginModule, error) {
	toks, err := tokenize(s, false)
	if err != nil {
		return LoginModule{}, err
	}
	if len(toks) == 0 || !toks[len(toks)-1].is(";") {
		return LoginModule{}, ErrEnd
	}
	p := &parser{toks: toks}
	lm, err := p.module()
	if err != nil {
		return LoginModule{}, err
	}
	if p.more() {
		return LoginModule{}, ErrOneOnly
	}
	return lm, nil
}
