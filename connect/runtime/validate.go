package runtime

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/herder"
	"github.com/fjordhq/fjord/connect/plugins"
)

// Validation is the answer to "is this connector config valid?", with
// every key's definition and value: what Kafka's
// AbstractHerder.validateConnectorConfig computes before it becomes the
// REST API's ConfigInfos (herder.ValidateConnectorConfig converts it).
type Validation struct {
	// Name is the connector class as given in connector.class.
	Name       string
	ErrorCount int
	Groups     []string
	Configs    []ValidatedConfig
}

// ValidatedConfig is one key: its definition (nil for values without
// one) and its validated value.
type ValidatedConfig struct {
	Key   *ValidatedKey
	Value ValidatedValue
}

// ValidatedKey is a key's definition as the REST API shows it.
type ValidatedKey struct {
	Name          string
	Type          string
	Required      bool
	Default       *string
	Importance    string
	Documentation string
	Group         *string
	Order         int
	Width         string
	DisplayName   string
	Dependents    []string
}

// ValidatedValue is a key's value after validation: the parsed value
// printed back (nil if unset or unparsable), recommended values, errors.
type ValidatedValue struct {
	Name        string
	Value       *string
	Recommended []string
	Errors      []string
	Visible     bool
}

// ErrNoConnectorClass is returned by ValidateConnectorConfig for a config
// without connector.class (Kafka answers with a BadRequestException).
var ErrNoConnectorClass = errors.New("Connector config contains no connector type")

// UnknownConnectorError is returned for a connector.class naming no
// connector plugin.
type UnknownConnectorError struct{ Class string }

func (e *UnknownConnectorError) Error() string {
	var names []string
	for _, p := range plugins.List(plugins.Source, plugins.Sink) {
		names = append(names, p.Class)
	}
	return fmt.Sprintf("Failed to find any class that implements Connector and which name matches %s, available connectors are: %s", e.Class, strings.Join(names, ", "))
}

