// Package records encodes and decodes MirrorMaker 2's records byte for
// byte: OffsetSync (mm2-offset-syncs.<cluster>.internal), Checkpoint
// (<source>.checkpoints.internal) and Heartbeat (heartbeats), so MM2's
// tools and Fjord read each other's topics.
package records
