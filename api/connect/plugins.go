package connectapi

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/herder"
	"github.com/fjordhq/fjord/connect/plugins"
)

// PluginInfo is an element of GET /connector-plugins.
type PluginInfo struct {
	Class   string `json:"class"`
	Type    string `json:"type"`
	Version string `json:"version,omitempty"` // Kafka omits "undefined"
}

// PluginSource lists the installed plugins and describes their configs.
type PluginSource interface {
	// Plugins returns every plugin in Kafka's order: sink connectors,
	// source connectors, transformations, predicates, converters, header
	// converters, each sorted by class.
	Plugins() []PluginInfo
	// PluginConfig answers GET /connector-plugins/{name}/config; an
	// unknown name is a 404 *herder.Error ("Unknown plugin X.").
	PluginConfig(name string) ([]herder.ConfigKeyInfo, error)
}

// PluginConfigProvider is implemented by herders that describe plugin
// configs themselves (they know the runtime's common connector keys); it
// takes precedence over Options.Plugins for GET .../config.
type PluginConfigProvider interface {
	ConnectorPluginConfig(ctx context.Context, name string) ([]herder.ConfigKeyInfo, error)
}

// RegistryPlugins is the PluginSource backed by the connect/plugins
// registry. For connectors Kafka lists the plugin's own keys followed by
// the framework's (SourceConnectorConfig / SinkConnectorConfig); set
// SourceBase and SinkBase to the runtime's definitions to do the same.
type RegistryPlugins struct {
	SourceBase, SinkBase *connect.ConfigDef
}

// kindOrder is the order Kafka's ConnectorPluginsResource lists kinds in.
var kindOrder = []plugins.Kind{plugins.Sink, plugins.Source, plugins.Transformation, plugins.Predicate, plugins.Converter, plugins.HeaderConverter}

// Plugins implements PluginSource.
func (RegistryPlugins) Plugins() []PluginInfo {
	var out []PluginInfo
	for _, k := range kindOrder {
		for _, p := range plugins.List(k) {
			out = append(out, PluginInfo{Class: p.Class, Type: string(p.Kind), Version: p.Version})
		}
	}
	return out
}

// PluginConfig implements PluginSource.
func (rp RegistryPlugins) PluginConfig(name string) ([]herder.ConfigKeyInfo, error) {
	p, ok := plugins.Lookup(name)
	if !ok {
		return nil, herder.Errorf(http.StatusNotFound, "Unknown plugin %s.", name)
	}
	def := p.ConfigDef()
	var base *connect.ConfigDef
	switch p.Kind {
	case plugins.Source:
		base = rp.SourceBase
	case plugins.Sink:
		base = rp.SinkBase
	}
	// The plugin's keys first, then the framework's it does not redefine,
	// each in definition order (Kafka's LinkedHashMap with putIfAbsent).
	keys := ConfigKeyInfos(def)
	if base != nil {
		for _, k := range ConfigKeyInfos(base) {
			if def == nil || def.Key(k.Name) == nil {
				keys = append(keys, k)
			}
		}
	}
	return keys, nil
}

// ConfigKeyInfos describes a ConfigDef's keys as Kafka's
// AbstractHerder.convertConfigKey does. Internal keys are left out.
func ConfigKeyInfos(def *connect.ConfigDef) []herder.ConfigKeyInfo {
	out := []herder.ConfigKeyInfo{}
	if def == nil {
		return out
	}
	for _, k := range def.Keys() {
		if k.Internal {
			continue
		}
		out = append(out, ConfigKeyInfo(k))
	}
	return out
}

// ConfigKeyInfo describes one key: a key without a group has order -1
// (Kafka's default orderInGroup), and the default is printed as Kafka's
// ConfigDef.convertToString prints it.
func ConfigKeyInfo(k connect.ConfigKey) herder.ConfigKeyInfo {
	ki := herder.ConfigKeyInfo{
		Name:          k.Name,
		Type:          k.Type.String(),
		Required:      k.Required(),
		Importance:    k.Importance.String(),
		Documentation: k.Doc,
		Group:         k.Group,
		Order:         k.OrderInGroup,
		Width:         k.Width.String(),
		DisplayName:   k.DisplayName,
		Dependents:    append([]string{}, k.Dependents...),
	}
	if ki.DisplayName == "" {
		ki.DisplayName = k.Name
	}
	if k.Group == "" && k.OrderInGroup == 0 {
		ki.Order = -1
	}
	if !k.Required() && k.Default != nil {
		s := DefaultString(k.Default)
		ki.DefaultValue = &s
	}
	return ki
}

// DefaultString prints a config value as Java's ConfigDef.convertToString:
// lists joined by commas, doubles with a fractional part ("1.0"),
// passwords hidden.
func DefaultString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case connect.Password:
		return "[hidden]"
	case []string:
		return strings.Join(x, ",")
	case float64:
		s := strconv.FormatFloat(x, 'f', -1, 64)
		if !strings.ContainsAny(s, ".eEIN") {
			s += ".0"
		}
		return s
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}

