package controller

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/fjordhq/fjord/broker/metadata"
)

// UnregisterBroker removes a broker's registration (Kafka's
// ReplicationControlManager.unregisterBroker, the UnregisterBroker API
// behind `kafka-cluster.sh unregister` and `fjord cluster remove-broker`).
// As in Kafka the broker leaves every ISR and its leaderships move to
// another in-sync replica first (where it is the last ISR member the
// partition keeps it and goes offline, as fencing does); the partitions'
// replica lists are not changed — moving replicas is reassignment's job,
// done before. Kafka does not refuse a broker that is still running: its
// next heartbeat finds no registration and it registers again, as a new
// incarnation. Unknown ids answer BROKER_ID_NOT_REGISTERED.
func (q *Quorum) UnregisterBroker(ctx context.Context, id int32) *Error {
	if err := q.lockActive(); err != nil {
		return err
	}
	defer q.mu.Unlock()
	img := q.Image()
	b := img.Brokers[id]
	if b == nil {
		return errorf(kerr.BrokerIDNotRegistered, "Broker ID %d is not currently registered", id)
	}
	recs := q.partitionUpdates(img, id, -1, q.partitionsWithReplicaInISR(img, id))
	recs = append(recs, metadata.Record{UnregisterBroker: &metadata.UnregisterBrokerRecord{ID: id, Epoch: b.Epoch}})
	if err := q.propose(recs); err != nil {
		return err
	}
	// The heartbeat state goes with the registration: a heartbeat from a
	// process still running now answers BROKER_ID_NOT_REGISTERED.
	if s := q.sessions[id]; s != nil {
		s.stopWatch()
	}
	delete(q.sessions, id)
	q.log.Info("broker unregistered", "broker", id, "epoch", b.Epoch)
	return nil
}
