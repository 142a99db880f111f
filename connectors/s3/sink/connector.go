// Package sink is the S3 sink connector: a drop-in for Confluent's
// io.confluent.connect.s3.S3SinkConnector — its config keys, partitioners,
// formats and object keys — that commits each Kafka partition's files as
// one unit and finds, after a crash, which commits reached the bucket, so
// every record lands in exactly one object.
package sink

import (
	"context"
	"fmt"
	"log/slog"
	"maps"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connectors/s3/storage"
)

// Class names: Fjord's and Confluent's, which configs pasted from Kafka
// Connect name.
const (
	ConnectorClass          = "io.fjord.connect.s3.S3SinkConnector"
	ConfluentConnectorClass = "io.confluent.connect.s3.S3SinkConnector"
	Alias                   = "s3-sink"
)

// Connector is the S3 sink connector.
type Connector struct {
	props map[string]string
}

var (
	_ connect.SinkConnector   = (*Connector)(nil)
	_ connect.ConfigValidator = (*Connector)(nil)
)

func (c *Connector) Config() *connect.ConfigDef { return ConfigDef() }

func (c *Connector) Start(ctx context.Context, props map[string]string) error {
	s, err := parseSettings(props)
	if err != nil {
		return fmt.Errorf("S3 sink connector config: %w", err)
	}
	c.props = maps.Clone(props)
	slog.Info("starting S3 sink connector", "connector", s.name, "bucket", s.store.Bucket, "endpoint", s.store.Endpoint)
	return nil
}

// TaskConfigs gives every task the connector's config: they share the
// topics' partitions through the consumer group.
func (c *Connector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	out := make([]map[string]string, maxTasks)
	for i := range out {
		out[i] = maps.Clone(c.props)
	}
	return out, nil
}

func (c *Connector) Stop() error { return nil }

func (c *Connector) NewTask() connect.SinkTask { return &Task{} }

func (c *Connector) Version() string { return "fjord" }

// Validate checks every key, then the keys together, and when all is
// well that the bucket is reachable with the credentials given.
func (c *Connector) Validate(props map[string]string) []connect.ConfigValue {
	def := ConfigDef()
	values := def.Validate(props)
	byName := map[string]*connect.ConfigValue{}
	for i := range values {
		byName[values[i].Name] = &values[i]
	}
	for key, msg := range crossProblems(props) {
		if v := byName[key]; v != nil && len(v.Errors) == 0 {
			v.Errors = append(v.Errors, msg)
		}
	}
	for _, v := range values {
		if len(v.Errors) > 0 {
			return values
		}
	}
	sc, err := storage.ConfigFrom(props)
	if err == nil {
		var st *storage.Store
		if st, err = storage.New(context.Background(), sc); err == nil {
			err = st.CheckBucket(context.Background())
		}
	}
	if err != nil {
		byName[storage.KeyBucket].Errors = append(byName[storage.KeyBucket].Errors, err.Error())
	}
	return values
}
