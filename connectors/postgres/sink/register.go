package sink

import "github.com/fjordhq/fjord/connect/plugins"

func init() {
	plugins.Register(plugins.Plugin{
		Class:   ConnectorClass,
		Aliases: []string{Alias, ConfluentConnectorClass, "JdbcSinkConnector", "PostgresSink", "PostgresSinkConnector"},
		Kind:    plugins.Sink,
		New:     func() any { return &Connector{} },
	})
}
