package storage

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
)

func TestDefineDefaults(t *testing.T) {
	d := connect.NewConfigDef()
	Define(d)
	for name, want := range map[string]any{
		KeyRegion:           "us-west-2",
		KeyPathStyle:        true,
		KeyPartSize:         int32(25 << 20),
		KeyPartRetries:      int32(3),
		KeyRetryBackoffMs:   int64(200),
		KeyCredentialsClass: DefaultCredentialsClass,
		KeyExpectContinue:   true,
		KeyWANMode:          false,
		KeySSEAlgorithm:     "",
		KeyObjectTagging:    false,
	} {
		k := d.Key(name)
		if k == nil {
			t.Fatalf("%s not defined", name)
		}
		if k.Default != want {
			t.Errorf("%s default %v, want %v", name, k.Default, want)
		}
	}
	if !d.Key(KeyBucket).Required() {
		t.Error("s3.bucket.name must be required")
	}
	if d.Key(KeyStoreURL).Default != nil || d.Key(KeyCannedACL).Default != nil {
		t.Error("store.url and s3.acl.canned default to null, as Confluent's")
	}
	for _, name := range []string{KeySecretAccessKey, KeySSECustomerKey, KeyProxyPassword} {
		if d.Key(name).Type != connect.TypePassword {
			t.Errorf("%s is not a PASSWORD", name)
		}
	}
	for _, k := range d.Keys() {
		if k.Doc == "" || k.Group == "" {
			t.Errorf("%s has no doc or group", k.Name)
		}
	}
}

// A Confluent S3 sink configuration's transport keys are all accepted.
func TestConfluentConfigAccepted(t *testing.T) {
	props := map[string]string{
		"connector.class":              "io.confluent.connect.s3.S3SinkConnector",
		KeyBucket:                      "my-bucket",
		KeyRegion:                      "eu-west-1",
		KeyPartSize:                    "5242880",
		KeyCredentialsClass:            "com.amazonaws.auth.DefaultAWSCredentialsProviderChain",
		KeySSEAlgorithm:                "aws:kms",
		KeySSEKMSKeyID:                 "alias/s3",
		KeyCannedACL:                   "bucket-owner-full-control",
		KeyProxyURL:                    "http://user:pw@proxy:3128",
		KeyExpectContinue:              "false",
		KeyWANMode:                     "false",
		KeyObjectTagging:               "true",
		KeyTaggingExtraPairs:           "team:data,env:prod",
		KeyTaggingOnError:              "FAIL",
		KeySendDigest:                  "true",
		KeyElasticBuffer:               "true",
		KeyElasticBufferInit:           "65536",
		KeyPartRetries:                 "5",
		KeyRetryBackoffMs:              "100",
		"s3.compression.type":          "gzip",
		"flush.size":                   "1000",
		"storage.class":                "io.confluent.connect.s3.storage.S3Storage",
		"format.class":                 "io.confluent.connect.s3.format.json.JsonFormat",
		"s3.path.style.access.enabled": "false",
		"store.url":                    "s3.eu-west-1.amazonaws.com",
		"aws.access.key.id":            "AKIA",
		"aws.secret.access.key":        "secret",
	}
	if probs := Validate(props); len(probs) != 0 {
		t.Fatalf("Validate: %v", probs)
	}
	c, err := ConfigFrom(props)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Bucket: "my-bucket", Region: "eu-west-1", Endpoint: "https://s3.eu-west-1.amazonaws.com",
		PathStyle: false, AccessKeyID: "AKIA", SecretAccessKey: "secret", PartSize: 5 << 20,
		Concurrency: DefaultConcurrency, Retries: 5, RetryBackoff: 100 * time.Millisecond,
		MaxBackoff: DefaultMaxBackoff, SSEAlgorithm: "aws:kms", SSEKMSKeyID: "alias/s3",
		CannedACL: "bucket-owner-full-control", ExpectContinue: false, ProxyURL: "http://user:pw@proxy:3128",
		ObjectTagging: true, FailOnTagError: true}
	got := c
	got.ExtraTags = nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ConfigFrom:\n got %+v\nwant %+v", got, want)
	}
	if c.ExtraTags["team"] != "data" || c.ExtraTags["env"] != "prod" || len(c.ExtraTags) != 2 {
		t.Fatalf("extra tags %v", c.ExtraTags)
	}
}

