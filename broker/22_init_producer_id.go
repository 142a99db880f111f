package broker

// InitProducerId, v0-v5, for idempotent producers: each call returns a
// fresh producer id at epoch 0, taken from blocks of ids the controller
// reserves durably (so ids are never reused across restarts). A
// transactional id is refused: Fjord has no transaction coordinator yet.

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// producerIDBlock is how many ids one controller reservation covers
// (Kafka's ProducerIdsBlock size).
const producerIDBlock = 1000

type producerIDAllocator struct {
	mu        sync.Mutex
	next, end int64
}

func (s *Server) nextProducerID(ctx context.Context) (int64, error) {
	a := &s.producerIDs
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.next >= a.end {
		first, n, err := s.allocateProducerIDs(ctx)
		if err != nil {
			return 0, err
		}
		a.next, a.end = first, first+n
	}
	id := a.next
	a.next++
	return id, nil
}

func (s *Server) handleInitProducerID(ctx context.Context, r *kmsg.InitProducerIDRequest) *kmsg.InitProducerIDResponse {
	resp := r.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if r.TransactionalID != nil {
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		return resp
	}
	id, err := s.nextProducerID(ctx)
	if err != nil {
		s.log.Error("allocate producer ids", "err", err)
		resp.ErrorCode = kerr.UnknownServerError.Code
		return resp
	}
	resp.ProducerID, resp.ProducerEpoch = id, 0
	return resp
}
