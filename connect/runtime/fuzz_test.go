package runtime

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fjordhq/fjord/connect/herder"
)

// FuzzValidateConnectorConfig validates arbitrary configs ("key=value"
// lines): never a panic, and a config without errors must parse, since
// the herders start what validated — except for KIP-158 topic creation
// settings, which Kafka's validate does not check either (the connector
// then fails when it starts).
func FuzzValidateConnectorConfig(f *testing.F) {
	f.Add("connector.class=GoldenSink\nname=v\ntopics=a,b\ntransforms=t\ntransforms.t.type=dev.fjord.golden.GoldenTransform\ntransforms.t.field=x")
	f.Add("connector.class=GoldenSource\nname=s\ntopic=t\ntopic.creation.default.partitions=1\ntopic.creation.default.replication.factor=1")
	f.Fuzz(func(t *testing.T, text string) {
		props := map[string]string{}
		for _, line := range strings.Split(text, "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				props[k] = v
			}
		}
		v, err := ValidateConnectorConfig(nil, props)
		if err != nil || v.ErrorCount > 0 {
			return
		}
		if _, err := json.Marshal(v.Infos()); err != nil {
			t.Fatalf("validation does not encode: %v", err)
		}
		if _, err := ParseConnectorConfig(props); err != nil && !strings.Contains(err.Error(), "topic.creation") {
			t.Fatalf("valid config %v does not parse: %v", props, err)
		}
	})
}

// FuzzParseSinkOffsets decodes KIP-875 request bodies for sinks.
func FuzzParseSinkOffsets(f *testing.F) {
	f.Add([]byte(`{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{"kafka_offset":5}}]}`))
	f.Add([]byte(`{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":"1"},"offset":null}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var o herder.ConnectorOffsets
		if dec.Decode(&o) != nil {
			return
		}
		parsed, err := parseSinkOffsets(&o)
		if err != nil {
			if herder.StatusOf(err) != 400 {
				t.Fatalf("error %v is not a 400", err)
			}
			return
		}
		if len(parsed) > len(o.Offsets) {
			t.Fatalf("%d offsets parsed from %d", len(parsed), len(o.Offsets))
		}
	})
}
