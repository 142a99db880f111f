package storage

import (
	"crypto/md5"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// DefaultMaxBackoff caps the wait between retries: Confluent's cap is a
// day, which turns an outage into a task that looks hung; 20 s keeps
// retrying promptly once the store is back.
const DefaultMaxBackoff = 20 * time.Second

// DefaultConcurrency is how many parts of one multipart upload are in
// flight at once.
const DefaultConcurrency = 4

// Config is the parsed S3 transport configuration.
type Config struct {
	Bucket string
	Region string
	// Endpoint is store.url normalised (scheme included, no trailing
	// slash); "" means AWS S3.
	Endpoint  string
	PathStyle bool
	// Accelerate is s3.wan.mode (S3 Transfer Acceleration).
	Accelerate bool

	// AccessKeyID and SecretAccessKey, when both set, are static
	// credentials; otherwise the AWS default chain is used.
	AccessKeyID     string
	SecretAccessKey string
	// AssumeRole, when set, wraps the credentials above in an STS
	// AssumeRole session (Confluent's AwsAssumeRoleCredentialsProvider).
	AssumeRole *AssumeRole

	// PartSize is s3.part.size: objects at least this big go multipart.
	PartSize int64
	// Concurrency is how many parts of one upload are sent at once.
	Concurrency int
	// Retries is s3.part.retries: attempts = Retries+1.
	Retries int
	// RetryBackoff is the first retry's wait; MaxBackoff caps the waits.
	RetryBackoff time.Duration
	MaxBackoff   time.Duration

	// SSEAlgorithm is s3.ssea.name ("", AES256, aws:kms, aws:kms:dsse).
	SSEAlgorithm   string
	SSECustomerKey string // base64, SSE-C with SSEAlgorithm AES256
	SSEKMSKeyID    string
	CannedACL      string

	ExpectContinue bool
	ProxyURL       string
	ProxyUser      string
	ProxyPassword  string

	// Tagging settings, for the sink (Store.Tag does the request).
	ObjectTagging  bool
	ExtraTags      map[string]string
	FailOnTagError bool
}

// AssumeRole is the STS session the assume-role provider starts.
type AssumeRole struct {
	RoleARN     string
	SessionName string
	ExternalID  string
	Region      string // "" = s3.region
	// Endpoint overrides the STS endpoint (tests).
	Endpoint string
}

// ConfigFrom parses the S3 keys of props. Its error is a
// *connect.ConfigError listing every problem.
func ConfigFrom(props map[string]string) (Config, error) {
	c, err := keyDef().Parse(props)
	var problems []connect.ConfigProblem
	var ce *connect.ConfigError
	if errors.As(err, &ce) {
		problems = ce.Problems
	} else if err != nil {
		return Config{}, err
	}
	problems = append(problems, crossCheck(props)...)
	if len(problems) > 0 {
		return Config{}, &connect.ConfigError{Problems: problems}
	}
	cfg := Config{
		Bucket:          c.String(KeyBucket),
		Region:          strings.ToLower(c.String(KeyRegion)),
		PathStyle:       c.Bool(KeyPathStyle),
		Accelerate:      c.Bool(KeyWANMode),
		AccessKeyID:     c.String(KeyAccessKeyID),
		SecretAccessKey: c.Password(KeySecretAccessKey),
		PartSize:        int64(c.Int(KeyPartSize)),
		Concurrency:     DefaultConcurrency,
		Retries:         int(c.Int(KeyPartRetries)),
		RetryBackoff:    time.Duration(c.Long(KeyRetryBackoffMs)) * time.Millisecond,
		MaxBackoff:      DefaultMaxBackoff,
		SSEAlgorithm:    c.String(KeySSEAlgorithm),
		SSECustomerKey:  c.Password(KeySSECustomerKey),
		SSEKMSKeyID:     c.String(KeySSEKMSKeyID),
		CannedACL:       c.String(KeyCannedACL),
		ExpectContinue:  c.Bool(KeyExpectContinue),
		ProxyURL:        c.String(KeyProxyURL),
		ProxyUser:       c.String(KeyProxyUser),
		ProxyPassword:   c.Password(KeyProxyPassword),
		ObjectTagging:   c.Bool(KeyObjectTagging),
		FailOnTagError:  strings.EqualFold(c.String(KeyTaggingOnError), "fail"),
	}
	if s := c.String(KeyStoreURL); s != "" {
		cfg.Endpoint, _ = endpointURL(s) // validated by the key's validator
	}
	if pairs := c.List(KeyTaggingExtraPairs); len(pairs) > 0 {
		cfg.ExtraTags = map[string]string{}
		for _, p := range pairs {
			k, v, _ := strings.Cut(p, ":")
			cfg.ExtraTags[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	if c.String(KeyCredentialsClass) == AssumeRoleCredentialsClass {
		cfg.AssumeRole = &AssumeRole{
			RoleARN:     strings.TrimSpace(props[KeySTSRoleARN]),
			SessionName: strings.TrimSpace(props[KeySTSSessionName]),
			ExternalID:  strings.TrimSpace(props[KeySTSExternalID]),
			Region:      strings.TrimSpace(props[KeySTSRegion]),
		}
	}
	return cfg, nil
}

// sseCustomerKeyMD5 checks an SSE-C key (base64 of 32 bytes) and returns
// the base64 MD5 of the raw key that S3 wants beside it.
func sseCustomerKeyMD5(key string) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(key))
	if err != nil || len(raw) != 32 {
		return "", fmt.Errorf("%s must be a base64-encoded 256-bit (32-byte) key", KeySSECustomerKey)
	}
	sum := md5.Sum(raw)
	return base64.StdEncoding.EncodeToString(sum[:]), nil
}
