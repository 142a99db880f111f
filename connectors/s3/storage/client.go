package storage

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

// Store is one bucket of an S3-compatible store, reached with the
// configured credentials, retries and encryption. It is safe for
// concurrent use.
type Store struct {
	cfg      Config
	client   *s3.Client
	uploader *manager.Uploader
	sseCKMD5 string // base64 MD5 of the SSE-C key, "" without SSE-C
	// pageSize limits list pages (0 = the server's 1000); tests shrink
	// it to exercise paging.
	pageSize int32
}

// New builds the S3 client for cfg. It makes no request (CheckBucket does).
func New(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Bucket == "" {
		return nil, fmt.Errorf("s3: %s is empty: name the bucket", KeyBucket)
	}
	if cfg.Region == "" {
		cfg.Region = DefaultRegion
	}
	if cfg.PartSize == 0 {
		cfg.PartSize = DefaultPartSize
	}
	if cfg.PartSize < MinPartSize {
		return nil, fmt.Errorf("s3: %s=%d is below S3's 5 MiB minimum part size", KeyPartSize, cfg.PartSize)
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	if cfg.Retries < 0 {
		cfg.Retries = 0
	}
	if cfg.Endpoint != "" {
		ep, err := endpointURL(cfg.Endpoint)
		if err != nil {
			return nil, fmt.Errorf("s3: %s=%q: %v", KeyStoreURL, cfg.Endpoint, err)
		}
		cfg.Endpoint = ep
	}
	s := &Store{cfg: cfg}
	if cfg.SSECustomerKey != "" {
		md5, err := sseCustomerKeyMD5(cfg.SSECustomerKey)
		if err != nil {
			return nil, fmt.Errorf("s3: %v", err)
		}
		s.sseCKMD5 = md5
	}
	httpClient, err := newHTTPClient(cfg)
	if err != nil {
		return nil, err
	}
	opts := []func(*awsconfig.LoadOptions) error{
		awsconfig.WithRegion(cfg.Region),
		awsconfig.WithHTTPClient(httpClient),
		awsconfig.WithRetryer(func() aws.Retryer { return newRetryer(cfg) }),
	}
	if cfg.AccessKeyID != "" && cfg.SecretAccessKey != "" {
		opts = append(opts, awsconfig.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, "")))
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("s3: load the AWS configuration (environment, ~/.aws files): %w", err)
	}
	if ar := cfg.AssumeRole; ar != nil {
		awsCfg.Credentials = assumeRoleCredentials(awsCfg, cfg.Region, ar)
	}
	s.client = s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		o.UsePathStyle = cfg.PathStyle
		o.UseAccelerate = cfg.Accelerate
		// Objects written without checksums (by older tools, or stores
		// that do not return them) are normal: do not log each read.
		o.DisableLogOutputChecksumValidationSkipped = true
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		if !cfg.ExpectContinue {
			o.ContinueHeaderThresholdBytes = -1
		}
		if loopbackHTTP(cfg.Endpoint) {
			o.APIOptions = append(o.APIOptions, unsignedPayload)
		}
	})
	s.uploader = manager.NewUploader(s.client, func(u *manager.Uploader) {
		u.PartSize = cfg.PartSize
		u.Concurrency = cfg.Concurrency
		u.LeavePartsOnError = false
	})
	return s, nil
}

// Client is the underlying S3 client (tests, tools).
func (s *Store) Client() *s3.Client { return s.client }

// Config is the configuration the store was built with.
func (s *Store) Config() Config { return s.cfg }

// Bucket is the store's bucket.
func (s *Store) Bucket() string { return s.cfg.Bucket }

// newRetryer retries every retryable failure (connection errors, 5xx,
// throttling codes such as SlowDown) s3.part.retries times with our
// backoff. The SDK's client-side retry quota is off: it is a token
// bucket shared by every request of the client that, during an outage
// longer than a few dozen failures, fails requests without trying them —
// a sink would then fail on the first request after the store is back.
func newRetryer(cfg Config) aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = cfg.Retries + 1
		o.MaxBackoff = cfg.MaxBackoff
		o.Backoff = backoff{base: cfg.RetryBackoff, max: cfg.MaxBackoff}
		o.RateLimiter = ratelimit.None
	})
}

// responseHeaderTimeout bounds the wait for a response once a request is
// sent, so a store that accepts connections but never answers is retried
// instead of hanging the task; it is long because completing a large
// multipart upload can take a while.
const responseHeaderTimeout = 2 * time.Minute

func newHTTPClient(cfg Config) (*awshttp.BuildableClient, error) {
	var proxy func(*http.Request) (*url.URL, error)
	if cfg.ProxyURL != "" {
		u, err := url.Parse(cfg.ProxyURL)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("s3: %s=%q is not a URL", KeyProxyURL, cfg.ProxyURL)
		}
		user, pass := "", ""
		if u.User != nil {
			user = u.User.Username()
			pass, _ = u.User.Password()
		}
		if cfg.ProxyUser != "" {
			user = cfg.ProxyUser
		}
		if cfg.ProxyPassword != "" {
			pass = cfg.ProxyPassword
		}
		switch {
		case user != "":
			u.User = url.UserPassword(user, pass)
		default:
			u.User = nil
		}
		proxy = http.ProxyURL(u)
	}
	return awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
		if proxy != nil {
			t.Proxy = proxy
		}
		// A sink uploads for many partitions at once, each with
		// Concurrency parts in flight: keep those connections warm.
		t.MaxIdleConnsPerHost = 64
		t.ResponseHeaderTimeout = responseHeaderTimeout
	}), nil
}

// assumeRoleCredentials is Confluent's assume-role provider: an STS
// session for the role, started with the static keys or the default chain
// (whatever awsCfg holds), refreshed before it expires.
func assumeRoleCredentials(awsCfg aws.Config, region string, ar *AssumeRole) aws.CredentialsProvider {
	stsClient := sts.NewFromConfig(awsCfg, func(o *sts.Options) {
		if ar.Region != "" {
			o.Region = ar.Region
		} else {
			o.Region = region
		}
		if ar.Endpoint != "" {
			o.BaseEndpoint = aws.String(ar.Endpoint)
		}
	})
	return aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(stsClient, ar.RoleARN,
		func(o *stscreds.AssumeRoleOptions) {
			o.RoleSessionName = ar.SessionName
			if ar.ExternalID != "" {
				o.ExternalID = aws.String(ar.ExternalID)
			}
		}))
}

// loopbackHTTP reports whether endpoint is plain HTTP to this machine.
func loopbackHTTP(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme != "http" {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// isCanceled reports whether err comes from ctx ending.
func isCanceled(ctx context.Context, err error) bool {
	return ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}
