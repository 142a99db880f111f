package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect"
)

// Stage is where in a task a record failed (Kafka's errors.Stage); DLQ
// headers and error logs name it.
type Stage string

const (
	StageKeyConverter    Stage = "KEY_CONVERTER"
	StageValueConverter  Stage = "VALUE_CONVERTER"
	StageHeaderConverter Stage = "HEADER_CONVERTER"
	StageTransformation  Stage = "TRANSFORMATION"
	StageTaskPut         Stage = "TASK_PUT"
	StageTaskPoll        Stage = "TASK_POLL"
	StageKafkaProduce    Stage = "KAFKA_PRODUCE"
	StageKafkaConsume    Stage = "KAFKA_CONSUME"
)

// retryDelayMin is Kafka's RETRIES_DELAY_MIN_MS: the first retry waits
// 300 ms, each next one twice as long, up to errors.retry.delay.max.ms.
const retryDelayMin = 300 * time.Millisecond

// ConnectError is a failure the runtime raises itself (Kafka's
// ConnectException), wrapping its cause.
type ConnectError struct {
	Msg string
	Err error
}

func (e *ConnectError) Error() string {
	if e.Err == nil {
		return e.Msg
	}
	return e.Msg + ": " + e.Err.Error()
}

func (e *ConnectError) Unwrap() error { return e.Err }

// Trace renders the error as a status trace (see ErrorTrace); herders
// use it for FAILED statuses.
func (e *ConnectError) Trace() string { return ErrorTrace(e) }

// traced gives any error a Trace for status reports.
type traced struct{ error }

func (t traced) Unwrap() error { return t.error }
func (t traced) Trace() string { return ErrorTrace(t.error) }

// withTrace returns err with a Trace method (nil stays nil).
func withTrace(err error) error {
	var ce *ConnectError
	if err == nil || errors.As(err, &ce) {
		return err
	}
	return traced{err}
}

// failure is one failed operation on one record, as Kafka's
// ProcessingContext describes it to reporters.
type failure struct {
	stage    Stage
	class    string // the plugin class that failed
	err      error
	attempts int
	consumed *kgo.Record     // sink tasks: the record as read from Kafka
	source   *connect.Record // source tasks: the record as polled
}

// errorHandler is Kafka's RetryWithToleranceOperator with its reporters:
// retriable failures (connect.RetriableError) are retried with
// exponential backoff for errors.retry.timeout; a failure that is not
// retried (or runs out of time) is reported (log, dead letter queue) and
// either skipped (errors.tolerance=all) or fails the task.
type errorHandler struct {
	task         string
	connector    string
	taskID       int
	retryTimeout time.Duration // < 0: forever
	maxDelay     time.Duration
	tolerateAll  bool
	logErrors    bool
	logMessages  bool
	log          *slog.Logger
	dlq          *dlqReporter
	metrics      *taskMetrics
	sleep        func(ctx context.Context, d time.Duration) bool
}

