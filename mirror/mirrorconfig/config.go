package mirrorconfig

import (
	"time"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/mirror/policy"
)

// Config is a parsed mirror connector configuration with the accessors
// of MirrorConnectorConfig.
type Config struct {
	*connect.Config
	policy policy.ReplicationPolicy
}

// Parse parses props against def (which must include Define's keys) and
// builds the replication policy from the original properties, as
// MirrorConnectorConfig's constructor does.
func Parse(def *connect.ConfigDef, props map[string]string) (*Config, error) {
	c, err := def.Parse(props)
	if err != nil {
		return nil, err
	}
	p, err := policy.New(props)
	if err != nil {
		return nil, err
	}
	return &Config{Config: c, policy: p}, nil
}

func (c *Config) Enabled() bool              { return c.Bool(Enabled) }
func (c *Config) SourceClusterAlias() string { return c.String(SourceClusterAlias) }
func (c *Config) TargetClusterAlias() string { return c.String(TargetClusterAlias) }
func (c *Config) AdminTimeout() time.Duration {
	return time.Duration(c.Long(AdminTimeoutMs)) * time.Millisecond
}
func (c *Config) ReplicationPolicy() policy.ReplicationPolicy { return c.policy }

// ConnectorName is the connector's name ("name"), "" when absent.
func (c *Config) ConnectorName() string { return c.Originals()["name"] }

// EntityLabel names the flow and connector in client ids and logs, as
// MM2's entityLabel: "<source>-><target>|<connector name>".
func (c *Config) EntityLabel() string { return entityLabel(c.Originals()) }

func entityLabel(props map[string]string) string {
	target, ok := props[TargetClusterAlias]
	if !ok {
		target = TargetClusterAliasDefault
	}
	return props[SourceClusterAlias] + "->" + target + "|" + props["name"]
}
