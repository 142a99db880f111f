package sink

import (
	"slices"
	"strings"
	"testing"
)

// Validate lists every bad field of a config, each with its own message,
// without contacting S3.
func TestValidateListsEveryBadField(t *testing.T) {
	props := map[string]string{
		"name": "bad", "connector.class": "s3-sink", "topics": "t",
		"s3.bucket.name": "b", "store.url": "http://127.0.0.1:1",
		"flush.size":                  "0",
		"format.class":                "io.confluent.connect.s3.format.csv.CsvFormat",
		"s3.part.size":                "1024",
		"schema.compatibility":        "SOMETIMES",
		"behavior.on.null.values":     "drop",
		"rotate.schedule.interval.ms": "60000",
		"partitioner.class":           "io.confluent.connect.storage.partitioner.NoSuchPartitioner",
	}
	values := (&Connector{}).Validate(props)
	bad := map[string]string{}
	for _, v := range values {
		if len(v.Errors) > 0 {
			bad[v.Name] = strings.Join(v.Errors, "; ")
		}
	}
	for _, key := range []string{"flush.size", "format.class", "s3.part.size", "schema.compatibility",
		"behavior.on.null.values", "timezone", "partitioner.class"} {
		if bad[key] == "" {
			t.Errorf("%s: no error reported; errors: %v", key, bad)
		}
	}
	if msg := bad["timezone"]; !strings.Contains(msg, "scheduled file rotation") {
		t.Errorf("timezone error %q does not say why", msg)
	}
	names := make([]string, 0, len(values))
	for _, v := range values {
		names = append(names, v.Name)
	}
	for _, key := range []string{"s3.bucket.name", "flush.size", "format.class", "partitioner.class", "topics.dir", "parquet.codec"} {
		if !slices.Contains(names, key) {
			t.Errorf("validate answer lacks %s", key)
		}
	}
}

// behavior.on.null.values=write needs the keys stored, as Confluent's
// validator says.
func TestTombstoneWritingNeedsKeys(t *testing.T) {
	props := map[string]string{"name": "x", "topics": "t", "s3.bucket.name": "b", "flush.size": "10",
		"format.class": "JsonFormat", "behavior.on.null.values": "write"}
	if _, err := parseSettings(props); err == nil || !strings.Contains(err.Error(), "Writing Kafka record keys to storage is mandatory") {
		t.Fatalf("err = %v", err)
	}
	props["store.kafka.keys"] = "true"
	if _, err := parseSettings(props); err != nil {
		t.Fatal(err)
	}
}

// A config valid key by key but whose bucket cannot be reached gets the
// reason on s3.bucket.name.
func TestValidateReachesTheBucket(t *testing.T) {
	props := map[string]string{"name": "x", "connector.class": "s3-sink", "topics": "t",
		"s3.bucket.name": "nowhere", "store.url": "http://127.0.0.1:1", "s3.part.retries": "0",
		"aws.access.key.id": "a", "aws.secret.access.key": "b",
		"flush.size": "10", "format.class": "JsonFormat"}
	for _, v := range (&Connector{}).Validate(props) {
		if v.Name == "s3.bucket.name" {
			if len(v.Errors) == 0 || !strings.Contains(v.Errors[0], "127.0.0.1:1") {
				t.Fatalf("s3.bucket.name errors %q: want the unreachable endpoint named", v.Errors)
			}
			return
		}
	}
	t.Fatal("no s3.bucket.name in the answer")
}
