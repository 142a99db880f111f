package cdc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/fjordhq/fjord/connect"
)

// streamer is the state of one replication session.
type streamer struct {
	t  *Task
	rc *pgconn.PgConn

	relations map[uint32]*capturedTable // nil entry: a table not captured
	skip      offset                    // what the stored offset says was already emitted

	offsetFn   connect.OffsetFunc // txOffset's function, for offsetBase
	offsetBase offset

	// The transaction being received.
	inTx       bool
	xid        uint32
	finalLSN   uint64
	commitTime time.Time
	changeSeq  int64
	skipTx     bool
	// seqPrefix starts source.sequence: Debezium's first element is the
	// LSN of the transaction's BEGIN, null in the session's first
	// transaction.
	seqPrefix string
	began     bool
	// idleLSN is a position with nothing unsent before it: the end of the
	// last transaction or the server's WAL end reported while idle.
	idleLSN uint64

	ch    change
	batch []*connect.SourceRecord

	// Transaction metadata (provide.transaction.metadata): the current
	// transaction's data events, in all and per table (in order of first
	// appearance).
	txEvents int64
	txTables []string
	txPer    map[string]int64

	incr *incremental // an ad-hoc incremental snapshot in progress

	nextStatus, nextHeartbeat time.Time
	deadline                  time.Time
}

// stream runs START_REPLICATION from start and queues change records
// until ctx is cancelled. rc may be an open replication connection (the
// one that created the slot), or nil.
func (t *Task) stream(ctx context.Context, rc *pgconn.PgConn, start uint64, skip offset) error {
	var err error
	if rc == nil {
		if rc, err = t.s.connectReplication(ctx); err != nil {
			return err
		}
	}
	defer rc.Close(context.Background())
	if err := t.startReplication(ctx, rc, start); err != nil {
		return err
	}
	t.log.Info("streaming changes", "from", lsnString(start))
	if t.confirmed.Load() < start {
		t.confirmed.Store(start)
	}
	st := &streamer{t: t, rc: rc, relations: map[uint32]*capturedTable{}, skip: skip, idleLSN: start}
	if skip.incremental != "" && t.s.signalTable != "" {
		st.incr = &incremental{}
		if err := json.Unmarshal([]byte(skip.incremental), &st.incr.state); err != nil {
			return fmt.Errorf("stored offsets: bad incremental snapshot state %q: %w", skip.incremental, err)
		}
		t.log.Info("resuming the incremental snapshot", "tables", st.incr.state.Tables)
		if err := st.nextChunk(ctx); err != nil {
			return err
		}
	}
	now := time.Now()
	st.nextStatus = now.Add(t.s.statusInterval)
	if t.s.heartbeat > 0 {
		st.nextHeartbeat = now.Add(t.s.heartbeat)
	}
	go func() { // Stop: unblock the read.
		<-ctx.Done()
		rc.Conn().SetReadDeadline(time.Now())
	}()
	return st.loop(ctx)
}

func (t *Task) startReplication(ctx context.Context, rc *pgconn.PgConn, start uint64) error {
	opts := pglogrepl.StartReplicationOptions{PluginArgs: []string{
		"proto_version '1'",
		"publication_names '" + t.s.publication + "'",
	}}
	for attempt := 0; ; attempt++ {
		err := pglogrepl.StartReplication(ctx, rc, t.s.slot, pglogrepl.LSN(start), opts)
		if err == nil {
			return nil
		}
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "55006" && attempt < t.s.slotRetries {
			// The slot is active: another connector, or our previous
			// session that the server has not noticed is gone yet.
			t.log.Warn("replication slot in use; retrying", "slot", t.s.slot, "attempt", attempt+1, "err", pgErr.Message)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(t.s.slotRetryDelay):
			}
			continue
		}
		if errors.As(err, &pgErr) && pgErr.Code == "42704" {
			return fmt.Errorf("replication slot %q does not exist (dropped while the connector ran?): %s; restart the connector (with %s=%s to take a new snapshot)",
				t.s.slot, pgErr.Message, SnapshotModeConfig, SnapshotWhenNeeded)
		}
		return fmt.Errorf("start streaming from slot %q at %s: %w", t.s.slot, lsnString(start), err)
	}
}

