package configprovider

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// variable is Kafka's ConfigTransformer pattern: ${provider:path:key} or
// ${provider:key} (no path).
var variable = regexp.MustCompile(`\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}`)

// HasVariables reports whether a value holds a config variable.
func HasVariables(v string) bool { return variable.MatchString(v) }

// Variables returns the variables in a value, as written.
func Variables(v string) []string { return variable.FindAllString(v, -1) }

// Providers are the configured providers by name (the names of
// config.providers).
type Providers map[string]Provider

// Worker property names (Kafka's WorkerConfig / AbstractConfig).
const (
	ProvidersKey = "config.providers"
	prefix       = "config.providers."
)

// FromProps builds the providers a set of properties configures:
// config.providers lists names; config.providers.<name>.class is the
// class and config.providers.<name>.param.* its settings. No
// config.providers: no providers.
func FromProps(props map[string]string) (Providers, error) {
	out := Providers{}
	var problems []string
	for _, name := range strings.Split(props[ProvidersKey], ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		class, ok := props[prefix+name+".class"]
		if !ok {
			problems = append(problems, fmt.Sprintf("config provider %s is listed in config.providers but config.providers.%s.class is not set (e.g. %s)", name, name, FileClass))
			continue
		}
		params := map[string]string{}
		pp := prefix + name + ".param."
		for k, v := range props {
			if strings.HasPrefix(k, pp) {
				params[strings.TrimPrefix(k, pp)] = v
			}
		}
		p, err := New(class, params)
		if err != nil {
			problems = append(problems, fmt.Sprintf("config provider %s: %v", name, err))
			continue
		}
		out[name] = p
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return out, nil
}

// ResolveError is a variable that could not be resolved.
type ResolveError struct {
	Key      string // the config key whose value holds the variable
	Variable string // as written, e.g. ${file:/etc/secrets.properties:password}
	Reason   string
}

func (e *ResolveError) Error() string {
	return fmt.Sprintf("config %s: cannot resolve %s: %s", e.Key, e.Variable, e.Reason)
}

// ResolveErrors are all the variables of a config that could not be
// resolved.
type ResolveErrors []*ResolveError

func (es ResolveErrors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}

// Resolve returns props with every variable replaced by its value
// (Kafka's ConfigTransformer.transform). Each provider is asked once per
// path for all the keys used with it. Values without variables are
// copied as they are. The error (ResolveErrors) lists every variable
// that could not be resolved, without any resolved value in it.
func (ps Providers) Resolve(props map[string]string) (map[string]string, error) {
	out, _, err := ps.ResolveSecrets(props)
	return out, err
}

// ResolveSecrets is Resolve that also returns the values it put in
// place of variables, so that logs and status traces can mask them.
func (ps Providers) ResolveSecrets(props map[string]string) (map[string]string, []string, error) {
	type loc struct{ provider, path string }
	wanted := map[loc][]string{}
	for _, v := range props {
		for _, m := range variable.FindAllStringSubmatch(v, -1) {
			l := loc{m[1], m[3]}
			wanted[l] = append(wanted[l], m[4])
		}
	}
	if len(wanted) == 0 {
		return maps.Clone(props), nil, nil
	}
	found := map[loc]map[string]string{}
	failed := map[loc]string{}
	for l, keys := range wanted {
		p, ok := ps[l.provider]
		if !ok {
			failed[l] = ps.unknown(l.provider)
			continue
		}
		data, err := p.Get(l.path, keys)
		if err != nil {
			failed[l] = err.Error()
			continue
		}
		found[l] = data
	}
	out := make(map[string]string, len(props))
	var errs ResolveErrors
	var secrets []string
	for _, k := range slices.Sorted(maps.Keys(props)) {
		out[k] = variable.ReplaceAllStringFunc(props[k], func(s string) string {
			m := variable.FindStringSubmatch(s)
			l := loc{m[1], m[3]}
			if why, ok := failed[l]; ok {
				errs = append(errs, &ResolveError{Key: k, Variable: s, Reason: why})
				return s
			}
			v, ok := found[l][m[4]]
			if !ok {
				errs = append(errs, &ResolveError{Key: k, Variable: s, Reason: missing(l.provider, l.path, m[4])})
				return s
			}
			if v != "" {
				secrets = append(secrets, v)
			}
			return v
		})
	}
	if len(errs) > 0 {
		return nil, nil, errs
	}
	return out, secrets, nil
}

func (ps Providers) unknown(name string) string {
	have := slices.Sorted(maps.Keys(ps))
	if len(have) == 0 {
		return fmt.Sprintf("no config provider is configured; add %s to the worker's config.providers and set config.providers.%s.class (e.g. %s)", name, name, FileClass)
	}
	return fmt.Sprintf("config provider %s is not configured (the worker's config.providers is %s); add it there and set config.providers.%s.class", name, strings.Join(have, ","), name)
}

func missing(provider, path, key string) string {
	if path == "" {
		return fmt.Sprintf("provider %s has no value for %s (for env: the variable is not set in the worker's environment)", provider, key)
	}
	return fmt.Sprintf("provider %s found no key %s at %s; add it there or correct the variable", provider, key, path)
}

// Restore puts the variables back (Kafka's AbstractHerder.reverseTransform):
// for each key of resolved whose raw value holds a variable, the raw
// value replaces the resolved one. Task configs a connector derived from
// its resolved config are stored this way, so no secret reaches the
// config store or the REST API.
func Restore(raw, resolved map[string]string) map[string]string {
	out := maps.Clone(resolved)
	for k := range out {
		if rv, ok := raw[k]; ok && HasVariables(rv) {
			out[k] = rv
		}
	}
	return out
}
