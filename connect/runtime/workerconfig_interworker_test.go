package runtime

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestInterWorkerKeys(t *testing.T) {
	base := map[string]string{"bootstrap.servers": "b:9092", "group.id": "g", "config.storage.topic": "c",
		"offset.storage.topic": "o", "status.storage.topic": "s",
		"key.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter": "org.apache.kafka.connect.json.JsonConverter"}
	w, err := ParseWorkerConfig(base, Distributed)
	if err != nil {
		t.Fatal(err)
	}
	// Kafka's defaults.
	if w.InterWorkerKeyTTL != time.Hour || w.InterWorkerKeyGenerationAlgorithm != "HmacSHA256" || w.InterWorkerKeySize != 0 ||
		w.InterWorkerSignatureAlgorithm != "HmacSHA256" || !slices.Equal(w.InterWorkerVerificationAlgorithms, []string{"HmacSHA256"}) {
		t.Errorf("defaults: %v %q %d %q %q", w.InterWorkerKeyTTL, w.InterWorkerKeyGenerationAlgorithm, w.InterWorkerKeySize,
			w.InterWorkerSignatureAlgorithm, w.InterWorkerVerificationAlgorithms)
	}
	props := maps.Clone(base)
	maps.Copy(props, map[string]string{"inter.worker.key.ttl.ms": "60000", "inter.worker.key.generation.algorithm": "HmacSHA512",
		"inter.worker.key.size": "256", "inter.worker.signature.algorithm": "HmacSHA512",
		"inter.worker.verification.algorithms": "HmacSHA512, HmacSHA256"})
	w, err = ParseWorkerConfig(props, Distributed)
	if err != nil {
		t.Fatal(err)
	}
	if w.InterWorkerKeyTTL != time.Minute || w.InterWorkerKeyGenerationAlgorithm != "HmacSHA512" || w.InterWorkerKeySize != 256 ||
		w.InterWorkerSignatureAlgorithm != "HmacSHA512" || !slices.Equal(w.InterWorkerVerificationAlgorithms, []string{"HmacSHA512", "HmacSHA256"}) {
		t.Errorf("set: %+v", w)
	}
	for name, tc := range map[string]struct{ key, value, want string }{
		"unknown mac":            {"inter.worker.signature.algorithm", "HmacSHA3", "Signature algorithm must be one of"},
		"signature not verified": {"inter.worker.signature.algorithm", "HmacSHA1", "must be present in inter.worker.verification.algorithms"},
		"unknown keygen":         {"inter.worker.key.generation.algorithm", "AES", "Key generation algorithm must be one of"},
		"tiny key":               {"inter.worker.key.size", "8", "at least 128 bits"},
		"unknown verification":   {"inter.worker.verification.algorithms", "HmacSHA256,Nope", "Invalid value Nope"},
	} {
		props := maps.Clone(base)
		props[tc.key] = tc.value
		if _, err := ParseWorkerConfig(props, Distributed); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, tc.want)
		}
	}
}
