package sink

import "github.com/fjordhq/fjord/connect/plugins"

func init() {
	plugins.Register(plugins.Plugin{
		Class:   ConnectorClass,
		Aliases: []string{Alias, ConfluentConnectorClass, "S3SinkConnector", "S3Sink"},
		Kind:    plugins.Sink,
		New:     func() any { return &Connector{} },
	})
}
