package replica

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Error is a Kafka error with the message Kafka gives for the case. It
// unwraps to the kerr value, so errors.Is(err, kerr.NotEnoughReplicas)
// holds and the broker's error mapping (errors.As *kerr.Error) finds the
// code; Error() is the message alone, for the response's ErrorMessage.
type Error struct {
	Code    *kerr.Error
	Message string
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Code }

func errorf(code *kerr.Error, format string, args ...any) error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// codeOf returns the Kafka error inside err, or nil.
func codeOf(err error) *kerr.Error {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke
	}
	return nil
}
