package protocol

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/fjordhq/fjord/internal/javaregex"
)

// ssl.principal.mapping.rules, as Kafka's SslPrincipalMapper reads them:
// a comma-separated list of DEFAULT (the subject DN as it is) and
// RULE:pattern/replacement/[LU] (when pattern matches the whole DN, the
// DN with the pattern replaced by replacement, lower- or upper-cased),
// tried in order; the first that applies names the principal. Kafka's
// own regular expressions split and parse the list, so the same strings
// are accepted and refused, with Kafka's messages.
//
// Patterns and replacements are Java's, run by internal/javaregex:
// Java-only constructs (look-around, back references in the pattern,
// possessive quantifiers) are refused when the rules are parsed; in a
// replacement $n is group n, \x is x, and a $n beyond the pattern's
// groups is a literal $n (Kafka escapes those first).

const ruleSyntax = `(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)`

var (
	ruleSplitter = regexp.MustCompile(`\s*(` + ruleSyntax + `)\s*(,\s*|$)`)
	ruleParser   = regexp.MustCompile(`^(?:` + ruleSyntax + `)`)
	backRef      = regexp.MustCompile(`\$(\d+)`)
)

// PrincipalMapper maps a client certificate's subject DN to the principal
// name. A nil *PrincipalMapper is DEFAULT.
type PrincipalMapper struct {
	rules []mappingRule
}

type mappingRule struct {
	isDefault  bool
	pattern    *javaregex.Regex
	replace    string
	lower      bool
	upper      bool
	hasReplace bool
}

// ParsePrincipalMappingRules parses ssl.principal.mapping.rules. Empty
// rules (",,") are skipped, as in Kafka; an empty list maps nothing, so
// every certificate is refused.
func ParsePrincipalMappingRules(rules string) (*PrincipalMapper, error) {
	m := &PrincipalMapper{}
	for _, sm := range ruleSplitter.FindAllStringSubmatch(strings.TrimSpace(rules), -1) {
		rule := sm[1]
		loc := ruleParser.FindStringSubmatchIndex(rule)
		if loc == nil {
			return nil, fmt.Errorf("Invalid rule: %s", rule)
		}
		if loc[1] != len(rule) {
			return nil, fmt.Errorf("Invalid rule: `%s`, unmatched substring: `%s`", rule, rule[loc[1]:])
		}
		group := func(i int) (string, bool) {
			if loc[2*i] < 0 {
				return "", false
			}
			return rule[loc[2*i]:loc[2*i+1]], true
		}
		if _, ok := group(1); ok {
			m.rules = append(m.rules, mappingRule{isDefault: true})
			continue
		}
		pat, ok := group(2)
		if !ok {
			continue // an empty rule
		}
		repl, _ := group(4)
		flag, _ := group(6)
		pattern, err := javaregex.Compile(pat)
		if err != nil {
			return nil, fmt.Errorf("Invalid rule: `%s`: the pattern %v", rule, err)
		}
		m.rules = append(m.rules, mappingRule{
			pattern: pattern, replace: repl, hasReplace: true, lower: flag == "L", upper: flag == "U",
		})
	}
	return m, nil
}

// Name is the principal name of a subject DN (RFC 2253, as subjectDN
// writes it), or Kafka's NoMatchingRule error when no rule applies.
func (m *PrincipalMapper) Name(dn string) (string, error) {
	if m == nil {
		return dn, nil
	}
	for _, r := range m.rules {
		name, ok, err := r.apply(dn)
		if err != nil {
			return "", fmt.Errorf("Failed to map name for '%s' based on SSL principal mapping rules: %w", dn, err)
		}
		if ok {
			return name, nil
		}
	}
	return "", fmt.Errorf("No rules apply to %s, rules %s", dn, m.ruleList())
}

// String is Kafka's SslPrincipalMapper.toString.
func (m *PrincipalMapper) String() string {
	return "SslPrincipalMapper(rules = " + m.ruleList() + ")"
}

func (m *PrincipalMapper) ruleList() string {
	var parts []string
	if m != nil {
		for _, r := range m.rules {
			parts = append(parts, r.String())
		}
	} else {
		parts = []string{"DEFAULT"}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func (r mappingRule) String() string {
	if r.isDefault {
		return "DEFAULT"
	}
	s := "RULE:" + r.pattern.String()
	if r.hasReplace {
		s += "/" + r.replace
	}
	switch {
	case r.lower:
		s += "/L"
	case r.upper:
		s += "/U"
	}
	return s
}

// apply is Rule.apply: the DN when DEFAULT; else, when the pattern
// matches the whole DN, every match replaced (Java's replaceAll) and the
// case changed.
func (r mappingRule) apply(dn string) (string, bool, error) {
	if r.isDefault {
		return dn, true, nil
	}
	if !r.pattern.Matches(dn) {
		return "", false, nil
	}
	out, err := r.pattern.ReplaceAll(dn, escapeLiteralBackReferences(r.replace, r.pattern.NumSubexp()))
	if err != nil {
		return "", false, err
	}
	switch {
	case r.lower:
		out = strings.ToLower(out)
	case r.upper:
		out = strings.ToUpper(out)
	}
	return out, true, nil
}

// escapeLiteralBackReferences is Kafka's (taken there from Apache NiFi):
// a $n naming a group the pattern does not have is shortened digit by
// digit ($123 with 12 groups is $12 and a literal 3), and if still too
// large is escaped to a literal $n. Like Kafka's, it inserts at offsets
// of the unmodified text, so two escapes in one replacement land where
// Kafka's land.
func escapeLiteralBackReferences(unescaped string, groups int) string {
	if groups == 0 {
		return unescaped
	}
	value := unescaped
	for _, loc := range backRef.FindAllStringSubmatchIndex(unescaped, -1) {
		num := unescaped[loc[2]:loc[3]]
		if strings.HasPrefix(num, "0") {
			continue
		}
		idx, err := strconv.Atoi(num)
		if err != nil {
			continue // more digits than an int holds; Java would fail here
		}
		for idx > groups && idx >= 10 {
			idx /= 10
		}
		if idx > groups {
			start := loc[2] - 1 // the '$'
			if start > len(value) {
				start = len(value)
			}
			value = value[:start] + `\` + value[start:]
		}
	}
	return value
}