// ValidateConnectorConfig validates a connector config as Kafka's
// AbstractHerder.validateConnectorConfig does: the common, sink or source
// keys enriched with every transformation's and predicate's keys, the
// sink topic rules, exactly-once checks, the connector's own keys and
// Validate, the converters' keys, and client overrides against the
// worker's override policy. w may be nil (no worker defaults, policy All).
func ValidateConnectorConfig(w *WorkerConfig, props map[string]string) (*Validation, error) {
	class := props["connector.class"]
	if class == "" {
		return nil, ErrNoConnectorClass
	}
	p, typ, err := LookupConnector(class)
	if err != nil {
		return nil, &UnknownConnectorError{class}
	}
	conn, ok := p.New().(connect.Connector)
	if !ok {
		return nil, fmt.Errorf("plugin %s is not a connector", p.Class)
	}
	def := enrichConnectorDef(ConnectorConfigDef(typ), props, w, p)
	values := validateDef(def, props, "")
	byName := map[string]*validatedEntry{}
	for i := range values {
		byName[values[i].name] = &values[i]
	}
	addErr := func(key, msg string) {
		if e := byName[key]; e != nil {
			e.errors = append(e.errors, msg)
		}
	}
	switch typ {
	case SinkType:
		topics := nonEmpty(splitList(props["topics"]))
		regex := strings.TrimSpace(props["topics.regex"])
		for _, m := range sinkTopicProblems(props) {
			switch {
			case strings.HasPrefix(m, "The DLQ topic") && len(topics) > 0:
				addErr("topics", m)
			case strings.HasPrefix(m, "The DLQ topic"):
				addErr("topics.regex", m)
			default:
				addErr("topics", m)
				if regex != "" || len(topics) == 0 {
					addErr("topics.regex", m)
				}
			}
		}
	case SourceType:
		validateExactlyOnce(w, conn, props, addErr)
	}

	var configs []ValidatedConfig
	keys := def.Keys()
	groups := def.Groups()
	// The connector's own keys and values (Kafka: connector.config() and
	// connector.validate(props)).
	own := conn.Config()
	var ownValues []validatedEntry
	if cv, ok := conn.(connect.ConfigValidator); ok {
		for _, v := range cv.Validate(props) {
			ownValues = append(ownValues, entryFromConfigValue(v, own))
		}
	} else if own != nil {
		ownValues = validateDef(own, props, "")
	}
	if own != nil {
		keys = append(slices.Clone(keys), own.Keys()...)
		for _, g := range own.Groups() {
			if !slices.Contains(groups, g) {
				groups = append(groups, g)
			}
		}
	}
	allValues := append(values, ownValues...)
	errorCount := 0
	valueByName := map[string]validatedEntry{}
	keyNames := map[string]bool{}
	for _, k := range keys {
		keyNames[k.Name] = true
	}
	for _, v := range allValues {
		valueByName[v.name] = v
		if !keyNames[v.name] {
			configs = append(configs, ValidatedConfig{Value: v.info(nil)})
			errorCount += len(v.errors)
		}
	}
	seen := map[string]bool{}
	for i := range keys {
		k := &keys[i]
		if seen[k.Name] || k.Internal {
			continue
		}
		seen[k.Name] = true
		vc := ValidatedConfig{Key: keyInfo(k, "")}
		if v, ok := valueByName[k.Name]; ok {
			vc.Value = v.info(k)
			errorCount += len(v.errors)
		}
		configs = append(configs, vc)
	}
	result := &Validation{Name: class, ErrorCount: errorCount, Groups: groups, Configs: configs}

	// Client overrides, then converters, in Kafka's merge order.
	policy := "All"
	if w != nil {
		policy = w.ClientConfigOverridePolicy
	}
	dlq := typ == SinkType && strings.TrimSpace(props["errors.deadletterqueue.topic.name"]) != ""
	topicCreation := typ == SourceType && len(connect.WithPrefix(props, "topic.creation.default.")) > 0
	if typ == SourceType || dlq {
		result.merge(validateOverrides(policy, ProducerOverridePrefix, "producer", props))
	}
	if typ == SinkType {
		result.merge(validateOverrides(policy, ConsumerOverridePrefix, "consumer", props))
	}
	if topicCreation || dlq {
		result.merge(validateOverrides(policy, AdminOverridePrefix, "admin", props))
	}
	for _, c := range []struct{ key, typ string }{{"header.converter", "header"}, {"key.converter", "key"}, {"value.converter", "value"}} {
		if e := byName[c.key]; e != nil && len(e.errors) == 0 && props[c.key] != "" {
			result.merge(validateConverter(props, c.key, c.typ))
		}
	}
	return result, nil
}

func (v *Validation) merge(o *Validation) {
	if o == nil {
		return
	}
	v.ErrorCount += o.ErrorCount
	v.Configs = append(v.Configs, o.Configs...)
	for _, g := range o.Groups {
		if !slices.Contains(v.Groups, g) {
			v.Groups = append(v.Groups, g)
		}
	}
}

// validateExactlyOnce adds the exactly-once errors of Kafka's
// validateSourceConnectorConfig.
func validateExactlyOnce(w *WorkerConfig, conn connect.Connector, props map[string]string, addErr func(key, msg string)) {
	if strings.EqualFold(strings.TrimSpace(props["exactly.once.support"]), "required") {
		if w == nil || !strings.EqualFold(w.ExactlyOnceSourceSupport, "enabled") {
			addErr("exactly.once.support", "This worker does not have exactly-once source support enabled.")
		}
		support := connect.ExactlyOnceUnknown
		if e, ok := conn.(connect.ExactlyOnceSourceConnector); ok {
			support = e.ExactlyOnceSupport(props)
		}
		switch support {
		case connect.ExactlyOnceUnknown:
			addErr("exactly.once.support", `The connector does not implement the API required for preflight validation of exactly-once source support. Please consult the documentation for the connector to determine whether it supports exactly-once semantics, and then consider reconfiguring the connector to use the value "requested" for this property (which will disable this preflight check and allow the connector to be created).`)
		case connect.ExactlyOnceUnsupported:
			addErr("exactly.once.support", "The connector does not support exactly-once semantics with the provided configuration.")
		}
	}
	if strings.EqualFold(strings.TrimSpace(props["transaction.boundary"]), "connector") {
		// Fjord's plugin API has no connector-defined transactions.
		addErr("transaction.boundary", "The connector does not support connector-defined transaction boundaries with the given configuration. Please reconfigure it to use a different transaction boundary definition.")
	}
}

