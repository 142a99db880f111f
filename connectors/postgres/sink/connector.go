package sink

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fjordhq/fjord/connect"
)

// Class names: Fjord's own and Confluent's, which configs pasted from
// Kafka Connect name.
const (
	ConnectorClass          = "io.fjord.connect.postgres.PostgresSinkConnector"
	ConfluentConnectorClass = "io.confluent.connect.jdbc.JdbcSinkConnector"
	Alias                   = "postgres-sink"
)

// Connector is the PostgreSQL sink connector (Confluent's
// JdbcSinkConnector with the PostgreSQL dialect).
type Connector struct {
	props map[string]string
}

var (
	_ connect.SinkConnector      = (*Connector)(nil)
	_ connect.ConfigValidator    = (*Connector)(nil)
	_ connect.SinkOffsetsAlterer = (*Connector)(nil)
)

func (c *Connector) Config() *connect.ConfigDef { return ConfigDef() }

func (c *Connector) Start(ctx context.Context, props map[string]string) error {
	s, err := parseSettings(props)
	if err != nil {
		return fmt.Errorf("postgres sink connector config: %w", err)
	}
	c.props = maps.Clone(props)
	slog.Info("starting postgres sink connector", "connector", s.name, "url", s.connectionURLShown)
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

// AlterOffsets accepts any offsets: the sink keeps none of its own.
func (c *Connector) AlterOffsets(map[string]string, map[connect.TopicPartition]*int64) (bool, error) {
	return true, nil
}

// validateTimeout bounds the connection check of Validate.
const validateTimeout = 10 * time.Second

// Validate checks every key, then the keys together, then (when all is
// well) that the database answers, as Confluent's
// JdbcSinkConnectorValidation does: its error goes on connection.url.
func (c *Connector) Validate(props map[string]string) []connect.ConfigValue {
	def := ConfigDef()
	values := def.Validate(props)
	byName := map[string]*connect.ConfigValue{}
	for i := range values {
		byName[values[i].Name] = &values[i]
	}
	bad := map[string]bool{}
	for _, v := range values {
		if len(v.Errors) > 0 {
			bad[v.Name] = true
		}
	}
	// The checks across keys run on the keys that parse (those in error
	// take their defaults); a check that reads a key in error says
	// nothing more.
	if cfg, _ := def.Parse(defaultsForBad(props, values)); cfg != nil {
	next:
		for _, p := range crossProblems(cfg) {
			for _, k := range p.involves {
				if bad[k] {
					continue next
				}
			}
			byName[p.Key].Errors = append(byName[p.Key].Errors, p.Message)
		}
	}
	for _, v := range values {
		if len(v.Errors) > 0 {
			return values // Confluent connects only when all else is well
		}
	}
	s, err := parseSettings(props)
	if err != nil {
		byName[ConnectionURLConfig].Errors = append(byName[ConnectionURLConfig].Errors, err.Error())
		return values
	}
	ctx, cancel := context.WithTimeout(context.Background(), validateTimeout)
	defer cancel()
	cc := s.conn.Copy()
	if cc.ConnectTimeout == 0 || cc.ConnectTimeout > validateTimeout {
		cc.ConnectTimeout = validateTimeout
	}
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err == nil {
		conn.Close(context.Background())
	} else {
		byName[ConnectionURLConfig].Errors = append(byName[ConnectionURLConfig].Errors,
			fmt.Sprintf("Could not connect to database. %s", err.Error()))
	}
	return values
}

// defaultsForBad replaces the values of keys in error by their defaults,
// so the other keys can still be checked together.
func defaultsForBad(props map[string]string, values []connect.ConfigValue) map[string]string {
	out := maps.Clone(props)
	for _, v := range values {
		if len(v.Errors) == 0 {
			continue
		}
		if v.Name == ConnectionURLConfig { // the one required key: any valid URL
			out[v.Name] = "jdbc:postgresql://localhost/placeholder"
			continue
		}
		delete(out, v.Name)
	}
	return out
}
