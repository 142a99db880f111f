package checkpoint

import "github.com/fjordhq/fjord/connect/plugins"

func init() {
	plugins.Register(plugins.Plugin{
		Class:   ConnectorClass,
		Aliases: []string{"MirrorCheckpointConnector", "MirrorCheckpoint", Alias},
		Kind:    plugins.Source,
		New:     func() any { return &Connector{} },
	})
}