func (st *streamer) loop(ctx context.Context) error {
	t := st.t
	for {
		if ctx.Err() != nil {
			return nil
		}
		now := time.Now()
		select {
		case <-t.flushReq:
			st.nextStatus = now
		default:
		}
		if !now.Before(st.nextStatus) {
			if err := st.sendStatus(); err != nil {
				return err
			}
			st.nextStatus = now.Add(t.s.statusInterval)
		}
		if !st.inTx && !st.nextHeartbeat.IsZero() && !now.Before(st.nextHeartbeat) {
			if err := st.heartbeat(ctx); err != nil {
				return err
			}
			st.nextHeartbeat = now.Add(t.s.heartbeat)
		}
		if err := st.setDeadline(now); err != nil {
			return err
		}
		msg, err := st.rc.ReceiveMessage(context.Background())
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || pgconn.Timeout(err) {
				if err := st.flushBatch(ctx); err != nil {
					return err
				}
				continue
			}
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("replication stream: %w", err)
		}
		switch m := msg.(type) {
		case *pgproto3.CopyData:
			if err := st.copyData(ctx, m.Data); err != nil {
				return err
			}
		case *pgproto3.ErrorResponse:
			return fmt.Errorf("replication stream: %s (SQLSTATE %s)", m.Message, m.Code)
		case *pgproto3.CopyDone:
			return fmt.Errorf("the server ended the replication stream")
		}
	}
}

// setDeadline bounds the next read by the next timer (status, heartbeat,
// the queue flush of a partial batch).
func (st *streamer) setDeadline(now time.Time) error {
	d := st.nextStatus
	// A heartbeat waits for the end of the transaction being received:
	// its time must not cut short the reads that bring the rest of it.
	if !st.inTx && !st.nextHeartbeat.IsZero() && st.nextHeartbeat.Before(d) {
		d = st.nextHeartbeat
	}
	if len(st.batch) > 0 {
		// A partial batch waits at most a few ms for more changes.
		if f := now.Add(5 * time.Millisecond); f.Before(d) {
			d = f
		}
	}
	// Never a deadline in the past: every read would fail at once and
	// nothing more would be received.
	if min := now.Add(time.Millisecond); d.Before(min) {
		d = min
	}
	if d.Equal(st.deadline) {
		return nil
	}
	st.deadline = d
	return st.rc.Conn().SetReadDeadline(d)
}

func (st *streamer) sendStatus() error {
	l := st.t.confirmed.Load()
	if l == 0 {
		return nil
	}
	err := pglogrepl.SendStandbyStatusUpdate(context.Background(), st.rc, pglogrepl.StandbyStatusUpdate{WALWritePosition: pglogrepl.LSN(l)})
	if err != nil {
		return fmt.Errorf("send the replication status to the server: %w", err)
	}
	return nil
}

func (st *streamer) copyData(ctx context.Context, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	switch data[0] {
	case pglogrepl.PrimaryKeepaliveMessageByteID:
		pk, err := pglogrepl.ParsePrimaryKeepaliveMessage(data[1:])
		if err != nil {
			return err
		}
		st.t.metrics.sawWALEnd(uint64(pk.ServerWALEnd))
		if !st.inTx && uint64(pk.ServerWALEnd) > st.idleLSN && len(st.batch) == 0 {
			st.idleLSN = uint64(pk.ServerWALEnd)
		}
		if pk.ReplyRequested {
			st.nextStatus = time.Time{}
		}
		return nil
	case pglogrepl.XLogDataByteID:
		xld, err := pglogrepl.ParseXLogData(data[1:])
		if err != nil {
			return err
		}
		st.t.metrics.sawWALEnd(uint64(xld.ServerWALEnd))
		return st.message(ctx, uint64(xld.WALStart), xld.WALData)
	}
	return nil
}

