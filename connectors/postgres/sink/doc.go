// Package sink is Fjord's PostgreSQL sink connector, a drop-in for
// Confluent's JDBC sink (io.confluent.connect.jdbc.JdbcSinkConnector)
// writing to PostgreSQL: the same config keys, defaults and validation
// (connection.url, insert.mode, pk.mode, pk.fields, delete.enabled,
// auto.create, auto.evolve, table.name.format, fields.whitelist,
// batch.size, max.retries, db.timezone, quote.sql.identifiers, ...), the
// same column mapping and DDL as Confluent's PostgreSqlDatabaseDialect,
// plus PostgreSQL types for Debezium's semantic types (io.debezium.time.*,
// Json, Uuid, Xml, VariableScaleDecimal) so that CDC events flattened by
// ExtractNewRecordState land as dates, times, jsonb and uuid.
//
// How a put is written: its records are grouped per table into runs of
// one schema (and, outside upsert mode, one operation). Each run's rows
// are rendered as COPY text and sent in one round trip with the
// statements that apply them:
//
//	insert  COPY table (cols) FROM STDIN
//	upsert  COPY staging; INSERT INTO table SELECT ... FROM staging
//	        ON CONFLICT (keys) DO UPDATE SET ...; DELETE ... USING staging
//	update  COPY staging; UPDATE table SET ... FROM staging WHERE keys match
//
// where staging is a session-private temporary table (ON COMMIT DELETE
// ROWS) with the target's column types. An upsert keeps the last row of
// each key in a put, deletes included, which is what applying the records
// one by one would leave. The whole put is one transaction, committed
// before Put returns: every offset the runtime commits is of rows already
// in the database (PreCommit holds back partitions of a put that failed).
//
// Errors: a lost connection or a transient server error (deadlock,
// shutdown, a foreign key whose row is not there yet) makes Put return a
// RetriableError, max.retries times, retry.backoff.ms apart; the runtime
// puts the same records again (upserts make that idempotent). A record
// the database refuses, or that cannot be mapped, goes to the errant
// record reporter (errors.tolerance=all, dead letter queue) after the
// batch is retried record by record; without a reporter the task fails
// with the database's message.
package sink
