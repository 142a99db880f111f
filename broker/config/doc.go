// Package config is Fjord's broker and topic configuration, spelled the way
// Apache Kafka spells it, so that a server.properties written for Kafka
// means the same thing here.
//
// Usage:
//
//	props, err := config.ParseProperties(f)         // java.util.Properties syntax
//	err = config.ApplyOverrides(props, overrideFlags) // --override key=value
//	static, err := config.NewBroker(props, logger)   // validated, typed, Kafka defaults
//	b := static.WithDynamic(config.Dynamic{...})     // + dynamic broker configs
//	t, err := b.Topic(overrides)                     // a topic's effective settings
//	err = b.ValidateTopicConfigs(configs)            // CreateTopics / AlterConfigs
//	err = config.ValidateBrokerConfigs("", configs)  // AlterConfigs on a BROKER resource
//	entries := b.DescribeTopic(overrides, config.DescribeOptionsFor(req, &req.Resources[i]))
//	entries, err = b.DescribeBroker(name, opts)      // name "" = cluster default
//	configs := b.CreateTopicConfigs(overrides)       // CreateTopics v5+ response configs
//
// Errors meant for clients are *Error values carrying a Kafka error code
// and Kafka's own message.
//
// Everything is driven by one spec table per resource (TopicSpecs,
// BrokerSpecs): name, type, default, validator, importance, documentation,
// how it may be updated, and for topic configs the broker synonyms that
// supply the default. Parsing, validation, DescribeConfigs and the typed
// structs all read that table, in the manner of benthos' ConfigSpec.
// Kafka's facts in it are generated from Kafka 4.4 itself
// (zz_kafka_specs.go, from internal/kafkaref: its ConfigDef, validators
// and DescribeConfigs answers); Fjord's part, a short doc and whether
// Fjord acts on the key, is docs.go.
//
// Every key Kafka 4.4 defines is accepted. Keys Fjord does not act on
// (SSL, SASL, quotas, thread pools...) are logged at debug level, carried
// along and described exactly as Kafka would, but do nothing. Keys Kafka
// does not know either are kept too and logged as a warning naming the
// key, since they are most likely typos.
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
