// Package runtime is the Connect worker runtime: what Kafka Connect's
// Worker, WorkerSourceTask, WorkerSinkTask, RetryWithToleranceOperator,
// DeadLetterQueueReporter and the worker and connector configs do, in Go.
// A herder (connect/herder: Standalone or Distributed) decides what runs;
// the Worker runs it:
//
//	cfg, _ := runtime.ParseWorkerConfig(props, runtime.Standalone)
//	w, _ := runtime.NewWorker(cfg, runtime.WorkerOptions{WorkerID: "host:8083", Offsets: offsets})
//	w.StartConnector(ctx, name, config, storage.TargetStarted, listener, reconfigure)
//	taskConfigs, _ := w.ConnectorTaskConfigs(ctx, name, config)
//	w.StartTask(ctx, storage.TaskID{Connector: name, Task: 0}, config, taskConfigs[0], storage.TargetStarted, listener)
//
// Configs. WorkerConfig and ConnectorConfig are built from Kafka Connect
// 4.4's own definitions (kafkadefs.json, dumped from its jars by
// testdata/kafkaref/gen.sh): same names, types, defaults, groups, order and
// documentation. ValidateConnectorConfig answers as Kafka's
// AbstractHerder.validateConnectorConfig does — common, sink or source
// keys, every transformation's and predicate's keys embedded under their
// alias, KIP-891 plugin versions, the sink topic rules, exactly-once
// checks, the connector's own keys and Validate, the converters' keys and
// the client overrides allowed by connector.client.config.override.policy
// — and is checked against answers captured from Kafka Connect 4.4
// (testdata/kafkaref/validate). Kafka client properties (the worker's
// producer./consumer./admin. keys and connectors' *.override. keys) map to
// franz-go options in KafkaClientOpts.
//
// Source tasks. One goroutine per task polls, applies the
// transformations, converts and hands records to a franz-go producer
// (Kafka's defaults for Connect: acks=all, idempotent, no compression,
// retried until delivered). Each record is tracked per source partition
// in submission order; every offset.flush.interval.ms a committer writes,
// per partition, the offset of the last record of the acknowledged prefix
// to the offset store, then calls the task's Commit. A crash therefore
// re-sends at most what was not yet committed (at-least-once), and never
// commits past a record the brokers did not acknowledge. The hot path
// allocates one object per record (the Kafka record together with its
// offset-tracking entry; tasks that implement CommitRecord also get a
// RecordMetadata); converters that can append (JsonConverter) write a
// poll's values into one buffer. Sink polls are converted into one slab
// of records.
//
// Sink tasks. One goroutine per task consumes with a franz-go group
// consumer in group connect-<name> (Kafka's consumer default assignors,
// range then cooperative-sticky, so Fjord and Kafka Connect workers can
// share a group), converts and transforms each poll, and gives it to Put.
// Every offset.flush.interval.ms (or when the task asks) PreCommit says
// which offsets are durable and only those are committed; rebalances
// commit and Close revoked partitions and Open new ones, and never run
// concurrently with the task's own calls. A RetriableError from Put
// retries the batch after the task's timeout.
//
// Errors. Conversions and transformations that fail with a
// connect.RetriableError are retried with exponential backoff (300 ms,
// doubling, up to errors.retry.delay.max.ms) for errors.retry.timeout;
// then, or at once for other errors, the failure is logged
// (errors.log.enable), sink records go to the dead letter queue with
// Kafka's __connect.errors.* headers, and the record is skipped
// (errors.tolerance=all) or the task fails ("Tolerance exceeded in error
// handler"). A failed task reports FAILED with a trace through the
// herder's status listener and stays down until restarted.
//
// Differences from Kafka Connect, on purpose or for now:
//   - status traces and the DLQ stack trace header carry Go error chains
//     ("Caused by:" lines) under Kafka's exception class names where the
//     failure has a Kafka counterpart (DataException, RetriableException,
//     ConnectException), not Java stack frames;
//   - validate answers differ only where the plugins differ: versions of
//     Fjord's own plugins (plugins.DefaultVersion), the recommended class
//     lists (the plugins installed), and Go's regexp error wording;
//   - "task.class" in task configs is the connector's TaskClass() or its
//     class with Connector replaced by Task;
//   - not supported yet: exactly-once source (exactly.once.support and
//     transaction.boundary are validated but records are not
//     transactional), per-connector offsets topics (offsets.storage.topic
//     is accepted and ignored), config providers (config.action.reload is
//     accepted), security protocols other than PLAINTEXT and SSL, and the
//     producer's batch.size (franz-go batches up to max.request.size).
package runtime