// message handles one pgoutput message at WAL position lsn.
func (st *streamer) message(ctx context.Context, lsn uint64, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	t := st.t
	switch b[0] {
	case 'I', 'U', 'D':
		if st.skipTx {
			return nil
		}
		st.changeSeq++
		if st.finalLSN == st.skip.lsnCommit && st.changeSeq*4+3 <= st.skip.seq {
			return nil // emitted before the restart
		}
		if err := decodeChange(b, &st.ch); err != nil {
			return err
		}
		ct, ok := st.relations[st.ch.relation]
		if !ok {
			return fmt.Errorf("pgoutput: change for relation %d before its Relation message", st.ch.relation)
		}
		if ct == nil {
			return nil
		}
		return st.change(ctx, ct, lsn)
	case 'B':
		var m pglogrepl.BeginMessage
		if err := m.Decode(b[1:]); err != nil {
			return err
		}
		st.inTx, st.xid, st.finalLSN, st.commitTime, st.changeSeq = true, m.Xid, uint64(m.FinalLSN), m.CommitTime, 0
		if st.began {
			st.seqPrefix = `["` + strconv.FormatUint(lsn, 10) + `","`
		} else {
			st.seqPrefix, st.began = `[null,"`, true
		}
		st.skipTx = st.skip.present && st.finalLSN < st.skip.lsnCommit
		st.txEvents, st.txTables = 0, st.txTables[:0]
		clear(st.txPer)
		return nil
	case 'C':
		var m pglogrepl.CommitMessage
		if err := m.Decode(b[1:]); err != nil {
			return err
		}
		st.inTx = false
		t.metrics.sawCommit(st.commitTime)
		if t.s.txMetadata && st.txEvents > 0 {
			st.txEnd(uint64(m.CommitLSN))
		}
		if uint64(m.TransactionEndLSN) > st.idleLSN {
			st.idleLSN = uint64(m.TransactionEndLSN)
		}
		if len(st.batch) >= t.s.maxBatch/2 {
			return st.flushBatch(ctx)
		}
		return nil
	case 'R':
		var m pglogrepl.RelationMessage
		if err := m.Decode(b[1:]); err != nil {
			return err
		}
		return st.relation(ctx, &m)
	case 'T':
		var m pglogrepl.TruncateMessage
		if err := m.Decode(b[1:]); err != nil {
			return err
		}
		if st.skipTx || t.s.skipped["t"] {
			return nil
		}
		for _, oid := range m.RelationIDs {
			st.changeSeq++ // one per truncated table
			ct := st.relations[oid]
			if ct == nil {
				continue
			}
			src := st.source(ct, lsn)
			value := st.env(ct, "t", nil, nil, src, time.Now(), lsn)
			st.add(ct.topic, nil, nil, ct.schemas.EnvelopeSchema, value, 0, nil)
		}
		return nil
	}
	// 'Y' (type), 'O' (origin), 'M' (logical message): nothing to emit.
	return nil
}

// relation (re)builds a table's shape from a Relation message, which
// pgoutput sends before a table's first change in a session and after
// every change of its columns.
func (st *streamer) relation(ctx context.Context, m *pglogrepl.RelationMessage) error {
	t := st.t
	signal := t.s.signalTable != "" && m.Namespace+"."+m.RelationName == t.s.signalTable
	included := t.s.filters.includeTable(m.Namespace, m.RelationName)
	if !included && !signal {
		st.relations[m.RelationID] = nil
		return nil
	}
	ti, err := loadTable(ctx, t.conn, m.RelationID)
	if err != nil {
		return err
	}
	// The relation message is the truth about the tuples; the catalog
	// adds nullability, defaults and the key (it may be ahead of the
	// stream: columns it no longer has are optional, without default).
	ti.schema, ti.name = m.Namespace, m.RelationName
	rel := make([]relColumn, len(m.Columns))
	for i, c := range m.Columns {
		rel[i] = relColumn{name: c.Name, typeOID: c.DataType, typeMod: c.TypeModifier}
	}
	ct, err := t.newCapturedTable(ti, rel)
	if err != nil {
		return err
	}
	ct.identity = m.ReplicaIdentity
	ct.signal, ct.hidden = signal, !included
	st.relations[m.RelationID] = ct
	return nil
}

