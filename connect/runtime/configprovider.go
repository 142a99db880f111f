package runtime

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/configprovider"
	"github.com/fjordhq/fjord/connect/herder"
)

// resolveWorkerProps builds the providers a worker.properties declares
// (config.providers ...) and resolves the variables in its other
// properties, as Kafka's WorkerConfig does, so bootstrap credentials can
// come from files or the environment too.
func resolveWorkerProps(props map[string]string) (map[string]string, configprovider.Providers, error) {
	providers, err := configprovider.FromProps(props)
	if err != nil {
		return nil, nil, fmt.Errorf("worker config: %w", err)
	}
	// The providers' own settings are taken as written (Kafka does not
	// resolve them either).
	rest := map[string]string{}
	for k, v := range props {
		if k != configprovider.ProvidersKey && !strings.HasPrefix(k, configprovider.ProvidersKey+".") {
			rest[k] = v
		}
	}
	resolved, err := providers.Resolve(rest)
	if err != nil {
		return nil, nil, fmt.Errorf("worker config: %w", err)
	}
	out := maps.Clone(props)
	maps.Copy(out, resolved)
	return out, providers, nil
}

// resolvedConfig is a connector or task config with its variables
// resolved, and the mask that keeps the values that must not be shown
// (resolved variables and PASSWORD-type values) out of logs and status
// traces.
type resolvedConfig struct {
	props map[string]string
	mask  *secretMask
}

// resolveConnectorConfig resolves the variables of a stored connector
// (or task) config with the worker's providers, when a connector or task
// starts (Kafka's WorkerConfigTransformer). The stored config keeps its
// placeholders; errors name the key and variable, never a value.
func (w *Worker) resolveConnectorConfig(what string, raw map[string]string) (*resolvedConfig, error) {
	props, secrets, err := w.cfg.Providers.ResolveSecrets(raw)
	if err != nil {
		return nil, &ConnectError{Msg: fmt.Sprintf("%s: config variables could not be resolved", what), Err: err}
	}
	m := &secretMask{}
	m.add(secrets...)
	m.add(passwordValues(w.cfg, props)...)
	return &resolvedConfig{props: props, mask: m}, nil
}

// passwordValues returns the values of a connector config's PASSWORD
// keys: Kafka's connector keys with the transformations' and predicates'
// (enriched as validation does), the connector's own ConfigDef, and the
// client overrides (producer.override.sasl.jaas.config and the like).
func passwordValues(w *WorkerConfig, props map[string]string) []string {
	var out []string
	take := func(def *connect.ConfigDef, prefix string) {
		if def == nil {
			return
		}
		for _, k := range def.Keys() {
			if k.Type == connect.TypePassword {
				if v := props[prefix+k.Name]; v != "" {
					out = append(out, v)
				}
			}
		}
	}
	for _, kind := range []ClientKind{ProducerClient, ConsumerClient, AdminClient} {
		for _, k := range kafkaDefs()[string(kind)] {
			if k.Type == "PASSWORD" {
				if v := props[string(kind)+".override."+k.Name]; v != "" {
					out = append(out, v)
				}
			}
		}
	}
	p, typ, err := LookupConnector(props["connector.class"])
	if err != nil {
		return out
	}
	take(enrichConnectorDef(ConnectorConfigDef(typ), props, w, p), "")
	if conn, ok := p.New().(connect.Connector); ok {
		take(conn.Config(), "")
	}
	return out
}

// loggableConfig is a config as it may be logged (Kafka's "ConnectorConfig
// values:" dump): the keys some definition knows — Kafka's connector
// keys with the transformations' and predicates', and the connector's
// own — with their stored values (placeholders unresolved) and PASSWORD
// values as [hidden]. Keys no definition types are left out: nothing
// says whether they hold secrets.
func loggableConfig(w *WorkerConfig, raw map[string]string) map[string]string {
	p, typ, err := LookupConnector(raw["connector.class"])
	if err != nil {
		return map[string]string{"connector.class": raw["connector.class"]}
	}
	out := map[string]string{}
	take := func(def *connect.ConfigDef) {
		if def == nil {
			return
		}
		for _, k := range def.Keys() {
			v, ok := raw[k.Name]
			if !ok {
				continue
			}
			if k.Type == connect.TypePassword && !configprovider.HasVariables(v) {
				v = "[hidden]"
			}
			out[k.Name] = v
		}
	}
	take(enrichConnectorDef(ConnectorConfigDef(typ), raw, w, p))
	if conn, ok := p.New().(connect.Connector); ok {
		take(conn.Config())
	}
	// Client overrides (KIP-458), typed by Kafka's client definitions.
	for _, kind := range []ClientKind{ProducerClient, ConsumerClient, AdminClient} {
		for _, k := range kafkaDefs()[string(kind)] {
			key := string(kind) + ".override." + k.Name
			v, ok := raw[key]
			if !ok {
				continue
			}
			if k.Type == "PASSWORD" && !configprovider.HasVariables(v) {
				v = "[hidden]"
			}
			out[key] = v
		}
	}
	return out
}

// resolveForValidation resolves a config's variables for validation as
// Kafka's AbstractHerder.validateConnectorConfig does. Variables that do
// not resolve stay as written and their errors are returned by key, to
// be reported on those keys.
func (w *Worker) resolveForValidation(raw map[string]string) (map[string]string, *secretMask, map[string][]string) {
	rc, err := w.resolveConnectorConfig("connector", raw)
	if err == nil {
		return rc.props, rc.mask, nil
	}
	unresolved := map[string][]string{}
	var errs configprovider.ResolveErrors
	if errors.As(err, &errs) {
		for _, e := range errs {
			unresolved[e.Key] = append(unresolved[e.Key], e.Error())
		}
	}
	m := &secretMask{}
	m.add(passwordValues(w.cfg, raw)...)
	return raw, m, unresolved
}

// unresolveInfos puts the placeholders back into a validation answer (the
// values of keys written with variables), masks resolved values out of
// every error message, and adds the errors of variables that did not
// resolve. Kafka shows resolved values here; Fjord does not, so a
// config provider's secrets stay out of REST answers.
func unresolveInfos(infos *herder.ConfigInfos, raw map[string]string, mask *secretMask, unresolved map[string][]string) *herder.ConfigInfos {
	for i := range infos.Configs {
		v := &infos.Configs[i].Value
		if rv, ok := raw[v.Name]; ok && configprovider.HasVariables(rv) && v.Value != nil && *v.Value != "[hidden]" {
			s := rv
			v.Value = &s
		}
		for j, e := range v.Errors {
			v.Errors[j] = mask.String(e)
		}
		for j, r := range v.RecommendedValues {
			v.RecommendedValues[j] = mask.String(r)
		}
		if errs, ok := unresolved[v.Name]; ok {
			// The value was validated as written ("${...}"); its type
			// errors follow from the variable and would only confuse.
			infos.ErrorCount += len(errs) - len(v.Errors)
			v.Errors = errs
			delete(unresolved, v.Name)
		}
	}
	// Keys the definitions do not know (a connector's free-form keys) get
	// an entry of their own, as Kafka reports unknown keys with errors.
	for _, k := range slices.Sorted(maps.Keys(unresolved)) {
		s := raw[k]
		infos.Configs = append(infos.Configs, herder.ConfigInfo{Value: herder.ConfigValueInfo{
			Name: k, Value: &s, RecommendedValues: []string{}, Errors: unresolved[k], Visible: true}})
		infos.ErrorCount += len(unresolved[k])
	}
	return infos
}
