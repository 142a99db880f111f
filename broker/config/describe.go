package config

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeOptions are the parts of a DescribeConfigs request that shape
// the answer for one resource.
type DescribeOptions struct {
	// Names are the resource's config_names; empty means all. Names that
	// do not exist are left out, as Kafka does.
	Names []string
	// Synonyms and Documentation are include_synonyms (v1+) and
	// include_documentation (v3+).
	Synonyms      bool
	Documentation bool
	// Version is the request version: v0 answers with is_default instead
	// of a source, v1-v2 have no config_type or documentation.
	Version int16
}

// DescribeOptionsFor reads the options for resource r of request req.
func DescribeOptionsFor(req *kmsg.DescribeConfigsRequest, r *kmsg.DescribeConfigsRequestResource) DescribeOptions {
	return DescribeOptions{Names: r.ConfigNames, Synonyms: req.IncludeSynonyms, Documentation: req.IncludeDocumentation, Version: req.Version}
}

type describeEntry = kmsg.DescribeConfigsResponseResourceConfig
type describeSynonym = kmsg.DescribeConfigsResponseResourceConfigConfigSynonym

// DescribeTopic answers DescribeConfigs for a topic with the given
// overrides, as Kafka's ConfigHelper does: every topic config with its
// effective value; the source is the first synonym's; synonyms are the
// topic override, then the broker keys of the topic key's primary broker
// synonym from the dynamic per-broker, dynamic cluster-default, static and
// default layers, in that order.
//
// One Kafka quirk is kept on purpose: leading synonyms are dropped until
// the primary broker key itself appears, so where only log.retention.hours
// has a value (the usual case) retention.ms has no synonyms and claims
// DEFAULT_CONFIG even when log.roll.hours is set in server.properties.
// Matching it keeps tools that diff against Kafka quiet.
func (b *Broker) DescribeTopic(overrides map[string]string, o DescribeOptions) []kmsg.DescribeConfigsResponseResourceConfig {
	vals, _ := topicValues(overrides, b.values)
	var out []describeEntry
	for i := range topicTable.specs {
		s := &topicTable.specs[i]
		if s.Internal || !wanted(o.Names, s.Name) {
			continue
		}
		sensitive := s.Sensitive()
		var value *string
		if !sensitive && vals[s.Name] != nil {
			value = kmsg.StringPtr(canonical(s.Type, vals[s.Name]))
		}
		var syns []describeSynonym
		if raw, ok := overrides[s.Name]; ok {
			if _, err := s.parse(raw); err == nil {
				syns = append(syns, describeSynonym{Name: s.Name, Value: value, Source: kmsg.ConfigSourceDynamicTopicConfig})
			}
		}
		if len(s.Synonyms) > 0 {
			primary := s.Synonyms[0].Name
			syns = append(syns, b.configSynonyms(primary, sensitive)...)
		}
		out = append(out, b.entry(s, s.Name, value, false, syns, o))
	}
	sortByRank(out, topicTable)
	return out
}