// change emits the records of one insert, update or delete.
func (st *streamer) change(ctx context.Context, ct *capturedTable, lsn uint64) error {
	t := st.t
	c := &st.ch
	op := "c"
	switch c.op {
	case 'U':
		op = "u"
	case 'D':
		op = "d"
	}
	if t.s.skipped[op] {
		return nil
	}
	now := time.Now()
	src := st.source(ct, lsn)
	var before, after *connect.Struct
	var err error
	if c.oldKind != 0 {
		if before, err = ct.row(&c.old); err != nil {
			return err
		}
	}
	if c.op != 'D' {
		if after, err = ct.row(&c.new); err != nil {
			return err
		}
	}
	if ct.signal && c.op == 'I' {
		if err := st.signal(ctx, after); err != nil {
			return err
		}
	}
	if ct.hidden {
		return nil
	}
	switch c.op {
	case 'I':
		key, err := ct.schemas.KeyOf(after)
		if err != nil {
			return err
		}
		st.windowChange(ct, key)
		st.add(ct.topic, ct.schemas.Key, structOrNil(key), ct.schemas.EnvelopeSchema, st.env(ct, "c", nil, after, src, now, lsn), 0, nil)
	case 'U':
		newKey, err := ct.schemas.KeyOf(after)
		if err != nil {
			return err
		}
		var oldKey *connect.Struct
		if before != nil {
			if oldKey, err = ct.schemas.KeyOf(before); err != nil {
				return err
			}
		}
		st.windowChange(ct, newKey)
		st.windowChange(ct, oldKey)
		if oldKey != nil && newKey != nil && !oldKey.Equal(newKey) {
			// A changed primary key: Debezium emits a delete of the old
			// key (and its tombstone) and a create of the new one, each
			// pointing at the other in a header.
			var hDel, hCreate connect.Headers
			hDel.Add("__debezium.newkey", ct.schemas.Key, newKey)
			hCreate.Add("__debezium.oldkey", ct.schemas.Key, oldKey)
			st.add(ct.topic, ct.schemas.Key, oldKey, ct.schemas.EnvelopeSchema, st.env(ct, "d", before, nil, src, now, lsn), 0, hDel)
			if t.s.tombstones { // the tombstone carries the delete's headers
				st.add(ct.topic, ct.schemas.Key, oldKey, nil, nil, 1, hDel)
			}
			st.add(ct.topic, ct.schemas.Key, newKey, ct.schemas.EnvelopeSchema, st.env(ct, "c", nil, after, src, now, lsn), 2, hCreate)
			break
		}
		st.add(ct.topic, ct.schemas.Key, structOrNil(newKey), ct.schemas.EnvelopeSchema, st.env(ct, "u", before, after, src, now, lsn), 0, nil)
	case 'D':
		key, err := ct.schemas.KeyOf(before)
		if err != nil {
			return err
		}
		st.windowChange(ct, key)
		st.add(ct.topic, ct.schemas.Key, structOrNil(key), ct.schemas.EnvelopeSchema, st.env(ct, "d", before, nil, src, now, lsn), 0, nil)
		if t.s.tombstones { // even with a null key (no primary key), as Debezium
			st.add(ct.topic, ct.schemas.Key, structOrNil(key), nil, nil, 1, nil)
		}
	}
	if len(st.batch) >= t.s.maxBatch {
		return st.flushBatch(ctx)
	}
	return nil
}

