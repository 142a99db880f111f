// Package source is the S3 source connector: it reads back what the S3
// sink (Confluent's io.confluent.connect.s3.S3SinkConnector layout, Fjord's
// connectors/s3/sink) wrote — same object keys, formats and partitioners —
// into Kafka topics, for restores, backfills and moving data between
// clusters. It answers to "s3-source", "S3SourceConnector", its own class
// io.fjord.connect.s3.source.S3SourceConnector and Confluent's
// io.confluent.connect.s3.source.S3SourceConnector, whose RESTORE_BACKUP
// mode it follows. A sink config with the connector class changed is a
// valid source config:
//
//	{"connector.class": "s3-source", "tasks.max": "4",
//	 "s3.bucket.name": "backups", "s3.region": "eu-west-1",
//	 "format.class": "io.confluent.connect.s3.format.avro.AvroFormat",
//	 "topics.dir": "topics", "partitioner.class": "io.confluent.connect.storage.partitioner.DefaultPartitioner"}
//
// # Keys
//
// The s3.* transport keys (bucket, region, store.url, credentials,
// retries), the format keys and the partitioner keys (topics.dir,
// directory.delim, file.delim, partitioner.class, path.format, ...) are
// the storage, format and partitioner packages'. The source's own:
//
//	mode                   RESTORE_BACKUP (default and only value; Confluent's
//	                       GENERIC mode, arbitrary files routed by
//	                       topic.regex.list, is refused by validation)
//	format.class           the format the objects were written in (required)
//	s3.poll.interval.ms    how often the bucket is listed again (60000)
//	record.batch.max.size  records per poll, at most (200)
//	restore.partitions     true: each record goes to the partition its
//	                       object name carries (Confluent's behaviour);
//	                       false: -1, the producer's partitioner picks (true)
//	topics, topics.regex   restore only these topics / the topics whose whole
//	                       name matches; both empty: every topic (Fjord's keys)
//	keys.format.class,     the side files' formats, the sink's keys
//	headers.format.class   (AvroFormat)
//	object.min.age.ms      an object is read once it is this old (10000);
//	                       0 for a bucket no sink writes to any more (Fjord's)
//
// To restore under another topic name, add a RegexRouter transform;
// Confluent's RESTORE_BACKUP has no key for it either.
//
// # What is read, in which order
//
// The connector lists everything under topics.dir and parses each key
// with the partitioner's layout (<topic>+<partition>+<start offset><ext>
// after the topic's directory). Keys with another extension, keys that do
// not parse, and the ".keys"/".headers" side files are not partitions of
// their own; they are skipped (Confluent fails on a name it cannot
// parse). The (topic, partition) pairs found are dealt round robin, in
// order, to at most tasks.max tasks; the connector lists again every
// s3.poll.interval.ms and asks the runtime for new task configs when the
// set changed (a new topic or partition, or one whose objects are gone).
//
// A task lists each of its topics' prefixes (every encoded-partition
// directory: a time-based partitioner spreads one Kafka partition over
// many) and reads each partition's objects by start offset, then key —
// Kafka offset order, whatever the directory names. It reads one object
// at a time, round robin over its partitions, streaming it with the format
// reader: JSON, Avro and byte-array objects come from one GET and are never
// whole in memory; a reader that seeks backwards (Parquet reads its footer
// first) gets the object loaded whole, so Parquet objects must fit in
// memory. Each stored record becomes one source record: the topic and (by
// default) the partition of the object's name, the value and its schema
// from the object, the key from the ".keys" side file and the headers
// (STRING values, all the sink kept) from the ".headers" side file when
// the listing found them — record i of a side file belongs to record i of
// the object. No timestamp is set (the formats keep none): the producer
// stamps the time of the restore. When a task has read every object it
// listed, it waits s3.poll.interval.ms from the last listing and lists
// again, so it follows a sink that keeps writing. A sink uploads an object
// and its side files one after the other (Fjord's sink a commit's objects
// side by side), so an object younger than object.min.age.ms — by the
// store's clock, or by ours since a listing first saw it when the store's
// runs ahead — is left, with every object of its partition after it, for
// a later listing (due when it is old enough): read at once it could lack
// its side files, or pass an earlier object still uploading, which the
// cursor would then skip for good. An upload delayed longer than that
// (retried for a while) can still be passed that way. A time-based layout
// whose objects overlap in offsets (late records) is read object by
// object, so those records come in the order of the objects, not of the
// offsets.
//
// # Offsets
//
// A record's source partition is {"topic": t, "partition": p} (the names
// in the bucket), its source offset {"object": key, "start": the object's
// start offset, "record": its index in the object}. A task that starts
// again skips every object that sorts before the committed one and the
// committed object's records up to and including the committed index, so
// nothing committed is sent twice and nothing is skipped. Like every
// Connect source without exactly-once support in the runtime, records
// sent after the last offset commit are sent again after a crash (a clean
// stop commits them). Offsets altered over REST are checked for that
// shape; a tombstone makes the partition start over.
//
// # Errors
//
// S3 failures (unreachable, throttled, a stream that breaks) are logged
// and retried with a backoff from 250 ms doubling to 30 s, on top of the
// storage client's own retries; a task resumes after the last record it
// emitted. An object whose bytes do not decode — or a side file that
// holds fewer or more records than its object — fails the task with an
// error naming the object's key; the records before it were emitted.
//
// Records for a partition number the destination topic lacks go where
// the runtime's producer puts them (its partitioner), so create the
// topics with at least the original partition count first, as Confluent
// advises. Listing costs one LIST request per 1000 objects per interval
// for the connector and for each task's topics; each task keeps the keys
// of the objects it has yet to read in memory (about 100 bytes each).
package source
