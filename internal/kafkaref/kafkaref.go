// Package kafkaref holds what Apache Kafka 4.4 answered to a fixed set of
// requests, so that Fjord's handlers can be compared with the reference
// instead of with someone's memory of it.
//
// Usage, from any test:
//
//	c, err := kafkaref.Load("describe_configs_topic_default")
//	resp := new(kmsg.DescribeConfigsResponse)
//	err = c.DecodeResponse(resp)
//
// The files in testdata/ are written by cmd/capture, which starts a real
// Kafka 4.4 broker with scripts/kafka.sh and sends each request with
// franz-go; see README.md for how to regenerate them. Each file is one
// exchange: the kmsg request and response as encoding/json renders the kmsg
// structs (enums as their names), with values that differ on every run
// (topic ids, cluster id) replaced by stable placeholders. They are embedded
// so that tests in other packages need no relative paths.
package kafkaref

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// KafkaVersion is the Apache Kafka release the golden files come from.
const KafkaVersion = "4.4.0"

//go:embed testdata/*.json
var files embed.FS

// Capture is one request/response exchange with Kafka.
type Capture struct {
	// Name is the file name without .json.
	Name string `json:"name"`
	// Note says what the exchange shows and how the broker was set up.
	Note         string `json:"note"`
	KafkaVersion string `json:"kafka_version"`
	// Key and Version are the API key and the version the request was sent at.
	Key     int16 `json:"api_key"`
	Version int16 `json:"api_version"`
	// Request and Response are the kmsg structs as JSON.
	Request  json.RawMessage `json:"request"`
	Response json.RawMessage `json:"response"`
}

// Load reads testdata/<name>.json.
func Load(name string) (*Capture, error) {
	b, err := files.ReadFile("testdata/" + name + ".json")
	if err != nil {
		return nil, fmt.Errorf("kafkaref: golden file %q: %w (known: %s)", name, err, strings.Join(Names(), ", "))
	}
	var c Capture
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("kafkaref: decode %s.json: %w", name, err)
	}
	return &c, nil
}

// unknownEnums turns kmsg enums rendered as "UNKNOWN" (value 0, which
// kmsg can print but not parse back) into null, which leaves the zero
// value. No captured string value is literally UNKNOWN, so the
// replacement is safe for these files.
func unknownEnums(b []byte) []byte {
	return bytes.ReplaceAll(b, []byte(`": "UNKNOWN"`), []byte(`": null`))
}

// Names lists the available golden files, sorted.
func Names() []string {
	ents, _ := files.ReadDir("testdata")
	var names []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".json"); ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// DecodeRequest fills req (a pointer to a kmsg request struct) from the capture.
func (c *Capture) DecodeRequest(req any) error {
	if err := json.Unmarshal(unknownEnums(c.Request), req); err != nil {
		return fmt.Errorf("kafkaref: %s request: %w", c.Name, err)
	}
	return nil
}

// DecodeResponse fills resp (a pointer to a kmsg response struct) from the capture.
func (c *Capture) DecodeResponse(resp any) error {
	if err := json.Unmarshal(unknownEnums(c.Response), resp); err != nil {
		return fmt.Errorf("kafkaref: %s response: %w", c.Name, err)
	}
	return nil
}

//go:embed testdata/configdef/kafka_configdef.json
var configDefJSON []byte

// ConfigKey is one entry of Kafka's ConfigDef, as DumpConfigDef.java prints it.
type ConfigKey struct {
	Name       string  `json:"name"`
	Type       string  `json:"type"` // BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD
	HasDefault bool    `json:"hasDefault"`
	Default    *string `json:"default"` // ConfigDef.convertToString of the default; nil when null
	Importance string  `json:"importance"`
	Validator  *string `json:"validator"` // the validator's toString, as Kafka prints it in docs
	Internal   bool    `json:"internal"`
	Doc        string  `json:"doc"`
	// Topic keys: the broker configs that supply the default, in Kafka's order.
	BrokerSynonyms []string `json:"brokerSynonyms"`
	// Broker keys: "per-broker", "cluster-wide" or "" (read-only), and the
	// synonyms DynamicBrokerConfig.brokerConfigSynonyms lists.
	DynamicMode *string  `json:"dynamicMode"`
	Synonyms    []string `json:"synonyms"`
}

// ConfigDefs is Kafka's configuration definition for topics and brokers.
type ConfigDefs struct {
	Topic  []ConfigKey `json:"topic"`
	Broker []ConfigKey `json:"broker"`
	// AllDynamic is DynamicBrokerConfig.ALL_DYNAMIC_CONFIGS.
	AllDynamic []string `json:"allDynamic"`
	// DynamicLogConfig is the set of log configs a broker reconfigures live.
	DynamicLogConfig []string `json:"dynamicLogConfig"`
	// TopicConfigSynonyms maps a topic config to its primary broker config.
	TopicConfigSynonyms map[string]string `json:"topicConfigSynonyms"`
}

// LoadConfigDefs reads Kafka's config definitions.
func LoadConfigDefs() (*ConfigDefs, error) {
	var d ConfigDefs
	if err := json.Unmarshal(configDefJSON, &d); err != nil {
		return nil, fmt.Errorf("kafkaref: decode kafka_configdef.json: %w", err)
	}
	return &d, nil
}

//go:embed testdata/configdef/validation.json
var validationJSON []byte

// ValidationCase is what Kafka's ConfigDef made of one config value
// (ProbeValidation.java): the canonical rendering if it is valid, else
// Kafka's error message.
type ValidationCase struct {
	Resource  string  `json:"resource"` // "topic" or "broker"
	Name      string  `json:"name"`
	Value     string  `json:"value"`
	OK        bool    `json:"ok"`
	Canonical *string `json:"canonical"`
	Error     string  `json:"error"`
}

// LoadValidationCases reads the probe results.
func LoadValidationCases() ([]ValidationCase, error) {
	var cs []ValidationCase
	if err := json.Unmarshal(validationJSON, &cs); err != nil {
		return nil, fmt.Errorf("kafkaref: decode validation.json: %w", err)
	}
	return cs, nil
}
