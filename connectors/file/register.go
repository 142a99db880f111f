package file

import "github.com/fjordhq/fjord/connect/plugins"

func init() {
	plugins.Register(plugins.Plugin{
		Class:   SourceConnectorClass,
		Aliases: []string{"FileStreamSource", "FileStreamSourceConnector"},
		Kind:    plugins.Source,
		New:     func() any { return &SourceConnector{} },
	})
	plugins.Register(plugins.Plugin{
		Class:   SinkConnectorClass,
		Aliases: []string{"FileStreamSink", "FileStreamSinkConnector"},
		Kind:    plugins.Sink,
		New:     func() any { return &SinkConnector{} },
	})
}
