package cdc

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"time"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/plugins"
)

// Class names: Debezium's, which users paste, and Fjord's short alias.
const (
	ConnectorClass = "io.debezium.connector.postgresql.PostgresConnector"
	ShortName      = "postgres-cdc"
)

func init() {
	plugins.Register(plugins.Plugin{
		Class:   ConnectorClass,
		Aliases: []string{ShortName, "PostgresConnector", "Postgres"},
		Kind:    plugins.Source,
		New:     func() any { return &Connector{} },
	})
}

// Connector is the Postgres CDC source connector. It runs one task: a
// replication slot has a single reader.
type Connector struct {
	props map[string]string
}

var (
	_ connect.SourceConnector = (*Connector)(nil)
	_ connect.ConfigValidator = (*Connector)(nil)
	_ connect.Versioned       = (*Connector)(nil)
)

func (c *Connector) Config() *connect.ConfigDef { return connectorKeys }
func (c *Connector) Version() string            { return DebeziumVersion }

func (c *Connector) Start(ctx context.Context, props map[string]string) error {
	s, err := parseSettings(props)
	if err != nil {
		return fmt.Errorf("the PostgreSQL connector could not start because of an error in the configuration: %w", err)
	}
	c.props = maps.Clone(props)
	slog.Info("starting postgres-cdc connector", "connector", props["name"], "host", s.host, "db", s.db, "slot", s.slot, "publication", s.publication)
	return nil
}

// TaskConfigs returns one task whatever tasks.max says (Debezium does the
// same: one slot, one stream).
func (c *Connector) TaskConfigs(int) ([]map[string]string, error) {
	return []map[string]string{maps.Clone(c.props)}, nil
}

func (c *Connector) Stop() error { return nil }

func (c *Connector) NewTask() connect.SourceTask { return &Task{} }

// Validate checks every key, then (when the connection settings are
// valid) that the database is reachable with them, as Debezium's
// validate does, attaching the failure to the field to fix.
func (c *Connector) Validate(props map[string]string) []connect.ConfigValue {
	values := connectorKeys.Validate(props)
	byName := map[string]*connect.ConfigValue{}
	for i := range values {
		byName[values[i].Name] = &values[i]
	}
	for k, msg := range crossCheck(props) {
		if v := byName[k]; v != nil {
			v.Errors = append(v.Errors, msg)
		}
	}
	values = append(values, unknownKeys(props)...)
	for _, k := range []string{HostnameConfig, PortConfig, UserConfig, PasswordConfig, DBNameConfig, SSLModeConfig} {
		if v := byName[k]; v != nil && len(v.Errors) > 0 {
			return values
		}
	}
	s, err := parseSettings(props)
	if err != nil {
		return values
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	conn, err := s.connect(ctx)
	if err != nil {
		field := HostnameConfig
		if isAuthError(err) {
			field = PasswordConfig
		}
		byName[field].Errors = append(byName[field].Errors, "Error while validating connector config: "+err.Error())
		return values
	}
	defer conn.Close(context.Background())
	if err := checkServer(ctx, conn, s.user); err != nil {
		byName[UserConfig].Errors = append(byName[UserConfig].Errors, err.Error())
	}
	return values
}