// env builds a change event's value; with transaction metadata on it
// numbers the event in its transaction and emits the transaction's BEGIN
// before its first event.
func (st *streamer) env(ct *capturedTable, op string, before, after *connect.Struct, src SourceInfo, now time.Time, lsn uint64) *connect.Struct {
	if !st.t.s.txMetadata {
		return ct.schemas.Envelope(op, before, after, src, now)
	}
	id := strconv.FormatUint(uint64(st.xid), 10) + ":" + strconv.FormatUint(lsn, 10)
	if st.txEvents == 0 {
		v := connect.NewStructValue(txValueSchema).MustPut("status", "BEGIN").MustPut("id", id).MustPut("ts_ms", st.commitTime.UnixMilli())
		st.addMeta(id, v, -1)
	}
	st.txEvents++
	coll := ct.schema + "." + ct.name
	if st.txPer == nil {
		st.txPer = map[string]int64{}
	}
	if st.txPer[coll] == 0 {
		st.txTables = append(st.txTables, coll)
	}
	st.txPer[coll]++
	return ct.schemas.EnvelopeTx(op, before, after, src, now, &TxBlock{ID: id, TotalOrder: st.txEvents, DataCollectionOrder: st.txPer[coll]})
}

// txEnd emits the END event of a transaction that had data events.
func (st *streamer) txEnd(commitLSN uint64) {
	colls := make([]any, len(st.txTables))
	for i, c := range st.txTables {
		colls[i] = connect.NewStructValue(txCollectionSchema).MustPut("data_collection", c).MustPut("event_count", st.txPer[c])
	}
	id := strconv.FormatUint(uint64(st.xid), 10) + ":" + strconv.FormatUint(commitLSN, 10)
	v := connect.NewStructValue(txValueSchema).MustPut("status", "END").MustPut("id", id).
		MustPut("event_count", st.txEvents).MustPut("data_collections", colls).MustPut("ts_ms", st.commitTime.UnixMilli())
	st.addMeta(id, v, 4)
}

// addMeta queues a transaction metadata record; its offset sorts just
// before the transaction's next change record (seqDelta -1) or after its
// last (4).
func (st *streamer) addMeta(id string, v *connect.Struct, seqDelta int64) {
	off := offset{lsn: st.finalLSN, lsnCommit: st.finalLSN, seq: st.changeSeq*4 + seqDelta, txID: int64(st.xid), tsUsec: st.commitTime.UnixMicro(), incremental: st.incrementalJSON()}
	if off.lsnCommit == st.skip.lsnCommit && off.seq <= st.skip.seq {
		return
	}
	key := connect.NewStructValue(txKeySchema).MustPut("id", id)
	st.batch = append(st.batch, connect.NewSourceRecord(st.t.partition, off.toMap(), st.t.s.txTopic, txKeySchema, key, txValueSchema, v))
}

// txOffset is the offset function of the current transaction's change
// records (connect.Record.LazyOffset): within a transaction only
// event_seq differs, so records carry it as their OffsetArg and the
// runtime builds a map only for the offsets it commits — a map per
// change was several allocations each. The function is made again when
// the transaction (or the incremental snapshot's state) changes.
func (st *streamer) txOffset() connect.OffsetFunc {
	base := offset{lsn: st.finalLSN, lsnCommit: st.finalLSN, txID: int64(st.xid), tsUsec: st.commitTime.UnixMicro(), incremental: st.incrementalJSON()}
	if st.offsetFn == nil || st.offsetBase != base {
		st.offsetBase = base
		st.offsetFn = func(seq int64) map[string]any {
			o := base
			o.seq = seq
			return o.toMap()
		}
	}
	return st.offsetFn
}

