package source

import "github.com/fjordhq/fjord/connect/plugins"

func init() {
	plugins.Register(plugins.Plugin{
		Class:   ConnectorClass,
		Aliases: []string{"MirrorSourceConnector", Alias},
		Kind:    plugins.Source,
		New:     func() any { return &Connector{} },
	})
}
