// Package plugins is the registry of Connect plugins: every connector,
// converter, header converter, transformation and predicate registers
// here with its short name and the Java class names Kafka users already
// write, so that a connector config pasted from Kafka Connect finds the
// same plugin:
//
//	"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector"
//	"connector.class": "FileStreamSource"
//	"value.converter": "org.apache.kafka.connect.json.JsonConverter"
//	"transforms.x.type": "org.apache.kafka.connect.transforms.InsertField$Value"
//
// Packages register from init(); the binary imports them all (see
// connect/plugins/all).
package plugins

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/fjordhq/fjord/connect"
)

// Kind is a plugin's kind, with the type names Kafka's REST API uses.
type Kind string

const (
	Source          Kind = "source"
	Sink            Kind = "sink"
	Converter       Kind = "converter"
	HeaderConverter Kind = "header_converter"
	Transformation  Kind = "transformation"
	Predicate       Kind = "predicate"
)

// Plugin describes one plugin.
type Plugin struct {
	// Class is the canonical (Java) class name, e.g.
	// "org.apache.kafka.connect.file.FileStreamSourceConnector"; the REST
	// API reports plugins by it.
	Class string
	// Aliases are the other names it answers to (short names such as
	// "FileStreamSource", "FileStreamSourceConnector", "file-source").
	Aliases []string
	Kind    Kind
	Version string
	// New returns a fresh instance: a connect.SourceConnector,
	// connect.SinkConnector, connect.Converter, connect.HeaderConverter,
	// connect.Transformation or connect.Predicate according to Kind.
	New func() any
}

var (
	mu     sync.RWMutex
	byName = map[string]*Plugin{}
	// byKindName finds a plugin by kind and name: one Java class may be
	// several kinds (JsonConverter, StringConverter and the number
	// converters are both a Converter and a HeaderConverter, and Kafka's
	// REST API lists them once per kind).
	byKindName = map[kindName]*Plugin{}
	plugins    []*Plugin
)

type kindName struct {
	kind Kind
	name string
}

// Register adds a plugin. Registering a name twice for one kind panics:
// two plugins answering to one name would be a silent misconfiguration.
// A name may be registered once per kind (a class that is both a
// converter and a header converter registers twice).
func Register(p Plugin) {
	mu.Lock()
	defer mu.Unlock()
	if p.Version == "" {
		p.Version = DefaultVersion
	}
	pp := &p
	for _, n := range append([]string{p.Class}, p.Aliases...) {
		if old, ok := byKindName[kindName{p.Kind, n}]; ok {
			panic(fmt.Sprintf("plugins: %q registered by both %s and %s", n, old.Class, p.Class))
		}
		if old, ok := byName[n]; ok && old.Class != p.Class {
			panic(fmt.Sprintf("plugins: %q registered by both %s and %s", n, old.Class, p.Class))
		}
		byKindName[kindName{p.Kind, n}] = pp
		if _, ok := byName[n]; !ok {
			byName[n] = pp
		}
	}
	plugins = append(plugins, pp)
}

// DefaultVersion is reported for plugins without a version of their own.
const DefaultVersion = "4.4.0-fjord"

// Lookup finds a plugin by class name or alias (the first registered
// kind when a class is several; LookupKind chooses the kind).
func Lookup(name string) (*Plugin, bool) {
	mu.RLock()
	defer mu.RUnlock()
	p, ok := byName[strings.TrimSpace(name)]
	return p, ok
}

// LookupKind finds a plugin of the given kind, with an error that says
// what was asked and what exists.
func LookupKind(name string, kinds ...Kind) (*Plugin, error) {
	mu.RLock()
	for _, k := range kinds {
		if p, ok := byKindName[kindName{k, strings.TrimSpace(name)}]; ok {
			mu.RUnlock()
			return p, nil
		}
	}
	mu.RUnlock()
	p, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("Failed to find any class that implements %s and which name matches %s", kindNoun(kinds), name)
	}
	if !slices.Contains(kinds, p.Kind) {
		return nil, fmt.Errorf("class %s is a %s, not a %s", name, p.Kind, kindNoun(kinds))
	}
	return p, nil
}

func kindNoun(kinds []Kind) string {
	var s []string
	for _, k := range kinds {
		switch k {
		case Source, Sink:
			s = append(s, "Connector")
		case Converter:
			s = append(s, "Converter")
		case HeaderConverter:
			s = append(s, "HeaderConverter")
		case Transformation:
			s = append(s, "Transformation")
		case Predicate:
			s = append(s, "Predicate")
		}
	}
	return strings.Join(slices.Compact(s), " or ")
}

// List returns the plugins of the given kinds (all if none), sorted by class.
func List(kinds ...Kind) []*Plugin {
	mu.RLock()
	defer mu.RUnlock()
	var out []*Plugin
	for _, p := range plugins {
		if len(kinds) == 0 || slices.Contains(kinds, p.Kind) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *Plugin) int { return strings.Compare(a.Class, b.Class) })
	return out
}

// ConfigDef returns a plugin's config definition (from a fresh instance).
func (p *Plugin) ConfigDef() *connect.ConfigDef {
	switch v := p.New().(type) {
	case connect.Connector:
		return v.Config()
	case connect.Transformation:
		return v.Config()
	case connect.Predicate:
		return v.Config()
	case interface{ Config() *connect.ConfigDef }:
		return v.Config()
	}
	return connect.NewConfigDef()
}
