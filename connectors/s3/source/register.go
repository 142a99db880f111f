package source

import "github.com/fjordhq/fjord/connect/plugins"

func init() {
	plugins.Register(plugins.Plugin{
		Class:   ConnectorClass,
		Aliases: []string{Alias, ConfluentConnectorClass, "S3SourceConnector", "S3Source"},
		Kind:    plugins.Source,
		New:     func() any { return &Connector{} },
	})
}