// source is the source block of a change at lsn in the current
// transaction.
func (st *streamer) source(ct *capturedTable, lsn uint64) SourceInfo {
	txID := int64(st.xid)
	l := int64(lsn)
	return SourceInfo{
		Name: st.t.s.prefix, TsUs: st.commitTime.UnixMicro(), Snapshot: "false", DB: st.t.s.db,
		Sequence: st.seqPrefix + strconv.FormatUint(lsn, 10) + `"]`,
		Schema:   ct.schema, Table: ct.name, TxID: &txID, LSN: &l,
	}
}

// add appends a record of the current change; sub orders the records of
// one change (delete, tombstone, create) in its offsets.
func (st *streamer) add(topic string, ks *connect.Schema, key any, vs *connect.Schema, value any, sub int64, h connect.Headers) {
	seq := st.changeSeq*4 + sub
	if st.finalLSN == st.skip.lsnCommit && seq <= st.skip.seq {
		return // stored before the restart
	}
	r := connect.NewSourceRecord(st.t.partition, nil, topic, ks, key, vs, value)
	r.LazyOffset, r.OffsetArg = st.txOffset(), seq
	if value == nil {
		r.ValueSchema = nil
	}
	r.Headers = st.t.contextHeaders(h)
	st.batch = append(st.batch, r)
}

func (st *streamer) flushBatch(ctx context.Context) error {
	if len(st.batch) == 0 {
		return nil
	}
	err := st.t.queue.put(ctx, st.batch...)
	st.batch = st.batch[:0:0]
	if err != nil && ctx.Err() != nil {
		return nil
	}
	return err
}

// heartbeat emits a heartbeat record whose offset lets the slot advance
// to the idle position, and runs heartbeat.action.query.
func (st *streamer) heartbeat(ctx context.Context) error {
	t := st.t
	if err := st.flushBatch(ctx); err != nil {
		return err
	}
	if t.s.heartbeatAction != "" {
		if _, err := t.conn.Exec(ctx, t.s.heartbeatAction); err != nil {
			t.log.Warn("heartbeat.action.query failed", "err", err)
		}
	}
	now := time.Now()
	// No lsn_commit: a transaction committing at idleLSN must not be
	// taken for one already emitted.
	off := offset{lsn: st.idleLSN, tsUsec: now.UnixMicro(), incremental: st.incrementalJSON()}
	key := connect.NewStructValue(heartbeatKeySchema).MustPut("serverName", t.s.prefix)
	value := connect.NewStructValue(heartbeatValueSchema).MustPut("ts_ms", now.UnixMilli())
	r := connect.NewSourceRecord(t.partition, off.toMap(), t.s.heartbeatTopic, heartbeatKeySchema, key, heartbeatValueSchema, value)
	return t.queue.put(ctx, r)
}

var (
	txKeySchema = connect.NewStruct().Name("io.debezium.connector.common.TransactionMetadataKey").Version(1).
			Field("id", connect.NewSchema(connect.String).Build()).Build()
	txCollectionSchema = connect.NewStruct().Name("event.collection").Version(1).Optional().
				Field("data_collection", connect.NewSchema(connect.String).Build()).
				Field("event_count", connect.NewSchema(connect.Int64).Build()).Build()
	txValueSchema = connect.NewStruct().Name("io.debezium.connector.common.TransactionMetadataValue").Version(1).
			Field("status", connect.NewSchema(connect.String).Build()).
			Field("id", connect.NewSchema(connect.String).Build()).
			Field("event_count", connect.NewSchema(connect.Int64).Optional().Build()).
			Field("data_collections", connect.NewArray(txCollectionSchema).Optional().Build()).
			Field("ts_ms", connect.NewSchema(connect.Int64).Build()).Build()
	heartbeatKeySchema = connect.NewStruct().Name("io.debezium.connector.common.ServerNameKey").Version(1).
				Field("serverName", connect.NewSchema(connect.String).Build()).Build()
	heartbeatValueSchema = connect.NewStruct().Name("io.debezium.connector.common.Heartbeat").Version(1).
				Field("ts_ms", connect.NewSchema(connect.Int64).Build()).Build()
)
