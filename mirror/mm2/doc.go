// Package mm2 reads MirrorMaker 2's mm2.properties and runs it: Config is
// Kafka's MirrorMakerConfig (clusters, per-cluster and per-flow
// overrides, the worker and connector configs MM2 derives from them),
// Driver is MirrorMaker's dedicated mode (one Connect worker group per
// source->target pair on the target cluster, the three mirror connectors
// configured in each), and Status measures how far each flow's remote
// topics are behind their sources.
//
// The derivation follows org.apache.kafka.connect.mirror.MirrorMakerConfig
// key for key, so an mm2.properties written for Kafka gives the same
// connector configs, group ids and internal topic names: Fjord can take
// over from a running MirrorMaker 2 and resume from its offsets.
package mm2