// validatedEntry is Kafka's ConfigValue during validation.
type validatedEntry struct {
	name        string
	value       any // parsed; nil when unset or unparsable
	typ         connect.ConfigType
	raw         bool // value is a raw string from a plugin's own Validate
	recommended []any
	errors      []string
	visible     bool
}

func (e validatedEntry) info(k *connect.ConfigKey) ValidatedValue {
	typ := e.typ
	if k != nil {
		typ = k.Type
	}
	vv := ValidatedValue{Name: e.name, Errors: nonNilStrings(e.errors), Visible: e.visible, Recommended: []string{}}
	if e.raw {
		if s, ok := e.value.(string); ok {
			vv.Value = &s
		}
	} else {
		vv.Value = formatValue(e.value, typ)
	}
	for _, r := range e.recommended {
		rt := typ
		if typ == connect.TypeList {
			rt = connect.TypeString
		}
		if s := formatValue(r, rt); s != nil {
			vv.Recommended = append(vv.Recommended, *s)
		}
	}
	return vv
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func entryFromConfigValue(v connect.ConfigValue, def *connect.ConfigDef) validatedEntry {
	e := validatedEntry{name: v.Name, value: v.Value, raw: true, errors: v.Errors, visible: v.Visible, recommended: v.RecommendedValues}
	if def != nil {
		if k := def.Key(v.Name); k != nil {
			e.typ = k.Type
		}
	}
	return e
}

// validateDef is Kafka's ConfigDef.validate: every key is parsed (value
// null when it does not parse or is missing), its validator runs even on
// null, then recommenders and visibility see all parsed values. prefix is
// added to names in messages and results (embedded plugin configs).
func validateDef(def *connect.ConfigDef, props map[string]string, prefix string) []validatedEntry {
	keys := def.Keys()
	out := make([]validatedEntry, 0, len(keys))
	parsed := map[string]any{}
	for i := range keys {
		k := &keys[i]
		e := validatedEntry{name: prefix + k.Name, typ: k.Type, visible: true}
		raw, set := props[prefix+k.Name]
		var v any
		switch {
		case set:
			pv, err := connect.ParseValue(k.Type, prefix+k.Name, raw)
			if err != nil {
				e.errors = append(e.errors, err.Error())
			} else {
				v = pv
			}
		case k.Required():
			e.errors = append(e.errors, fmt.Sprintf("Missing required configuration %q which has no default value.", prefix+k.Name))
		default:
			v = k.Default
		}
		if k.Validator != nil {
			if err := k.Validator(k.Name, v); err != nil {
				var nf *classNotFound
				var verbatim *connect.VerbatimError
				switch {
				case errors.As(err, &nf):
					// Kafka fails to parse the class: the value is null.
					v = nil
					e.errors = append(e.errors, fmt.Sprintf("Invalid value %s for configuration %s: %s", nf.class, prefix+k.Name, err.Error()))
				case errors.As(err, &verbatim):
					e.errors = append(e.errors, verbatim.Msg)
				default:
					e.errors = append(e.errors, fmt.Sprintf("Invalid value %s for configuration %s: %s", javaValue(v), k.Name, err.Error()))
				}
			}
		}
		e.value = v
		parsed[k.Name] = v
		out = append(out, e)
	}
	for i := range keys {
		k := &keys[i]
		if k.Recommended != nil {
			out[i].recommended = k.Recommended(parsed)
		}
		if k.Visible != nil {
			out[i].visible = k.Visible(parsed)
		}
	}
	return out
}

// keyInfo converts a definition (Kafka's AbstractHerder.convertConfigKey).
func keyInfo(k *connect.ConfigKey, prefix string) *ValidatedKey {
	ki := &ValidatedKey{
		Name: prefix + k.Name, Type: k.Type.String(), Required: k.Required(),
		Importance: k.Importance.String(), Documentation: k.Doc, Order: k.OrderInGroup,
		Width: k.Width.String(), DisplayName: k.DisplayName, Dependents: slices.Clone(k.Dependents),
	}
	if ki.Dependents == nil {
		ki.Dependents = []string{}
	}
	if k.Group != "" {
		g := k.Group
		ki.Group = &g
	} else {
		ki.Order = -1
		if k.OrderInGroup != 0 {
			ki.Order = k.OrderInGroup
		}
	}
	if !k.Required() {
		ki.Default = formatValue(k.Default, k.Type)
	}
	return ki
}

// formatValue is Kafka's ConfigDef.convertToString.
func formatValue(v any, t connect.ConfigType) *string {
	var s string
	switch x := v.(type) {
	case nil:
		return nil
	case []string:
		s = strings.Join(x, ",")
	case connect.Password:
		s = "[hidden]"
	case float64:
		s = javaDouble(x)
	case string:
		s = x
	default:
		if t == connect.TypePassword {
			s = "[hidden]"
		} else {
			s = fmt.Sprint(x)
		}
	}
	return &s
}

// javaDouble prints a float as Java's Double.toString.
func javaDouble(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		switch {
		case math.IsNaN(f):
			return "NaN"
		case f > 0:
			return "Infinity"
		}
		return "-Infinity"
	}
	if a := math.Abs(f); a != 0 && (a < 1e-3 || a >= 1e7) {
		s := strconv.FormatFloat(f, 'E', -1, 64)
		mant, exp, _ := strings.Cut(s, "E")
		if !strings.Contains(mant, ".") {
			mant += ".0"
		}
		neg := strings.HasPrefix(exp, "-")
		exp = strings.TrimLeft(strings.TrimLeft(exp, "+-"), "0")
		if neg {
			exp = "-" + exp
		}
		return mant + "E" + exp
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// javaValue prints a parsed value as Kafka's ConfigException does.
func javaValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case []string:
		return javaList(x)
	case connect.Password:
		return "[hidden]"
	case float64:
		return javaDouble(x)
	}
	return fmt.Sprint(v)
}

