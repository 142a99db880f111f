// Package mirrorconfig holds what every mirror connector shares: MM2's
// MirrorConnectorConfig keys (source.cluster.alias, target.cluster.alias,
// replication.policy.*, the source.cluster.* / target.cluster.* client
// settings and their per-client overrides), and franz-go clients built
// from them.
package mirrorconfig
