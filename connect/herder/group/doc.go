// Package group is how Connect workers form a cluster: a client for the
// Kafka classic group protocol with protocol type "connect" (Member), the
// Connect sub-protocols' metadata and assignment encodings (byte for byte
// Kafka's ConnectProtocol and IncrementalCooperativeConnectProtocol), and
// Kafka's IncrementalCooperativeAssignor (Assignor).
//
// Usage: the distributed herder owns one Member. It calls Join whenever it
// must (re)join; Join finds the coordinator, runs JoinGroup (with the
// MEMBER_ID_REQUIRED round trip), lets the leader compute assignments
// through the Handler, runs SyncGroup and returns the member's Generation.
// A background goroutine then heartbeats every heartbeat interval and
// reports, on Notices, when the group starts rebalancing, when this member
// was fenced out (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION), or when no
// coordinator answered for a whole session timeout (the herder must stop
// its work: the group has moved on without it).
//
//	m := group.NewMember(group.Config{Client: cl, Group: "connect-cluster", Handler: h})
//	gen, err := m.Join(ctx)
//	select { case n := <-m.Notices(): ...rejoin... }
//	m.Leave(ctx)
//
// Design. kgo's consumer-group code speaks only the consumer protocol, so
// the requests are built with kmsg and sent with kgo's Broker(id).Request
// to the coordinator this package found itself (FindCoordinator through
// Client.Request), which keeps coordinator failover in our hands and
// testable. Member's state (member id, generation, coordinator) is guarded
// by one mutex never held across I/O; Join is called from one goroutine
// (the herder's) and stops the heartbeat goroutine before rejoining, so
// heartbeats never race with a join of the same member.
//
// The assignor is a port of Kafka's IncrementalCooperativeAssignor
// (KIP-415): connectors and tasks spread evenly; load-balancing moves are
// made by revoking in one round and assigning in the follow-up rebalance;
// the work of a worker that disappears is held back for
// scheduled.rebalance.max.delay.ms so a bouncing worker gets it back, then
// given to the workers that are new or idle (or spread over all of them).
package group
