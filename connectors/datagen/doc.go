// Package datagen is a source connector that generates records, for
// demos, tests and benchmarks. It answers to its own class
// (io.fjord.connect.datagen.DatagenConnector, alias "datagen") and to
// Confluent's (io.confluent.kafka.connect.datagen.DatagenConnector), whose
// common keys it reads:
//
//	{"connector.class": "datagen", "kafka.topic": "users",
//	 "quickstart": "users", "max.interval": "100", "iterations": "1000"}
//	{"connector.class": "datagen", "kafka.topic": "bench", "rate": "0",
//	 "count": "10000000", "seed": "42", "tasks.max": "4",
//	 "value.schema": "id:int64:seq,name:string:8..16,amount:float64:0..1000,ok:boolean"}
//
// Values come from a quickstart (Confluent's users, pageviews, orders,
// stock_trades, ratings schemas) or from value.schema, a one-line spec of
// fields and generators (see spec); keys from a value field
// (schema.keyfield, defaulting to the quickstart's), from key.schema, or
// null. Pacing is Confluent's random wait of up to max.interval before
// each record, unless rate (records/s for the whole connector, 0 for as
// fast as possible) is set.
//
// Records are numbered: task i of n generates sequence numbers i, i+n,
// i+2n, ..., and record g is a function of the seed and g alone (its
// random stream is seeded from both), so the same seed gives the same
// records on every run whatever tasks.max is, and count splits exactly.
// Each record's source offset {"current.iteration": k} (partition
// {"task.id": i}) is the number of records the task has generated; a
// restarted task continues with the next one, repeating nothing that was
// committed and skipping nothing. Keeping tasks.max unchanged keeps that
// promise; changing it changes the tasks' shares (a warning is logged).
//
// Generation is built for throughput: the records and strings of a batch
// share a few allocations, schemas are built once, option values are
// boxed once, and each value is made without validation or lookups by
// name. The per-record source offset map is the largest remaining cost:
// the runtime commits each record's offset on its own, so each needs one.
package datagen
