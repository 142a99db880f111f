package broker

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/fjordhq/fjord/broker/batch"
	"github.com/fjordhq/fjord/broker/log"
)

// errorCode maps storage errors to the Kafka error code a client acts on.
func errorCode(err error) int16 {
	var ke *kerr.Error
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ke):
		return ke.Code
	case errors.Is(err, log.ErrOffsetOutOfRange):
		return kerr.OffsetOutOfRange.Code
	case errors.Is(err, log.ErrOutOfOrderSequence):
		return kerr.OutOfOrderSequenceNumber.Code
	case errors.Is(err, log.ErrInvalidProducerEpoch):
		return kerr.InvalidProducerEpoch.Code
	case errors.Is(err, log.ErrUnknownProducerID):
		return kerr.UnknownProducerID.Code
	case errors.Is(err, batch.ErrCRC), errors.Is(err, batch.ErrCorrupt), errors.Is(err, batch.ErrTruncated):
		return kerr.CorruptMessage.Code
	case errors.Is(err, log.ErrRecordBatchTooLarge):
		return kerr.RecordListTooLarge.Code // Kafka's RecordBatchTooLargeException
	case errors.Is(err, log.ErrClosed):
		return kerr.NotLeaderForPartition.Code
	}
	return kerr.KafkaStorageError.Code
}