// DescribeBroker answers DescribeConfigs for a BROKER resource. name ""
// is the cluster default: only the dynamic defaults that are set, each
// with its DYNAMIC_DEFAULT_BROKER_CONFIG synonym. This broker's node id
// lists every broker config (Kafka's and any other key set in
// server.properties or dynamically). Any other name is an INVALID_REQUEST
// *Error with Kafka's message.
func (b *Broker) DescribeBroker(name string, o DescribeOptions) ([]kmsg.DescribeConfigsResponseResourceConfig, error) {
	if name == "" {
		var out []describeEntry
		for _, k := range slices.Sorted(maps.Keys(b.dynamic.ClusterDefault)) {
			if wanted(o.Names, k) {
				out = append(out, b.brokerEntry(k, kmsg.StringPtr(b.dynamic.ClusterDefault[k]), false, o))
			}
		}
		sortByRank(out, brokerTable)
		return out, nil
	}
	id, err := strconv.ParseInt(name, 10, 32)
	if err != nil {
		return nil, &Error{Code: kerr.InvalidRequest.Code, Message: "Broker id must be an integer, but it is: " + name}
	}
	if int32(id) != b.NodeID {
		return nil, &Error{Code: kerr.InvalidRequest.Code, Message: "Unexpected broker id, expected " + strconv.Itoa(int(b.NodeID)) + " or empty string, but received " + name}
	}
	// Kafka lists originals (every key set) plus every non-internal key.
	names := map[string]bool{}
	for k := range b.current {
		names[k] = true
	}
	for i := range brokerTable.specs {
		if !brokerTable.specs[i].Internal {
			names[brokerTable.specs[i].Name] = true
		}
	}
	var out []describeEntry
	for _, k := range slices.Sorted(maps.Keys(names)) {
		if !wanted(o.Names, k) {
			continue
		}
		var value *string
		if s, ok := brokerTable.byName[k]; ok && !s.Internal {
			if v := b.values[k]; v != nil {
				value = kmsg.StringPtr(canonical(s.Type, v))
			}
		} else {
			value = kmsg.StringPtr(b.current[k])
		}
		out = append(out, b.brokerEntry(k, value, true, o))
	}
	sortByRank(out, brokerTable)
	return out, nil
}

func (b *Broker) brokerEntry(name string, value *string, perBroker bool, o DescribeOptions) describeEntry {
	s := lookupBroker(name)
	sensitive := s == nil || s.Sensitive()
	if sensitive {
		value = nil
	}
	syns := b.configSynonyms(name, sensitive)
	if !perBroker {
		syns = slices.DeleteFunc(syns, func(s describeSynonym) bool { return s.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig })
	}
	readOnly := s == nil || s.Update == ReadOnly
	return b.entry(s, name, value, readOnly, syns, o)
}

// lookupBroker finds a broker key's spec, Fjord's own keys included.
func lookupBroker(name string) *Spec {
	if s, ok := brokerTable.byName[name]; ok {
		return s
	}
	if s, ok := fjordBrokerSpecs[name]; ok {
		return &s
	}
	return nil
}

// entry assembles one config entry and shapes it for the request version.
func (b *Broker) entry(s *Spec, name string, value *string, readOnly bool, syns []describeSynonym, o DescribeOptions) describeEntry {
	e := kmsg.NewDescribeConfigsResponseResourceConfig()
	e.Name = name
	e.Value = value
	e.ReadOnly = readOnly
	e.Source = kmsg.ConfigSourceDefaultConfig
	if len(syns) > 0 {
		e.Source = syns[0].Source
	}
	e.IsSensitive = s == nil || s.Sensitive()
	if s != nil {
		e.ConfigType = kmsg.ConfigType(s.Type)
	}
	if o.Synonyms && o.Version >= 1 {
		e.ConfigSynonyms = syns
	}
	if o.Documentation && o.Version >= 3 && s != nil {
		e.Documentation = kmsg.StringPtr(s.Doc)
	}
	if o.Version < 3 {
		e.ConfigType = 0
	}
	if o.Version == 0 {
		e.IsDefault = e.Source == kmsg.ConfigSourceDefaultConfig
	}
	return e
}

// configSynonyms is Kafka's ConfigHelper.configSynonyms: the values of
// name's broker synonyms in the dynamic per-broker, dynamic default,
// static and default layers (layer by layer), starting at name itself.
func (b *Broker) configSynonyms(name string, sensitive bool) []describeSynonym {
	layers := []struct {
		m      map[string]string
		source kmsg.ConfigSource
	}{
		{b.dynamic.Broker, kmsg.ConfigSourceDynamicBrokerConfig},
		{b.dynamic.ClusterDefault, kmsg.ConfigSourceDynamicDefaultBrokerConfig},
		{b.static, kmsg.ConfigSourceStaticBrokerConfig},
		{brokerDefaults, kmsg.ConfigSourceDefaultConfig},
	}
	var out []describeSynonym
	syns := brokerSynonyms(name)
	for _, l := range layers {
		for _, syn := range syns {
			v, ok := l.m[syn]
			if !ok {
				continue
			}
			var value *string
			if !sensitive {
				value = kmsg.StringPtr(v)
			}
			out = append(out, describeSynonym{Name: syn, Value: value, Source: l.source})
		}
	}
	// Drop listener overrides and higher-precedence synonyms when
	// describing a base or lower-precedence key, as Kafka does.
	for len(out) > 0 && out[0].Name != name {
		out = out[1:]
	}
	return out
}

