package config

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Error is a configuration problem as a Kafka error code and message,
// ready to go into a CreateTopics, AlterConfigs, IncrementalAlterConfigs
// or DescribeConfigs response.
type Error struct {
	Code    int16
	Message string
	// Problems lists each problem found; Message is Kafka's message for
	// the first, followed by the others (see ValidateTopicConfigs).
	Problems []string
}

func (e *Error) Error() string { return e.Message }

func newError(code int16, problems []string) *Error {
	return &Error{Code: code, Message: strings.Join(problems, "; "), Problems: problems}
}

// ValidateTopicConfigs checks topic configs for CreateTopics and
// AlterConfigs against Kafka's rules, with Kafka's broker defaults as the
// context. Prefer the Broker method, which knows this broker's settings.
func ValidateTopicConfigs(configs map[string]string) error {
	vals, _ := brokerValues(nil)
	return validateTopic(configs, vals)
}

// ValidateTopicConfigs checks a complete set of topic overrides (the
// CreateTopics configs, or a topic's overrides after an alter) as Kafka's
// LogConfig.validate does, combined with this broker's settings. The
// result is nil or an *Error with code INVALID_CONFIG.
//
// Kafka stops at the first problem; we check every entry and report them
// all, in Kafka's order (unknown names first, then values in Kafka's
// definition order, then cross-key rules), separated by "; ". The message
// therefore starts with exactly what Kafka would say.
func (b *Broker) ValidateTopicConfigs(configs map[string]string) error {
	return validateTopic(configs, b.values)
}

func validateTopic(configs map[string]string, brokerVals map[string]any) error {
	var problems []string
	for _, k := range slices.Sorted(maps.Keys(configs)) {
		if _, ok := topicTable.byName[k]; !ok {
			problems = append(problems, "Unknown topic config name: "+k)
		}
	}
	for i := range topicTable.specs {
		s := &topicTable.specs[i]
		if raw, ok := configs[s.Name]; ok {
			if _, err := s.parse(raw); err != nil {
				problems = append(problems, err.Error())
			}
		}
	}
	vals, _ := topicValues(configs, brokerVals)
	g := getter(vals)
	if minLag, maxLag := g.i64("min.compaction.lag.ms"), g.i64("max.compaction.lag.ms"); minLag > maxLag {
		problems = append(problems, "conflict topic config setting min.compaction.lag.ms ("+strconv.FormatInt(minLag, 10)+") > max.compaction.lag.ms ("+strconv.FormatInt(maxLag, 10)+")")
	}
	if g.b("remote.storage.enable") {
		// Kafka's answer when remote.log.storage.system.enable=false, its
		// default; Fjord has no tiered storage to enable.
		problems = append(problems, "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage.")
	}
	if len(problems) == 0 {
		return nil
	}
	return newError(kerr.InvalidConfig.Code, problems)
}

// ValidateBrokerConfigs checks dynamic broker configs being set (the SET
// and APPEND/SUBTRACT results of an alter; not deletions) for the BROKER
// resource named resource ("" is the cluster default), with Kafka's
// DynamicBrokerConfig rules and messages: read-only keys cannot be
// altered, TLS keystore/truststore keys only per listener, values must be
// valid, per-broker keys (listeners, security) only for a broker id. Keys
// Kafka does not know are accepted, as Kafka 4.4 does. The result is nil
// or an *Error with code INVALID_REQUEST.
func ValidateBrokerConfigs(resource string, configs map[string]string) error {
	keys := slices.Sorted(maps.Keys(configs))
	var nonDynamic, security, perBroker []string
	for _, k := range keys {
		s, ok := brokerTable.byName[k]
		if !ok {
			continue
		}
		if s.Update == ReadOnly {
			nonDynamic = append(nonDynamic, k)
		}
		if isListenerSecurityConfig(k) {
			security = append(security, k)
		}
		if s.Update == PerBroker {
			perBroker = append(perBroker, k)
		}
	}
	invalid := func(msg string, names []string) error {
		return newError(kerr.InvalidRequest.Code, []string{msg + ": [" + strings.Join(names, ", ") + "]"})
	}
	if len(nonDynamic) > 0 {
		return invalid("Cannot update these configs dynamically", nonDynamic)
	}
	if len(security) > 0 {
		return invalid("These security configs can be dynamically updated only per-listener using the listener prefix", security)
	}
	var problems []string
	for _, k := range keys {
		if s, ok := brokerTable.byName[k]; ok {
			if _, err := s.parse(configs[k]); err != nil {
				problems = append(problems, err.Error())
			}
		}
	}
	if len(problems) > 0 {
		return newError(kerr.InvalidRequest.Code, problems)
	}
	if resource == "" && len(perBroker) > 0 {
		return invalid("Cannot update these configs at default cluster level, broker id must be specified", perBroker)
	}
	return nil
}

// isListenerSecurityConfig reports the TLS store configs Kafka only lets
// you change dynamically with a listener.name.<l>. prefix
// (DynamicBrokerConfig.DYNAMIC_SECURITY_CONFIGS without prefix).
func isListenerSecurityConfig(k string) bool {
	switch k {
	case "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
		"ssl.keystore.certificate.chain", "ssl.keystore.key",
		"ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password", "ssl.truststore.certificates":
		return true
	}
	return false
}

// ApplyIncrementalAlter applies IncrementalAlterConfigs operations on one
// resource to its current configs (topic overrides, or a broker resource's
// dynamic configs) and returns the new set, to be validated with
// ValidateTopicConfigs / ValidateBrokerConfigs and stored. APPEND and
// SUBTRACT work on LIST configs only, starting from Kafka's default when
// the key is not set, as Kafka does.
func ApplyIncrementalAlter(typ kmsg.ConfigResourceType, current map[string]string, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig) (map[string]string, error) {
	out := maps.Clone(current)
	if out == nil {
		out = map[string]string{}
	}
	seen := map[string]bool{}
	for _, op := range ops {
		if seen[op.Name] {
			return nil, newError(kerr.InvalidRequest.Code, []string{"Error due to duplicate config keys"})
		}
		seen[op.Name] = true
	}
	for _, op := range ops {
		switch op.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			if op.Value == nil {
				return nil, newError(kerr.InvalidRequest.Code, []string{"Null value not supported for " + op.Name})
			}
			out[op.Name] = *op.Value
		case kmsg.IncrementalAlterConfigOpDelete:
			delete(out, op.Name)
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			var s *Spec
			if typ == kmsg.ConfigResourceTypeTopic {
				s = topicTable.byName[op.Name]
			} else {
				s = brokerTable.byName[op.Name]
			}
			if s == nil || s.Type != TypeList {
				return nil, newError(kerr.InvalidConfig.Code, []string{"Can't " + op.Op.String() + " to key " + op.Name + " because its type is not LIST."})
			}
			old, ok := out[op.Name]
			if !ok {
				old = s.Default
			}
			items, _ := parseValue(op.Name, TypeList, old)
			list := items.([]string)
			var change []string
			if op.Value != nil {
				v, _ := parseValue(op.Name, TypeList, *op.Value)
				change = v.([]string)
			}
			for _, c := range change {
				if op.Op == kmsg.IncrementalAlterConfigOpAppend {
					if !slices.Contains(list, c) {
						list = append(list, c)
					}
				} else {
					list = slices.DeleteFunc(list, func(x string) bool { return x == c })
				}
			}
			out[op.Name] = strings.Join(list, ",")
		default:
			return nil, newError(kerr.InvalidRequest.Code, []string{"Unknown alter config operation " + strconv.Itoa(int(op.Op)) + " for " + op.Name})
		}
	}
	return out, nil
}
