// Package clientsec turns the security settings of a Kafka client's
// properties — security.protocol, ssl.* (PEM, JKS and PKCS12 trust and
// key stores), sasl.mechanism and sasl.jaas.config —
// into franz-go options, so that
// every Fjord component that takes Kafka client properties (Connect
// workers and their tasks, MirrorMaker, the CLI's --command-config)
// reaches TLS and SASL brokers with the keys Kafka users already write.
package clientsec