func newErrorHandler(cc *ConnectorConfig, id string, connector string, task int, log *slog.Logger, m *taskMetrics) *errorHandler {
	return &errorHandler{
		task: id, connector: connector, taskID: task,
		retryTimeout: cc.ErrorRetryTimeout, maxDelay: cc.ErrorMaxDelay, tolerateAll: cc.ToleranceAll,
		logErrors: cc.ErrorsLog, logMessages: cc.ErrorsLogIncludeMessages, log: log, metrics: m, sleep: sleepCtx,
	}
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// retry re-runs op while it fails with a retriable error and time
// remains; it returns op's last error (nil on success) and the attempts.
func (h *errorHandler) retry(ctx context.Context, first error, op func() error) (error, int) {
	err, attempt := first, 1
	start := time.Now()
	for {
		var re *connect.RetriableError
		if err == nil || !errors.As(err, &re) {
			return err, attempt
		}
		h.metrics.failures.Inc()
		if h.retryTimeout >= 0 && time.Since(start) >= h.retryTimeout {
			return err, attempt
		}
		delay := retryDelayMin << (attempt - 1)
		if delay > h.maxDelay || delay <= 0 {
			delay = time.Duration(rand.Int64N(int64(h.maxDelay) + 1))
		}
		if h.retryTimeout >= 0 {
			if left := h.retryTimeout - time.Since(start); delay > left {
				delay = max(left, 0)
			}
		}
		if !h.sleep(ctx, delay) {
			return err, attempt
		}
		h.metrics.retries.Inc()
		attempt++
		err = op()
	}
}

// handle deals with an operation that failed with err: it retries op if
// the error is retriable, then reports a remaining failure. It returns
// nil if op finally succeeded (ok) or the failure is tolerated (the
// caller skips the record: ok false), or the error that fails the task.
func (h *errorHandler) handle(ctx context.Context, f failure, op func() error) (ok bool, fatal error) {
	err, attempts := h.retry(ctx, f.err, op)
	if err == nil {
		return true, nil
	}
	f.err, f.attempts = err, attempts
	h.metrics.failures.Inc()
	h.metrics.errors.Inc()
	h.report(ctx, f)
	if !h.tolerateAll {
		return false, &ConnectError{Msg: "Tolerance exceeded in error handler", Err: err}
	}
	h.metrics.skipped.Inc()
	return false, nil
}

// report logs the failure (errors.log.enable) and writes the record to
// the dead letter queue (sink tasks with errors.deadletterqueue.topic.name).
func (h *errorHandler) report(ctx context.Context, f failure) {
	if h.logErrors {
		attrs := []any{"task", h.task, "stage", string(f.stage), "class", f.class, "attempts", f.attempts, "err", f.err}
		if f.consumed != nil {
			attrs = append(attrs, "topic", f.consumed.Topic, "partition", f.consumed.Partition, "offset", f.consumed.Offset)
			if h.logMessages {
				attrs = append(attrs, "timestamp", f.consumed.Timestamp.UnixMilli())
			}
		}
		if f.source != nil && h.logMessages {
			attrs = append(attrs, "record", sourceRecordString(f.source))
		}
		h.log.Error("error encountered in task", attrs...)
	}
	if h.dlq != nil && f.consumed != nil {
		if err := h.dlq.report(ctx, h, f); err != nil {
			h.log.Error("could not write a failed record to the dead letter queue", "task", h.task, "topic", h.dlq.topic, "err", err)
		}
	}
}

// sourceRecordString renders a source record for error logs, as Kafka's
// LogReporter does with errors.log.include.messages.
func sourceRecordString(r *connect.Record) string {
	return fmt.Sprintf("SourceRecord{sourcePartition=%v, sourceOffset=%v} ConnectRecord{topic='%s', kafkaPartition=%d, key=%v, keySchema=%v, value=%v, valueSchema=%v, timestamp=%d, headers=%v}",
		r.SourcePartition, r.SourceOffsetMap(), r.Topic, r.Partition, r.Key, r.KeySchema, r.Value, r.ValueSchema, r.Timestamp, r.Headers)
}

// DLQ context headers (Kafka's DeadLetterQueueReporter).
const (
	headerPrefix           = "__connect.errors."
	headerTopic            = headerPrefix + "topic"
	headerPartition        = headerPrefix + "partition"
	headerOffset           = headerPrefix + "offset"
	headerConnector        = headerPrefix + "connector.name"
	headerTaskID           = headerPrefix + "task.id"
	headerStage            = headerPrefix + "stage"
	headerClass            = headerPrefix + "class.name"
	headerExceptionClass   = headerPrefix + "exception.class.name"
	headerExceptionMessage = headerPrefix + "exception.message"
	headerExceptionTrace   = headerPrefix + "exception.stacktrace"
)

// dlqReporter writes failed sink records, as read from Kafka, to the dead
// letter queue topic.
type dlqReporter struct {
	topic          string
	contextHeaders bool
	cl             *kgo.Client
}

func (d *dlqReporter) report(ctx context.Context, h *errorHandler, f failure) error {
	in := f.consumed
	r := &kgo.Record{Topic: d.topic, Key: in.Key, Value: in.Value, Timestamp: in.Timestamp}
	r.Headers = append(r.Headers, in.Headers...)
	if d.contextHeaders {
		r.Headers = append(r.Headers,
			kgo.RecordHeader{Key: headerTopic, Value: []byte(in.Topic)},
			kgo.RecordHeader{Key: headerPartition, Value: []byte(strconv.Itoa(int(in.Partition)))},
			kgo.RecordHeader{Key: headerOffset, Value: []byte(strconv.FormatInt(in.Offset, 10))},
			kgo.RecordHeader{Key: headerConnector, Value: []byte(h.connector)},
			kgo.RecordHeader{Key: headerTaskID, Value: []byte(strconv.Itoa(h.taskID))},
			kgo.RecordHeader{Key: headerStage, Value: []byte(f.stage)},
			kgo.RecordHeader{Key: headerClass, Value: []byte(f.class)},
		)
		if f.err != nil {
			r.Headers = append(r.Headers,
				kgo.RecordHeader{Key: headerExceptionClass, Value: []byte(javaErrorClass(f.err))},
				kgo.RecordHeader{Key: headerExceptionMessage, Value: []byte(f.err.Error())},
				kgo.RecordHeader{Key: headerExceptionTrace, Value: []byte(ErrorTrace(f.err))},
			)
		}
	}
	if err := d.cl.ProduceSync(ctx, r).FirstErr(); err != nil {
		return fmt.Errorf("produce to dead letter queue %s: %w", d.topic, err)
	}
	h.metrics.dlqProduced.Inc()
	return nil
}

// javaErrorClass names an error as Kafka tools expect to read it: the
// Java exception class Kafka Connect would have thrown for the same
// failure, or the Go type for errors of other origins.
func javaErrorClass(err error) string {
	var de *connect.DataError
	var re *connect.RetriableError
	var ce *ConnectError
	var cfg *connect.ConfigError
	if jc, ok := err.(interface{ JavaClass() string }); ok {
		return jc.JavaClass()
	}
	switch {
	case errors.As(err, &ce) && ce.Msg != "":
		return "org.apache.kafka.connect.errors.ConnectException"
	case errors.As(err, &re):
		return "org.apache.kafka.connect.errors.RetriableException"
	case errors.As(err, &de):
		return "org.apache.kafka.connect.errors.DataException"
	case errors.As(err, &cfg):
		return "org.apache.kafka.common.config.ConfigException"
	}
	return fmt.Sprintf("%T", err)
}

// ErrorTrace renders an error for a FAILED status's trace and the DLQ
// stack trace header: the error, then its causes, each on a "Caused by:"
// line as Java prints them. Go errors carry no stack; the chain of
// wrapped errors is what there is.
func ErrorTrace(err error) string {
	if err == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(javaErrorClass(err) + ": " + err.Error())
	seen := err.Error()
	for cause := errors.Unwrap(err); cause != nil; cause = errors.Unwrap(cause) {
		msg := cause.Error()
		if msg == seen {
			continue
		}
		b.WriteString("\nCaused by: " + javaErrorClass(cause) + ": " + msg)
		seen = msg
	}
	return b.String()
}