// listPlugins answers GET /connector-plugins?connectorsOnly=. Kafka's
// parameter is a boolean defaulting to true; any value but "true" (in any
// case) is false.
func (s *Server) listPlugins(w http.ResponseWriter, r *http.Request) {
	connectorsOnly := true
	if v, ok := r.URL.Query()["connectorsOnly"]; ok {
		connectorsOnly = javaBool(v[0])
	}
	all := s.opts.Plugins.Plugins()
	out := make([]PluginInfo, 0, len(all))
	for _, p := range all {
		if connectorsOnly && p.Type != string(plugins.Source) && p.Type != string(plugins.Sink) {
			continue
		}
		if p.Version == "undefined" {
			p.Version = ""
		}
		out = append(out, p)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) pluginConfig(w http.ResponseWriter, r *http.Request) {
	name := param(r, "plugin")
	var keys []herder.ConfigKeyInfo
	var err error
	if pp, ok := s.h.(PluginConfigProvider); ok {
		ctx, cancel := s.ctx(r)
		defer cancel()
		keys, err = pp.ConnectorPluginConfig(ctx, name)
	} else {
		keys, err = s.opts.Plugins.PluginConfig(name)
	}
	if err != nil {
		s.fail(w, r, nil, err)
		return
	}
	if keys == nil {
		keys = []herder.ConfigKeyInfo{}
	}
	writeJSON(w, http.StatusOK, keys)
}

// validateConfig answers PUT /connector-plugins/{plugin}/config/validate.
func (s *Server) validateConfig(w http.ResponseWriter, r *http.Request) {
	if e := requireJSON(r); e != nil {
		writeError(w, e)
		return
	}
	body, e := readBody(r)
	if e != nil {
		writeError(w, e)
		return
	}
	cfg, nulls, err := decodeConfig(body)
	if err != nil || cfg == nil {
		writeError(w, configBodyError(err))
		return
	}
	plugin := param(r, "plugin")
	if included, ok := cfg["connector.class"]; ok && !pluginMatches(included, plugin) {
		writeError(w, badRequest("Included connector type %s does not match request type %s", included, plugin))
		return
	}
	ctx, cancel := s.ctx(r)
	defer cancel()
	infos, err := s.h.ValidateConnectorConfig(ctx, cfg)
	if err != nil {
		s.fail(w, r, body, err)
		return
	}
	infos = addNullErrors(infos, nulls)
	writeJSON(w, http.StatusOK, normalizeConfigInfos(infos))
}

// pluginMatches is Kafka's check that the body's connector.class names
// the path's plugin: the class, less a "Connector" suffix, ends with the
// plugin name less that suffix ("org...FileStreamSourceConnector" matches
// "FileStreamSource"). Fjord's aliases ("file-source") also match when
// both names find the same registered plugin.
func pluginMatches(included, plugin string) bool {
	if strings.HasSuffix(normalizedPluginName(included), normalizedPluginName(plugin)) {
		return true
	}
	a, okA := plugins.Lookup(included)
	b, okB := plugins.Lookup(plugin)
	return okA && okB && a.Class == b.Class
}

func normalizedPluginName(n string) string {
	const suffix = "Connector"
	if strings.HasSuffix(n, suffix) && len(n) > len(suffix) {
		return n[:len(n)-len(suffix)]
	}
	return n
}

// javaBool parses a query parameter as Java's Boolean.valueOf.
func javaBool(s string) bool { return strings.EqualFold(s, "true") }

// nullValueError is Kafka's message for a config key given as JSON null.
const nullValueError = "Null value can not be supplied as the configuration value."

// addNullErrors adds Kafka's null-value error to each key given as null
// (Kafka's validation does the same: the key keeps its place, the error
// follows its other errors).
func addNullErrors(infos *herder.ConfigInfos, nulls []string) *herder.ConfigInfos {
	if infos == nil || len(nulls) == 0 {
		return infos
	}
	out := *infos
	out.Configs = slices.Clone(infos.Configs)
	for _, n := range nulls {
		for i := range out.Configs {
			if out.Configs[i].Value.Name == n || out.Configs[i].Definition.Name == n {
				out.Configs[i].Value.Value = nil
				out.Configs[i].Value.Errors = append(slices.Clone(out.Configs[i].Value.Errors), nullValueError)
				out.ErrorCount++
				break
			}
		}
	}
	return &out
}

// normalizeConfigInfos replaces nil lists with empty ones: Kafka never
// prints null for groups, configs, recommended values or errors.
func normalizeConfigInfos(in *herder.ConfigInfos) *herder.ConfigInfos {
	if in == nil {
		return &herder.ConfigInfos{Groups: []string{}, Configs: []herder.ConfigInfo{}}
	}
	out := *in
	if out.Groups == nil {
		out.Groups = []string{}
	}
	out.Configs = slices.Clone(in.Configs)
	if out.Configs == nil {
		out.Configs = []herder.ConfigInfo{}
	}
	for i := range out.Configs {
		v := &out.Configs[i].Value
		if v.RecommendedValues == nil {
			v.RecommendedValues = []string{}
		}
		if v.Errors == nil {
			v.Errors = []string{}
		}
	}
	return &out
}
