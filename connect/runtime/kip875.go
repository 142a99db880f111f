package runtime

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/herder"
	"github.com/fjordhq/fjord/connect/storage"
)

// KIP-875: reading, altering and resetting a connector's offsets. The
// herder checks that the connector is STOPPED before altering.

// Sink offsets are shown with these keys.
const (
	kafkaTopicKey     = "kafka_topic"
	kafkaPartitionKey = "kafka_partition"
	kafkaOffsetKey    = "kafka_offset"
)

// ConnectorOffsets returns a connector's offsets: a source's from the
// offset store, a sink's from its consumer group.
func (w *Worker) ConnectorOffsets(ctx context.Context, name string, config map[string]string) (*herder.ConnectorOffsets, error) {
	// The sink's admin client may take credentials from variables.
	rc, err := w.resolveConnectorConfig("connector "+name, config)
	if err != nil {
		return nil, err
	}
	config = rc.props
	_, typ, err := LookupConnector(config["connector.class"])
	if err != nil {
		return nil, err
	}
	out := &herder.ConnectorOffsets{Offsets: []herder.ConnectorOffset{}}
	if typ == SourceType {
		all, err := w.offsets.All(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("Failed to retrieve offsets for source connector %s: %w", name, err)
		}
		for _, o := range all {
			out.Offsets = append(out.Offsets, herder.ConnectorOffset{Partition: o.Partition, Offset: o.Offset})
		}
		return out, nil
	}
	adm, err := w.sinkAdmin(config)
	if err != nil {
		return nil, err
	}
	defer adm.Close()
	resp, err := adm.FetchOffsets(ctx, sinkGroup(name, config))
	if err == nil {
		var e error
		resp.EachError(func(o kadm.OffsetResponse) { e = o.Err })
		err = e
	}
	if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
		return nil, &ConnectError{Msg: "Failed to retrieve consumer group offsets for sink connector " + name, Err: err}
	}
	for _, o := range resp.Sorted() {
		if o.Err != nil || o.At < 0 {
			continue
		}
		out.Offsets = append(out.Offsets, herder.ConnectorOffset{
			Partition: map[string]any{kafkaTopicKey: o.Topic, kafkaPartitionKey: int(o.Partition)},
			Offset:    map[string]any{kafkaOffsetKey: o.At},
		})
	}
	return out, nil
}

func sinkGroup(name string, config map[string]string) string {
	if g := strings.TrimSpace(config[ConsumerOverridePrefix+"group.id"]); g != "" {
		return g
	}
	return SinkGroupID(name)
}

// sinkAdmin is an admin client for a sink connector's cluster (its
// admin.override.* apply).
func (w *Worker) sinkAdmin(config map[string]string) (*kadm.Client, error) {
	props := w.cfg.ClientProps(AdminClient, nil, connect.WithPrefix(config, AdminOverridePrefix))
	opts, err := KafkaClientOpts(AdminClient, props, w.log)
	if err != nil {
		return nil, err
	}
	return newAdmin(opts)
}

// Messages Kafka answers after altering or resetting offsets.
const (
	alteredFramework = "The Connect framework-managed offsets for this connector have been altered successfully. However, if this connector manages offsets externally, they will need to be manually altered in the system that the connector uses."
	resetFramework   = "The Connect framework-managed offsets for this connector have been reset successfully. However, if this connector manages offsets externally, they will need to be manually reset in the system that the connector uses."
	alteredByPlugin  = "The offsets for this connector have been altered successfully"
	resetByPlugin    = "The offsets for this connector have been reset successfully"
)

func modifiedMessage(handled, reset bool) string {
	switch {
	case handled && reset:
		return resetByPlugin
	case handled:
		return alteredByPlugin
	case reset:
		return resetFramework
	}
	return alteredFramework
}