// enrichConnectorDef is Kafka's ConnectorConfig.enrich plus 4.4's plugin
// versions: worker converter defaults, version keys, and for every
// transform and predicate alias its type, version and own keys embedded
// under "transforms.<alias>." / "predicates.<alias>.".
func enrichConnectorDef(def *connect.ConfigDef, props map[string]string, w *WorkerConfig, conn *plugins.Plugin) *connect.ConfigDef {
	if k := def.Key("connector.plugin.version"); k != nil {
		kk := *k
		kk.Default = conn.Version
		kk.Recommended = func(map[string]any) []any { return []any{conn.Version} }
		kk.Validator = versionValidator(conn)
		def.Define(kk)
	}
	for _, c := range []struct {
		key    string
		worker string
		kind   plugins.Kind
	}{{"key.converter", workerString(w, "key.converter"), plugins.Converter},
		{"value.converter", workerString(w, "value.converter"), plugins.Converter},
		{"header.converter", workerString(w, "header.converter"), plugins.HeaderConverter}} {
		k := def.Key(c.key)
		if k == nil {
			continue
		}
		kk := *k
		if c.worker != "" {
			kk.Default = c.worker
		}
		kind := c.kind
		kk.Recommended = func(map[string]any) []any { return converterClasses(kind) }
		kk.Validator = classOf(map[plugins.Kind]string{plugins.Converter: pluginsConverter, plugins.HeaderConverter: pluginsHeaderConverter}[kind])
		def.Define(kk)
		effective := c.worker
		if v, ok := props[c.key]; ok {
			effective = strings.TrimSpace(v)
		}
		vk := def.Key(c.key + ".plugin.version")
		if vk == nil {
			continue
		}
		vkk := *vk
		p, err := plugins.LookupKind(effective, kind)
		if found := err == nil; found && effective != "" {
			vkk.Default = p.Version
			vkk.Recommended = func(map[string]any) []any { return []any{p.Version} }
			vkk.Validator = versionValidator(p)
		} else {
			vkk.Default = nil
			vkk.Visible = func(map[string]any) bool { return false }
		}
		def.Define(vkk)
	}
	enrichAliases(def, props, "transforms", "Transforms", "transformation", "Transformation", plugins.Transformation)
	enrichAliases(def, props, "predicates", "Predicates", "predicate", "Predicate", plugins.Predicate)
	return def
}