func TestConfigFromDefaults(t *testing.T) {
	c, err := ConfigFrom(map[string]string{KeyBucket: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Region != "us-west-2" || c.Endpoint != "" || !c.PathStyle || c.PartSize != 25<<20 ||
		c.Retries != 3 || c.RetryBackoff != 200*time.Millisecond || c.AssumeRole != nil || !c.ExpectContinue {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestValidateMessages(t *testing.T) {
	for _, c := range []struct {
		name  string
		props map[string]string
		key   string
		want  string
	}{
		{"missing bucket", map[string]string{}, KeyBucket,
			`Missing required configuration "s3.bucket.name" which has no default value.`},
		{"empty bucket", map[string]string{KeyBucket: ""}, KeyBucket, "String must be non-empty"},
		{"small part", map[string]string{KeyBucket: "b", KeyPartSize: "1000"}, KeyPartSize,
			"Invalid value 1000 for configuration s3.part.size: Part size must be at least: 5242880 bytes (5MB)"},
		{"huge part", map[string]string{KeyBucket: "b", KeyPartSize: "3000000000"}, KeyPartSize,
			"Invalid value 3000000000 for configuration s3.part.size: Not a number of type INT"},
		{"negative retries", map[string]string{KeyBucket: "b", KeyPartRetries: "-1"}, KeyPartRetries,
			"Value must be at least 0"},
		{"bad sse", map[string]string{KeyBucket: "b", KeySSEAlgorithm: "rot13"}, KeySSEAlgorithm,
			"String must be one of: , AES256, aws:kms, aws:kms:dsse"},
		{"bad acl", map[string]string{KeyBucket: "b", KeyCannedACL: "everyone"}, KeyCannedACL,
			"Value must be one of: [private, public-read"},
		{"bad region", map[string]string{KeyBucket: "b", KeyRegion: "us west"}, KeyRegion,
			"Value must be a region name"},
		{"bad url", map[string]string{KeyBucket: "b", KeyStoreURL: "ftp://x"}, KeyStoreURL,
			"must be an http(s) URL"},
		{"bad proxy", map[string]string{KeyBucket: "b", KeyProxyURL: "proxy:3128"}, KeyProxyURL,
			"must be a proxy URL"},
		{"java provider", map[string]string{KeyBucket: "b", KeyCredentialsClass: "com.example.MyProvider"},
			KeyCredentialsClass, "Fjord supports " + DefaultCredentialsClass},
		{"key without secret", map[string]string{KeyBucket: "b", KeyAccessKeyID: "AKIA"}, KeySecretAccessKey,
			"aws.access.key.id is set but aws.secret.access.key is not"},
		{"secret without key", map[string]string{KeyBucket: "b", KeySecretAccessKey: "s"}, KeyAccessKeyID,
			"aws.secret.access.key is set but aws.access.key.id is not"},
		{"sse-c without AES256", map[string]string{KeyBucket: "b", KeySSECustomerKey: testSSECKey},
			KeySSECustomerKey, "needs s3.ssea.name=AES256"},
		{"short sse-c key", map[string]string{KeyBucket: "b", KeySSEAlgorithm: "AES256", KeySSECustomerKey: "c2hvcnQ="},
			KeySSECustomerKey, "base64-encoded 256-bit"},
		{"assume role without arn", map[string]string{KeyBucket: "b", KeyCredentialsClass: AssumeRoleCredentialsClass,
			KeySTSSessionName: "s"}, KeySTSRoleARN, "is required with"},
		{"bad tag pair", map[string]string{KeyBucket: "b", KeyTaggingExtraPairs: "novalue"}, KeyTaggingExtraPairs,
			"key:value"},
		{"bad tagging behavior", map[string]string{KeyBucket: "b", KeyTaggingOnError: "retry"}, KeyTaggingOnError,
			"String must be one of: ignore, fail"},
	} {
		t.Run(c.name, func(t *testing.T) {
			probs := Validate(c.props)
			if !strings.Contains(probs[c.key], c.want) {
				t.Fatalf("Validate()[%s] = %q, want it to contain %q (all: %v)", c.key, probs[c.key], c.want, probs)
			}
			_, err := ConfigFrom(c.props)
			var ce *connect.ConfigError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ConfigFrom error %v, want a ConfigError containing %q", err, c.want)
			}
		})
	}
}

func TestAssumeRoleConfig(t *testing.T) {
	c, err := ConfigFrom(map[string]string{KeyBucket: "b", KeyCredentialsClass: AssumeRoleCredentialsClass,
		KeySTSRoleARN: "arn:aws:iam::123:role/r", KeySTSSessionName: "fjord", KeySTSExternalID: "ext",
		KeySTSRegion: "eu-west-1"})
	if err != nil {
		t.Fatal(err)
	}
	want := AssumeRole{RoleARN: "arn:aws:iam::123:role/r", SessionName: "fjord", ExternalID: "ext", Region: "eu-west-1"}
	if c.AssumeRole == nil || *c.AssumeRole != want {
		t.Fatalf("assume role %+v, want %+v", c.AssumeRole, want)
	}
}

func TestEndpointURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:9000/":   "http://127.0.0.1:9000",
		"minio.example.com":        "https://minio.example.com",
		" https://s3.example.com ": "https://s3.example.com",
	} {
		if got, err := endpointURL(in); err != nil || got != want {
			t.Errorf("endpointURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"ftp://x", "http://", "://"} {
		if _, err := endpointURL(bad); err == nil {
			t.Errorf("endpointURL(%q) accepted", bad)
		}
	}
}

func TestLoopbackHTTP(t *testing.T) {
	for ep, want := range map[string]bool{
		"http://127.0.0.1:9000":    true,
		"http://127.1.2.3":         true,
		"http://localhost:9000":    true,
		"http://[::1]:9000":        true,
		"https://127.0.0.1:9000":   false, // TLS: the SDK's own unsigned+trailer path
		"http://10.0.0.5:9000":     false,
		"http://minio.internal:80": false,
		"":                         false,
	} {
		if got := loopbackHTTP(ep); got != want {
			t.Errorf("loopbackHTTP(%q) = %v, want %v", ep, got, want)
		}
	}
}