// ModifyConnectorOffsets alters (offsets non-nil) or resets (nil) a
// stopped connector's offsets.
func (w *Worker) ModifyConnectorOffsets(ctx context.Context, name string, config map[string]string, offsets *herder.ConnectorOffsets) (string, error) {
	rc, err := w.resolveConnectorConfig("connector "+name, config)
	if err != nil {
		return "", err
	}
	config = rc.props
	p, typ, err := LookupConnector(config["connector.class"])
	if err != nil {
		return "", err
	}
	if typ == SourceType {
		return w.modifySourceOffsets(ctx, name, config, p.New(), offsets)
	}
	return w.modifySinkOffsets(ctx, name, config, p.New(), offsets)
}

func badRequest(format string, args ...any) error {
	return herder.Errorf(http.StatusBadRequest, format, args...)
}

func (w *Worker) modifySourceOffsets(ctx context.Context, name string, config map[string]string, inst any, offsets *herder.ConnectorOffsets) (string, error) {
	reset := offsets == nil
	var write []connect.SourcePartitionOffset
	if reset {
		all, err := w.offsets.All(ctx, name)
		if err != nil {
			return "", &ConnectError{Msg: "Failed to modify offsets for source connector " + name, Err: err}
		}
		for _, o := range all {
			write = append(write, connect.SourcePartitionOffset{Partition: o.Partition})
		}
	} else {
		for _, o := range offsets.Offsets {
			if o.Partition == nil {
				return "", badRequest("Source partitions may not be null")
			}
			// Round-trip through JSON like Kafka's normalization, so the
			// connector and later readers see the same types.
			write = append(write, connect.SourcePartitionOffset{Partition: normalize(o.Partition), Offset: normalize(o.Offset)})
		}
	}
	handled := false
	if a, ok := inst.(connect.SourceOffsetsAlterer); ok {
		h, err := a.AlterOffsets(config, write)
		if err != nil {
			return "", &ConnectError{Msg: "Failed to modify offsets for connector " + name + " because it doesn't support external modification of offsets", Err: err}
		}
		handled = h
	}
	if len(write) > 0 {
		if err := w.offsets.Put(ctx, name, write); err != nil {
			return "", &ConnectError{Msg: "Failed to modify offsets for source connector " + name, Err: err}
		}
	}
	return modifiedMessage(handled, reset), nil
}

func normalize(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	b, err := storage.EncodeJSON(m)
	if err != nil {
		return m
	}
	v, err := storage.DecodeJSON(b)
	if err != nil {
		return m
	}
	out, _ := v.(map[string]any)
	return out
}

// parseSinkOffsets is Kafka's SinkUtils.parseSinkConnectorOffsets: both 10
// and "10" are accepted; a nil offset resets the partition.
func parseSinkOffsets(offsets *herder.ConnectorOffsets) (map[connect.TopicPartition]*int64, error) {
	out := map[connect.TopicPartition]*int64{}
	for _, o := range offsets.Offsets {
		pm := o.Partition
		if pm == nil {
			return nil, badRequest("The partition for a sink connector offset cannot be null or missing")
		}
		t, hasT := pm[kafkaTopicKey]
		p, hasP := pm[kafkaPartitionKey]
		if !hasT || !hasP {
			return nil, badRequest("The partition for a sink connector offset must contain the keys '%s' and '%s'", kafkaTopicKey, kafkaPartitionKey)
		}
		if t == nil {
			return nil, badRequest("Kafka topic names must be valid strings and may not be null")
		}
		if p == nil {
			return nil, badRequest("Kafka partitions must be valid numbers and may not be null")
		}
		part, err := strconv.ParseInt(javaString(p), 10, 32)
		if err != nil {
			return nil, badRequest("Failed to parse the following Kafka partition value in the provided offsets: '%s'. Partition values for sink connectors need to be integers.", javaString(p))
		}
		tp := connect.TopicPartition{Topic: javaString(t), Partition: int32(part)}
		if o.Offset == nil {
			out[tp] = nil
			continue
		}
		v, ok := o.Offset[kafkaOffsetKey]
		if !ok {
			return nil, badRequest("The offset for a sink connector should either be null or contain the key '%s'", kafkaOffsetKey)
		}
		n, err := strconv.ParseInt(javaString(v), 10, 64)
		if err != nil {
			return nil, badRequest("Failed to parse the following Kafka offset value in the provided offsets: '%s'. Offset values for sink connectors need to be integers.", javaString(v))
		}
		out[tp] = &n
	}
	return out, nil
}