func workerString(w *WorkerConfig, key string) string {
	if w == nil {
		if key == "header.converter" {
			return "org.apache.kafka.connect.storage.SimpleHeaderConverter"
		}
		return ""
	}
	switch key {
	case "key.converter":
		return w.KeyConverter
	case "value.converter":
		return w.ValueConverter
	}
	return w.HeaderConverter
}

func converterClasses(kind plugins.Kind) []any {
	var out []any
	for _, p := range plugins.List(kind) {
		out = append(out, p.Class)
	}
	return out
}

func versionValidator(p *plugins.Plugin) connect.Validator {
	return func(name string, v any) error {
		s, _ := v.(string)
		if s == "" || s == p.Version {
			return nil
		}
		return fmt.Errorf("Plugin %s with version %s not found; available version: %s", p.Class, s, p.Version)
	}
}

// enrichAliases adds the keys of each alias of a transforms/predicates
// list (Kafka's EnrichablePlugin.enrich).
func enrichAliases(def *connect.ConfigDef, props map[string]string, listKey, groupName, kindLower, kindTitle string, kind plugins.Kind) {
	aliases := splitList(props[listKey])
	seen := map[string]bool{}
	for _, alias := range aliases {
		if seen[alias] {
			continue
		}
		seen[alias] = true
		prefix := listKey + "." + alias + "."
		group := groupName + ": " + alias
		typeKey := prefix + "type"
		class := strings.TrimSpace(props[typeKey])
		p, err := plugins.LookupKind(class, kind)
		found := err == nil
		def.Define(connect.ConfigKey{
			Name: typeKey, Type: connect.TypeClass, Default: connect.NoDefault, Importance: connect.High,
			Doc: "Class for the '" + alias + "' " + kindLower + ".", Group: group, OrderInGroup: 0,
			Width: connect.WidthLong, DisplayName: kindTitle + " type for " + alias,
			Validator: func(name string, v any) error {
				if listKey == "transforms" {
					_, hasNegate := props[prefix+"negate"]
					_, hasPred := props[prefix+"predicate"]
					if hasNegate && !hasPred {
						return &connect.VerbatimError{Msg: fmt.Sprintf("Config '%snegate' was provided but there is no config '%spredicate' defining a predicate to be negated.", prefix, prefix)}
					}
				}
				s, ok := v.(string)
				if !ok {
					return nil // missing: reported as missing
				}
				if _, err := plugins.LookupKind(s, kind); err == nil {
					return nil
				}
				if _, ok := plugins.Lookup(s); ok {
					return fmt.Errorf("Not a %s", kindTitle)
				}
				return &classNotFound{s}
			},
			Recommended: func(map[string]any) []any {
				var out []any
				for _, q := range plugins.List(kind) {
					out = append(out, q.Class)
				}
				return out
			},
		})
		vk := connect.ConfigKey{
			Name: prefix + "plugin.version", Type: connect.TypeString, Importance: connect.High,
			Doc: "Version of the '" + alias + "' " + kindLower + ".", Group: group, OrderInGroup: 1,
			Width: connect.WidthLong, DisplayName: kindTitle + " version for " + alias,
			Recommended: func(map[string]any) []any { return []any{} },
		}
		if found {
			vk.Default = p.Version
			vk.Recommended = func(map[string]any) []any { return []any{p.Version} }
			vk.Validator = versionValidator(p)
		}
		def.Define(vk)
		if !found {
			continue
		}
		own := connect.NewConfigDef()
		if kind == plugins.Transformation {
			own.Define(connect.ConfigKey{Name: "predicate", Type: connect.TypeString, Default: nil, Importance: connect.Medium,
				Doc: "The alias of a predicate used to determine whether to apply this transformation."})
			own.Define(connect.ConfigKey{Name: "negate", Type: connect.TypeBoolean, Default: false, Importance: connect.Medium,
				Doc: "Whether the configured predicate should be negated."})
		}
		if pd := p.ConfigDef(); pd != nil {
			for _, k := range pd.Keys() {
				if k.Name == "predicate" || k.Name == "negate" {
					continue // the implicit keys mask the plugin's
				}
				own.Define(k)
			}
		}
		embed(def, prefix, group, 2, own)
	}
}