func wanted(names []string, name string) bool { return len(names) == 0 || slices.Contains(names, name) }

// sortByRank orders entries as Kafka lists them. Kafka iterates a Scala
// hash map: by bucket (String.hashCode spread as h^(h>>>16), masked to a
// power-of-two table sized for the entry count at load factor 0.75), and
// within a bucket by insertion order, which Kafka's full listing (the
// generated describe order) tells us. This reproduces Kafka's order for
// full listings and for subsets (named configs, cluster defaults) alike.
func sortByRank(es []describeEntry, t *table) {
	capacity := uint32(16)
	for float64(len(es)) > 0.75*float64(capacity) {
		capacity *= 2
	}
	slices.SortStableFunc(es, func(a, b describeEntry) int {
		return cmp.Or(
			cmp.Compare(javaBucket(a.Name, capacity), javaBucket(b.Name, capacity)),
			cmp.Compare(t.describeRank(a.Name), t.describeRank(b.Name)),
			strings.Compare(a.Name, b.Name))
	})
}

// javaBucket is the hash table bucket of key in a table of the given
// power-of-two capacity: Java's String.hashCode, spread as HashMap does.
func javaBucket(key string, capacity uint32) uint32 {
	var h uint32
	for _, c := range utf16.Encode([]rune(key)) {
		h = 31*h + uint32(c)
	}
	return (h ^ h>>16) & (capacity - 1)
}

// CreateTopicConfigs lists a new topic's configs for a CreateTopics
// response (v5+), as Kafka's controller resolves them
// (KafkaConfigSchema.resolveEffectiveTopicConfigs): the override, else the
// first synonym set dynamically for this broker, else as a cluster
// default, else statically, else the topic default; sorted by name. Note
// the sources can differ from DescribeTopic's: Kafka computes the two
// differently, and both are matched.
func (b *Broker) CreateTopicConfigs(overrides map[string]string) []kmsg.CreateTopicsResponseTopicConfig {
	var out []kmsg.CreateTopicsResponseTopicConfig
	for i := range topicTable.specs {
		s := &topicTable.specs[i]
		if s.Internal {
			continue
		}
		c := kmsg.NewCreateTopicsResponseTopicConfig()
		c.Name = s.Name
		c.IsSensitive = s.Sensitive()
		value, source := b.createTopicValue(s, overrides)
		if !c.IsSensitive {
			c.Value = value
		}
		c.Source = int8(source)
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b kmsg.CreateTopicsResponseTopicConfig) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func (b *Broker) createTopicValue(s *Spec, overrides map[string]string) (*string, kmsg.ConfigSource) {
	if raw, ok := overrides[s.Name]; ok {
		return kmsg.StringPtr(raw), kmsg.ConfigSourceDynamicTopicConfig
	}
	for _, l := range []struct {
		m      map[string]string
		source kmsg.ConfigSource
	}{
		{b.dynamic.Broker, kmsg.ConfigSourceDynamicBrokerConfig},
		{b.dynamic.ClusterDefault, kmsg.ConfigSourceDynamicDefaultBrokerConfig},
		{b.static, kmsg.ConfigSourceStaticBrokerConfig},
	} {
		for _, syn := range s.Synonyms {
			raw, ok := l.m[syn.Name]
			if !ok {
				continue
			}
			if syn.Scale != 1 {
				if n, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64); err == nil {
					raw = strconv.FormatInt(n*syn.Scale, 10)
				}
			}
			return kmsg.StringPtr(raw), l.source
		}
	}
	if s.NoDefault {
		return nil, kmsg.ConfigSourceDefaultConfig
	}
	return kmsg.StringPtr(canonical(s.Type, s.defaultValue())), kmsg.ConfigSourceDefaultConfig
}