// javaString is String.valueOf of a JSON value.
func javaString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		if x == float64(int64(x)) {
			return strconv.FormatInt(int64(x), 10)
		}
		return javaDouble(x)
	case nil:
		return "null"
	}
	return fmt.Sprint(v)
}

func (w *Worker) modifySinkOffsets(ctx context.Context, name string, config map[string]string, inst any, offsets *herder.ConnectorOffsets) (string, error) {
	reset := offsets == nil
	var parsed map[connect.TopicPartition]*int64
	if !reset {
		var err error
		if parsed, err = parseSinkOffsets(offsets); err != nil {
			return "", err
		}
	}
	handled := false
	if a, ok := inst.(connect.SinkOffsetsAlterer); ok {
		h, err := a.AlterOffsets(config, parsed)
		if err != nil {
			return "", &ConnectError{Msg: "Failed to modify offsets for connector " + name + " because it doesn't support external modification of offsets", Err: err}
		}
		handled = h
	}
	adm, err := w.sinkAdmin(config)
	if err != nil {
		return "", err
	}
	defer adm.Close()
	group := sinkGroup(name, config)
	// The tasks were just stopped; their consumers may take a moment to
	// leave the group, during which the group refuses offset changes.
	err = retryGroupBusy(ctx, func() error {
		if reset {
			resp, err := adm.DeleteGroup(ctx, group)
			if err == nil {
				err = resp.Err
			}
			if errors.Is(err, kerr.GroupIDNotFound) {
				return nil
			}
			return err
		}
		var commit kadm.Offsets
		var del kadm.TopicsSet
		for tp, o := range parsed {
			if o == nil {
				del.Add(tp.Topic, tp.Partition)
			} else {
				commit.AddOffset(tp.Topic, tp.Partition, *o, -1)
			}
		}
		if len(commit) > 0 {
			resp, err := adm.CommitOffsets(ctx, group, commit)
			if err != nil {
				return err
			}
			var e error
			resp.EachError(func(r kadm.OffsetResponse) { e = r.Err })
			if e != nil {
				return e
			}
		}
		if len(del) > 0 {
			resp, err := adm.DeleteOffsets(ctx, group, del)
			if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
				return err
			}
			if err == nil {
				if e := resp.Error(); e != nil && !errors.Is(e, kerr.GroupIDNotFound) {
					return e
				}
			}
		}
		return nil
	})
	if err != nil {
		if reset {
			return "", &ConnectError{Msg: "Failed to reset consumer group offsets for sink connector " + name, Err: err}
		}
		return "", &ConnectError{Msg: fmt.Sprintf("Failed to alter consumer group offsets for connector %s either because its tasks haven't stopped completely yet or the connector was resumed before the request to alter its offsets could be successfully completed. If the connector is in a stopped state, this operation can be safely retried. If it doesn't eventually succeed, the Connect cluster may need to be restarted to get rid of the zombie sink tasks.", name), Err: err}
	}
	return modifiedMessage(handled, reset), nil
}

// retryGroupBusy retries op for a few seconds while the group still has
// members (the stopped tasks' consumers leaving).
func retryGroupBusy(ctx context.Context, op func() error) error {
	var err error
	for i := 0; i < 50; i++ {
		err = op()
		if err == nil || !(errors.Is(err, kerr.UnknownMemberID) || errors.Is(err, kerr.NonEmptyGroup) ||
			errors.Is(err, kerr.RebalanceInProgress) || errors.Is(err, kerr.IllegalGeneration) || errors.Is(err, kerr.GroupSubscribedToTopic)) {
			return err
		}
		if !sleepCtx(ctx, 100*time.Millisecond) {
			return err
		}
	}
	return err
}