// embed adds child's keys under prefix, sorted as Kafka's
// ConfigDef.sortedConfigs and numbered from order (Kafka's ConfigDef.embed).
// Validators see the key's own name, as Kafka's embedded validators do.
func embed(def *connect.ConfigDef, prefix, group string, order int, child *connect.ConfigDef) {
	keys := slices.Clone(child.Keys())
	groupOrd := map[string]int{}
	for i, g := range child.Groups() {
		groupOrd[g] = i
	}
	sort.SliceStable(keys, func(i, j int) bool { return sortedConfigsLess(&keys[i], &keys[j], groupOrd) })
	for _, k := range keys {
		k := k
		nk := k
		nk.Name = prefix + k.Name
		nk.Group = group
		if k.Group != "" {
			nk.Group = group + ": " + k.Group
		}
		nk.OrderInGroup = order
		order++
		if k.DisplayName == "" {
			nk.DisplayName = k.Name
		}
		if k.Validator != nil {
			// Kafka's embedded validators see the plugin's own key name,
			// which their messages then show.
			base, own := k.Validator, k.Name
			nk.Validator = func(_ string, v any) error {
				err := base(own, v)
				var nf *classNotFound
				var verbatim *connect.VerbatimError
				if err == nil || errors.As(err, &nf) || errors.As(err, &verbatim) {
					return err
				}
				return &connect.VerbatimError{Msg: fmt.Sprintf("Invalid value %s for configuration %s: %s", javaValue(v), own, err.Error())}
			}
		}
		if k.Recommended != nil {
			rec := k.Recommended
			nk.Recommended = func(parsed map[string]any) []any { return rec(unprefixed(parsed, prefix)) }
		}
		if k.Visible != nil {
			vis := k.Visible
			nk.Visible = func(parsed map[string]any) bool { return vis(unprefixed(parsed, prefix)) }
		}
		for i, d := range nk.Dependents {
			nk.Dependents[i] = prefix + d
		}
		def.Define(nk)
	}
}

func unprefixed(parsed map[string]any, prefix string) map[string]any {
	out := map[string]any{}
	for k, v := range parsed {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			out[rest] = v
		}
	}
	return out
}

// sortedConfigsLess is Kafka's ConfigDef.sortedConfigs order: by group,
// order in group, required first, importance, name.
func sortedConfigsLess(a, b *connect.ConfigKey, groupOrd map[string]int) bool {
	if a.Group != b.Group {
		if a.Group == "" {
			return true
		}
		if b.Group == "" {
			return false
		}
		return groupOrd[a.Group] < groupOrd[b.Group]
	}
	if a.OrderInGroup != b.OrderInGroup {
		return a.OrderInGroup < b.OrderInGroup
	}
	if a.Required() != b.Required() {
		return a.Required()
	}
	if a.Importance != b.Importance {
		return a.Importance < b.Importance
	}
	return a.Name < b.Name
}

// validateOverrides checks connector client overrides against the
// policy and the client's definition (Kafka's validateClientOverrides).
func validateOverrides(policy, prefix, client string, props map[string]string) *Validation {
	overrides := connect.WithPrefix(props, prefix)
	if len(overrides) == 0 {
		return nil
	}
	def := kafkaConfigDef(client)
	res := &Validation{}
	values := checkOverrides(policy, overrides)
	for _, name := range javaHashOrder(slices.Collect(maps.Keys(overrides))) {
		var cv connect.ConfigValue
		for _, v := range values {
			if v.Name == name {
				cv = v
			}
		}
		k := def.Key(name)
		e := validatedEntry{name: prefix + name, errors: cv.Errors, visible: true}
		var value any = overrides[name]
		if k != nil {
			if pv, err := connect.ParseValue(k.Type, name, overrides[name]); err == nil {
				value = pv
			}
			e.typ = k.Type
			if k.Group != "" && !slices.Contains(res.Groups, k.Group) {
				res.Groups = append(res.Groups, k.Group)
			}
		}
		e.value = value
		vc := ValidatedConfig{Value: e.info(k)}
		if k != nil {
			vc.Key = keyInfo(k, prefix)
		}
		if len(e.errors) > 0 {
			res.ErrorCount++
		}
		res.Configs = append(res.Configs, vc)
	}
	return res
}

