// Package config is Fjord's broker and topic configuration, spelled the way
// Apache Kafka spells it, so that a server.properties written for Kafka
// means the same thing here.
//
// Usage:
//
//	props, err := config.ParseProperties(f)        // java.util.Properties syntax
//	b, err := config.NewBroker(props, logger)      // validated, typed; Kafka defaults
//	t, err := b.Topic(overrides, dynamic)          // a topic's effective settings
//	entries := b.DescribeTopic(overrides, dynamic, config.DescribeOptions{...})
//	err = config.ValidateTopicConfigs(configs)     // CreateTopics / AlterConfigs
//
// Everything is driven by one spec table per resource (topicSpecs,
// brokerSpecs): name, type, default, validator, importance, documentation,
// how it may be updated, and for topic configs the broker synonyms that
// supply the default. Parsing, validation, DescribeConfigs and the typed
// structs all read that table, in the manner of benthos' ConfigSpec.
//
// Broker keys Fjord acts on have a full spec. Every other key Apache Kafka
// 4.4 defines is listed in kafkaBrokerKeys (generated from Kafka's own
// ConfigDef and DescribeConfigs output, see internal/kafkaref): such keys
// are accepted with a debug log, carried along and described exactly as
// Kafka would, but do nothing. Keys Kafka does not know either are kept too
// and logged as a warning naming the key, since they are most likely typos.
//
// Precedence and DescribeConfigs sources follow Kafka: a topic override
// (DYNAMIC_TOPIC_CONFIG) beats a dynamic per-broker config
// (DYNAMIC_BROKER_CONFIG), which beats a dynamic cluster default
// (DYNAMIC_DEFAULT_BROKER_CONFIG), which beats server.properties
// (STATIC_BROKER_CONFIG), which beats the default (DEFAULT_CONFIG). Where
// Kafka has several broker keys for one setting (log.retention.ms,
// .minutes, .hours), the smallest unit that is set wins, as in Kafka, and
// synonyms are listed in Kafka's order, with Kafka's quirks (see
// describe.go). Golden tests compare the output with what Kafka 4.4 answers.
//
// The package holds no state and does no I/O beyond reading the reader
// given to ParseProperties: the broker owns the dynamic configs (they live
// in the metadata image) and passes them in.
package config
