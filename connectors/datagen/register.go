package datagen

import "github.com/fjordhq/fjord/connect/plugins"

func init() {
	plugins.Register(plugins.Plugin{
		Class:   ConnectorClass,
		Aliases: []string{"datagen", "Datagen", "DatagenConnector", ConfluentConnectorClass},
		Kind:    plugins.Source,
		New:     func() any { return &Connector{} },
	})
}
