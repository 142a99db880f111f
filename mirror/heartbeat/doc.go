// Package heartbeat is MM2's MirrorHeartbeatConnector: one task that
// writes a records.Heartbeat (source alias, target alias, time) to the
// heartbeats topic of the target cluster every
// emit.heartbeats.interval.seconds. MirrorSourceConnector replicates
// heartbeats topics onwards, so a heartbeat's arrival on another cluster
// (as "<alias>.heartbeats") shows the path is alive and how long it took.
package heartbeat
