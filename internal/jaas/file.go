package jaas

import (
	"errors"
	"fmt"
)

// File is a JAAS configuration file: login modules by section name
// (KafkaServer, KafkaClient, KafkaConnect, ...).
type File map[string][]LoginModule

// ParseFile parses a JAAS file in the syntax of Java's ConfigFile:
//
//	Name { class flag key="value" ...; ... };
//
// with // and /* */ comments. A section named twice keeps its last
// definition.
func ParseFile(text string) (File, error) {
	toks, err := tokenize(text, true)
	if err != nil {
		return nil, err
	}
	out := File{}
	p := &parser{toks: toks}
	for p.more() {
		name := p.next()
		if !name.value() {
			return nil, fmt.Errorf("expected a section name, found %q", name.text)
		}
		if !p.next().is("{") {
			return nil, fmt.Errorf("expected { after %s", name.text)
		}
		var mods []LoginModule
		for {
			if !p.more() {
				return nil, fmt.Errorf("section %s is not closed with };", name.text)
			}
			if p.toks[p.i].is("}") {
				p.i++
				break
			}
			m, err := p.module()
			switch {
			case err != nil && m.Class == "":
				return nil, fmt.Errorf("section %s: expected a login module class or }", name.text)
			case errors.Is(err, ErrFlag):
				return nil, fmt.Errorf("section %s, module %s: %w", name.text, m.Class, err)
			case err != nil:
				return nil, fmt.Errorf("section %s, module %s: expected key=\"value\" options ending with ;", name.text, m.Class)
			}
			mods = append(mods, m)
		}
		if !p.next().is(";") {
			return nil, fmt.Errorf("expected ; after section %s", name.text)
		}
		out[name.text] = mods
	}
	return out, nil
}
