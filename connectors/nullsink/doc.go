// Package nullsink is a sink connector that discards every record it is
// given, so that a benchmark of the sink path measures the runtime
// (consumer, converters, transformations, offset commits) and nothing
// else. It answers to io.fjord.connect.NullSinkConnector and the alias
// NullSink:
//
//	{"connector.class": "NullSink", "topics": "orders", "tasks.max": "1",
//	 "commit.every.records": "50000"}
//
// Every task counts what Put hands it. The counts are visible three ways:
//
//   - from outside the process, through the connector's consumer group
//     (connect-<name>): with commit.every.records set, a task asks the
//     runtime to commit its offsets each time it has received that many
//     more records, so an observer watching the group's committed offsets
//     (kadm FetchOffsets, or any lag monitor) sees progress at that
//     granularity instead of waiting for the worker's
//     offset.flush.interval.ms, and sees the end at once when the task's
//     total is a multiple of it. This is how `fjord bench connect` times
//     the sink end to end (one task, N records, N a multiple);
//   - in the same process, through Received(connector), for tests;
//   - in the worker's log: one line when a task gets its first records
//     and one with its total when it stops.
//
// Put does nothing per record (one atomic add per batch), and PreCommit
// returns the offsets it is given: everything put is "durable", so the
// runtime commits all it delivered.
package nullsink
