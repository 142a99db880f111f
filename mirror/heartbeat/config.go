package heartbeat

import (
	"time"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/mirror/mirrorconfig"
)

// Class names and keys (MirrorHeartbeatConfig).
const (
	ConnectorClass = "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector"
	Alias          = "mirror-heartbeat"

	EmitHeartbeatsEnabled            = "emit.heartbeats.enabled"
	EmitHeartbeatsIntervalSeconds    = "emit.heartbeats.interval.seconds"
	HeartbeatsTopicReplicationFactor = "heartbeats.topic.replication.factor"

	EmitHeartbeatsEnabledDefault                  = true
	EmitHeartbeatsIntervalSecondsDefault    int64 = 1
	HeartbeatsTopicReplicationFactorDefault int16 = 3
)

// ConfigDef is MirrorHeartbeatConfig's definition: the keys every mirror
// connector shares and the heartbeat ones, with Kafka's defaults.
func ConfigDef() *connect.ConfigDef {
	return mirrorconfig.NewConfigDef().
		Define(connect.ConfigKey{Name: EmitHeartbeatsEnabled, Type: connect.TypeBoolean, Default: EmitHeartbeatsEnabledDefault,
			Importance: connect.Low, Doc: "Whether to emit heartbeats to target cluster."}).
		Define(connect.ConfigKey{Name: EmitHeartbeatsIntervalSeconds, Type: connect.TypeLong, Default: EmitHeartbeatsIntervalSecondsDefault,
			Importance: connect.Low, Doc: "Frequency of heartbeats."}).
		Define(connect.ConfigKey{Name: HeartbeatsTopicReplicationFactor, Type: connect.TypeShort, Default: HeartbeatsTopicReplicationFactorDefault,
			Importance: connect.Low, Doc: "Replication factor for heartbeats topic."})
}

// settings is a parsed heartbeat connector or task config.
type settings struct {
	*mirrorconfig.Config
}

func parse(props map[string]string) (*settings, error) {
	c, err := mirrorconfig.Parse(ConfigDef(), props)
	if err != nil {
		return nil, err
	}
	return &settings{c}, nil
}

// interval is MirrorHeartbeatConfig.emitHeartbeatsInterval: negative when
// heartbeats are off.
func (s *settings) interval() time.Duration {
	if !s.Bool(EmitHeartbeatsEnabled) {
		return -1
	}
	return time.Duration(s.Long(EmitHeartbeatsIntervalSeconds)) * time.Second
}

func (s *settings) heartbeatsTopic() string { return s.ReplicationPolicy().HeartbeatsTopic() }

func (s *settings) replicationFactor() int16 { return s.Short(HeartbeatsTopicReplicationFactor) }
