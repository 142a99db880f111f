package heartbeat

import "github.com/fjordhq/fjord/connect/plugins"

func init() {
	plugins.Register(plugins.Plugin{
		Class:   ConnectorClass,
		Aliases: []string{"MirrorHeartbeatConnector", "MirrorHeartbeat", Alias},
		Kind:    plugins.Source,
		New:     func() any { return &Connector{} },
	})
}