// validateConverter validates a converter's own keys when the connector
// sets one (Kafka's validateConverterConfig): the "<key>." prefixed
// properties plus converter.type, against the converter's ConfigDef.
func validateConverter(props map[string]string, key, convType string) *Validation {
	kind := plugins.Converter
	if key == "header.converter" {
		kind = plugins.HeaderConverter
	}
	p, err := plugins.LookupKind(props[key], kind)
	if err != nil {
		return nil
	}
	def := p.ConfigDef()
	if def == nil || len(def.Keys()) == 0 {
		return nil
	}
	cprops := connect.WithPrefix(props, key+".")
	if _, ok := cprops["converter.type"]; !ok {
		cprops["converter.type"] = convType
	}
	entries := validateDef(def, cprops, "")
	res := &Validation{}
	byName := map[string]validatedEntry{}
	var names []string
	for _, e := range entries {
		byName[e.name] = e
		names = append(names, e.name)
	}
	// Kafka returns ConfigDef.validate's values in HashMap order.
	for _, name := range javaHashOrder(names) {
		e := byName[name]
		k := def.Key(name)
		if k.Group != "" && !slices.Contains(res.Groups, k.Group) {
			res.Groups = append(res.Groups, k.Group)
		}
		e.name = key + "." + name
		if len(e.errors) > 0 {
			res.ErrorCount++
		}
		res.Configs = append(res.Configs, ValidatedConfig{Key: keyInfo(k, key+"."), Value: e.info(k)})
	}
	return res
}

// javaHashOrder returns names in the iteration order of a java.util.HashMap
// they were inserted into in the given order: by bucket (String.hashCode,
// spread, table size for the default load factor), then insertion.
func javaHashOrder(names []string) []string {
	capacity := 16
	for float64(len(names)) > 0.75*float64(capacity) {
		capacity *= 2
	}
	type item struct {
		name   string
		bucket int
		pos    int
	}
	items := make([]item, len(names))
	for i, n := range names {
		var h int32
		for _, c := range utf16Units(n) {
			h = 31*h + int32(c)
		}
		u := uint32(h)
		u ^= u >> 16
		items[i] = item{n, int(u & uint32(capacity-1)), i}
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].bucket < items[j].bucket })
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.name
	}
	return out
}

func utf16Units(s string) []uint16 {
	var out []uint16
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			out = append(out, uint16(0xD800+(r>>10)), uint16(0xDC00+(r&0x3FF)))
		} else {
			out = append(out, uint16(r))
		}
	}
	return out
}

// Infos converts the validation to the REST API's entity.
func (v *Validation) Infos() *herder.ConfigInfos {
	out := &herder.ConfigInfos{Name: v.Name, ErrorCount: v.ErrorCount, Groups: slices.Clone(v.Groups), Configs: make([]herder.ConfigInfo, 0, len(v.Configs))}
	if out.Groups == nil {
		out.Groups = []string{}
	}
	for _, c := range v.Configs {
		var ci herder.ConfigInfo
		if k := c.Key; k != nil {
			ci.Definition = herder.ConfigKeyInfo{Name: k.Name, Type: k.Type, Required: k.Required, DefaultValue: k.Default,
				Importance: k.Importance, Documentation: k.Documentation, Order: k.Order, Width: k.Width,
				DisplayName: k.DisplayName, Dependents: k.Dependents}
			if k.Group != nil {
				ci.Definition.Group = *k.Group
			}
		}
		ci.Value = herder.ConfigValueInfo{Name: c.Value.Name, Value: c.Value.Value, RecommendedValues: c.Value.Recommended,
			Errors: c.Value.Errors, Visible: c.Value.Visible}
		out.Configs = append(out.Configs, ci)
	}
	return out
}
