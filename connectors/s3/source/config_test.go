package source

import (
	"strings"
	"testing"
)

// Validate reports every bad key at once: the source's own, the format
// classes, and the storage package's.
func TestValidateListsEveryBadKey(t *testing.T) {
	props := map[string]string{
		"mode":                  "GENERIC",
		"record.batch.max.size": "0",
		"s3.poll.interval.ms":   "soon",
		"topics.regex":          "(unclosed",
		"keys.format.class":     "io.example.CsvFormat",
		"restore.partitions":    "maybe",
		// format.class and s3.bucket.name missing
	}
	errs := map[string][]string{}
	for _, cv := range (&Connector{}).Validate(props) {
		if len(cv.Errors) > 0 {
			errs[cv.Name] = cv.Errors
		}
	}
	for _, key := range []string{"mode", "record.batch.max.size", "s3.poll.interval.ms", "topics.regex",
		"keys.format.class", "restore.partitions", "format.class", "s3.bucket.name"} {
		if len(errs[key]) == 0 {
			t.Errorf("%s: no error (errors: %v)", key, errs)
		}
		for i, e := range errs[key] {
			for _, f := range errs[key][:i] {
				if e == f {
					t.Errorf("%s: error %q reported twice", key, e)
				}
			}
		}
	}
	if !strings.Contains(strings.Join(errs["mode"], " "), "GENERIC is not implemented") {
		t.Errorf("mode GENERIC: %v, want it named as not implemented", errs["mode"])
	}
	if len(errs) != 8 {
		t.Errorf("errors on %d keys, want 8: %v", len(errs), errs)
	}
}

// A sink config with the class changed is a valid source config.
func TestValidateAcceptsSinkConfig(t *testing.T) {
	props := map[string]string{
		"s3.bucket.name": "backups", "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
		"flush.size": "1000", "topics.dir": "kafka", "store.kafka.keys": "true",
		"partitioner.class": "io.confluent.connect.storage.partitioner.DefaultPartitioner",
	}
	for _, cv := range (&Connector{}).Validate(props) {
		if len(cv.Errors) > 0 {
			t.Errorf("%s: %v", cv.Name, cv.Errors)
		}
	}
	s, err := parseSettings(props)
	if err != nil {
		t.Fatal(err)
	}
	if s.batchSize != DefaultBatchMaxSize || s.pollInterval != DefaultPollInterval || !s.restorePartitions ||
		s.value.Extension() != ".json" || s.layout.TopicPrefix("t") != "kafka/t/" {
		t.Fatalf("settings %+v", s)
	}
}
