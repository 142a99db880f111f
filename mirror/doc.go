// Package mirror is Fjord's MirrorMaker 2 equivalent. Its subpackages:
//
//	policy        replication policies (Default, Identity), cycle detection,
//	              the provenance header that lets identity-named topics run
//	              active-active
//	records       MM2's wire formats: OffsetSync, Checkpoint, Heartbeat
//	filter        topic, group and config-property filters
//	mirrorconfig  the keys every mirror connector shares (cluster aliases,
//	              per-cluster client settings) and Kafka clients built from them
//	source        MirrorSourceConnector
//	checkpoint    MirrorCheckpointConnector and the offset-sync store
//	heartbeat     MirrorHeartbeatConnector
//	mm2           mm2.properties and the dedicated `fjord mirror` driver
package mirror
