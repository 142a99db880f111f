// Package file is Kafka's FileStreamSource and FileStreamSink connectors,
// with Kafka 4.4's class names, config keys, defaults and behaviour, so a
// connector config written for Kafka Connect runs unchanged:
//
//	{"connector.class": "FileStreamSource", "file": "/var/log/app.log",
//	 "topic": "app-log", "batch.size": "2000"}
//	{"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
//	 "file": "/tmp/out.txt", "topics": "app-log"}
//
// The source runs one task whatever tasks.max says (one file is one
// stream). It follows the file as it grows, emits one STRING record per
// line (terminated by \n, \r\n or \r; an unterminated last line waits for
// its terminator), decodes bytes as Java's UTF-8 decoder does (malformed
// input becomes U+FFFD), and reads from standard input when no file is
// set. Each record carries the source partition {"filename": file} and
// the offset {"position": N}, the byte position after its line; a task
// that starts again seeks to the committed position, so nothing
// acknowledged is read twice and nothing is skipped. Kafka counts the
// position in UTF-16 characters, but seeks by bytes on restart; Fjord
// counts bytes, so both agree on ASCII files and Fjord also resumes
// correctly on others.
//
// The sink appends one line per record, the value printed as Java's
// String.valueOf prints the objects Kafka's converters produce (see
// JavaString), to a file or standard output. Lines are buffered and
// written whole (so several tasks appending to one file never interleave
// inside a line), and PreCommit writes and fsyncs them before the runtime
// commits the consumer offsets (Kafka only flushes).
package file
