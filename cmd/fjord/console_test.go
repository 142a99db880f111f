package main

import (
	"testing"

	"github.com/fjordhq/fjord/connect/runtime"
)

// TestWorkerRegistryURL: the console on a worker uses the schema
// registry its converters are configured with.
func TestWorkerRegistryURL(t *testing.T) {
	base := map[string]string{"bootstrap.servers": "127.0.0.1:9092", "group.id": "g",
		"config.storage.topic": "c", "offset.storage.topic": "o", "status.storage.topic": "s",
		"key.converter":   "org.apache.kafka.connect.storage.StringConverter",
		"value.converter": "io.confluent.connect.avro.AvroConverter"}
	for _, tc := range []struct {
		extra map[string]string
		want  string
	}{
		{nil, ""},
		{map[string]string{"value.converter.schema.registry.url": "http://reg-1:8081/, http://reg-2:8081"}, "http://reg-1:8081"},
		{map[string]string{"key.converter.schema.registry.url": "http://keys:8081"}, "http://keys:8081"},
		{map[string]string{"key.converter.schema.registry.url": "http://keys:8081", "value.converter.schema.registry.url": "http://values:8081"}, "http://values:8081"},
	} {
		props := map[string]string{}
		for k, v := range base {
			props[k] = v
		}
		for k, v := range tc.extra {
			props[k] = v
		}
		wc, err := runtime.ParseWorkerConfig(props, runtime.Distributed)
		if err != nil {
			t.Fatal(err)
		}
		if got := workerRegistryURL(wc); got != tc.want {
			t.Errorf("%v: registry %q, want %q", tc.extra, got, tc.want)
		}
	}
}
