package all

import (
	"testing"

	"github.com/fjordhq/fjord/connect/plugins"
)

// The names users paste from Kafka Connect configs all resolve.
func TestEveryShippedPluginResolves(t *testing.T) {
	for _, name := range []string{
		"org.apache.kafka.connect.file.FileStreamSourceConnector",
		"org.apache.kafka.connect.file.FileStreamSinkConnector",
		"io.confluent.kafka.connect.datagen.DatagenConnector",
		"org.apache.kafka.connect.json.JsonConverter",
		"org.apache.kafka.connect.storage.StringConverter",
		"org.apache.kafka.connect.converters.ByteArrayConverter",
		"org.apache.kafka.connect.storage.SimpleHeaderConverter",
		"io.confluent.connect.avro.AvroConverter",
		"org.apache.kafka.connect.transforms.InsertField$Value",
		"org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
		"io.debezium.transforms.ExtractNewRecordState",
		"io.debezium.connector.postgresql.PostgresConnector",
		"io.confluent.connect.jdbc.JdbcSinkConnector",
		"io.confluent.connect.s3.S3SinkConnector",
		"io.confluent.connect.s3.source.S3SourceConnector",
		"org.apache.kafka.connect.mirror.MirrorSourceConnector",
		"org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
		"org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
	} {
		if _, ok := plugins.Lookup(name); !ok {
			t.Errorf("%s is not registered", name)
		}
	}
}
