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
// connector configs, group ids and internal topic names (mm2-offsets.*,
// mm2-configs.*, mm2-status.*) as MirrorMaker 2.
//
// Where it departs from MM2: config.providers is refused (Fjord's runtime
// does not resolve ${provider:...} yet); "x->y.enabled" and the other
// booleans are read with surrounding blanks ignored; cluster aliases may
// not contain "->", "/" or blanks; the driver compares the connectors'
// configs with the file's every Resync, not only when a worker becomes
// the group's leader, so a config changed over REST is put back.
package mm2
