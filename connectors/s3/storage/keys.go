package storage

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/fjordhq/fjord/connect"
)

// The S3 transport keys, named as Confluent's S3 sink names them so a
// pasted Confluent configuration means the same thing here.
const (
	KeyBucket             = "s3.bucket.name"
	KeyRegion             = "s3.region"
	KeyStoreURL           = "store.url"
	KeyPathStyle          = "s3.path.style.access.enabled"
	KeyAccessKeyID        = "aws.access.key.id"
	KeySecretAccessKey    = "aws.secret.access.key"
	KeyCredentialsClass   = "s3.credentials.provider.class"
	KeyPartSize           = "s3.part.size"
	KeyPartRetries        = "s3.part.retries"
	KeyRetryBackoffMs     = "s3.retry.backoff.ms"
	KeySSEAlgorithm       = "s3.ssea.name"
	KeySSECustomerKey     = "s3.sse.customer.key"
	KeySSEKMSKeyID        = "s3.sse.kms.key.id"
	KeyCannedACL          = "s3.acl.canned"
	KeyExpectContinue     = "s3.http.send.expect.continue"
	KeyProxyURL           = "s3.proxy.url"
	KeyProxyUser          = "s3.proxy.user"
	KeyProxyPassword      = "s3.proxy.password"
	KeyWANMode            = "s3.wan.mode"
	KeyObjectTagging      = "s3.object.tagging"
	KeyTaggingExtraPairs  = "s3.object.tagging.key.value.pairs"
	KeyTaggingOnError     = "s3.object.behavior.on.tagging.error"
	KeySendDigest         = "s3.send.digest"
	KeyElasticBuffer      = "s3.elastic.buffer.enable"
	KeyElasticBufferInit  = "s3.elastic.buffer.init.capacity"
	credentialsPropPrefix = "s3.credentials.provider."
)

// The assume-role provider's settings, read (as Confluent does) from the
// properties under s3.credentials.provider.
const (
	KeySTSRoleARN     = credentialsPropPrefix + "sts.role.arn"
	KeySTSSessionName = credentialsPropPrefix + "sts.role.session.name"
	KeySTSExternalID  = credentialsPropPrefix + "sts.role.external.id"
	KeySTSRegion      = credentialsPropPrefix + "sts.region"
)

// Defaults, as Confluent's.
const (
	DefaultRegion       = "us-west-2"
	DefaultPartSize     = 25 << 20
	MinPartSize         = 5 << 20 // S3's smallest part but the last
	DefaultPartRetries  = 3
	DefaultRetryBackoff = 200 // ms
)

// The credentials provider classes Fjord understands: the AWS SDK's
// default chain (Java SDK v2 and v1 names, both seen in pasted configs) and
// Confluent's assume-role provider.
const (
	DefaultCredentialsClass    = "software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider"
	DefaultCredentialsClassV1  = "com.amazonaws.auth.DefaultAWSCredentialsProviderChain"
	AssumeRoleCredentialsClass = "io.confluent.connect.s3.auth.AwsAssumeRoleCredentialsProvider"
)

// sseAlgorithms are the values s3.ssea.name takes ("" = none).
var sseAlgorithms = []string{"", "AES256", "aws:kms", "aws:kms:dsse"}

// cannedACLs are S3's canned ACLs (s3.acl.canned).
var cannedACLs = []string{"private", "public-read", "public-read-write", "authenticated-read",
	"aws-exec-read", "bucket-owner-read", "bucket-owner-full-control"}

// awsRegions are the recommended values of s3.region; any well-formed
// region name is accepted (new regions, S3-compatible stores).
var awsRegions = []string{"us-east-1", "us-east-2", "us-west-1", "us-west-2", "af-south-1",
	"ap-east-1", "ap-south-1", "ap-south-2", "ap-southeast-1", "ap-southeast-2", "ap-southeast-3",
	"ap-southeast-4", "ap-northeast-1", "ap-northeast-2", "ap-northeast-3", "ca-central-1",
	"ca-west-1", "eu-central-1", "eu-central-2", "eu-west-1", "eu-west-2", "eu-west-3",
	"eu-south-1", "eu-south-2", "eu-north-1", "il-central-1", "me-south-1", "me-central-1",
	"sa-east-1", "us-gov-east-1", "us-gov-west-1", "cn-north-1", "cn-northwest-1"}

var regionPattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

const groupS3 = "S3"

// Define adds the S3 transport keys to d: the connectors call it from
// their Config() so the validate endpoint and docs list them.
func Define(d *connect.ConfigDef) {
	order := 0
	def := func(k connect.ConfigKey) {
		order++
		if k.Group == "" {
			k.Group, k.OrderInGroup = groupS3, order
		}
		if k.Width == connect.WidthNone {
			k.Width = connect.WidthLong
		}
		d.Define(k)
	}
	def(connect.ConfigKey{Name: KeyBucket, Type: connect.TypeString, Default: connect.NoDefault,
		Validator: connect.NonEmptyString, Importance: connect.High, DisplayName: "S3 Bucket",
		Doc: "The S3 bucket the connector writes to (sink) or reads from (source)."})
	def(connect.ConfigKey{Name: KeyRegion, Type: connect.TypeString, Default: DefaultRegion,
		Validator: validRegion, Importance: connect.Medium, DisplayName: "AWS region",
		Recommended: func(map[string]any) []any { return strs(awsRegions) },
		Doc: "The AWS region of the bucket; requests are signed for it. S3-compatible stores " +
			"(store.url) usually want us-east-1."})
	def(connect.ConfigKey{Name: KeyStoreURL, Type: connect.TypeString, Default: nil,
		Validator: validStoreURL, Importance: connect.High, DisplayName: "Store URL",
		Doc: "The S3 endpoint URL, for S3-compatible stores such as MinIO " +
			"(e.g. http://minio:9000); https:// is assumed without a scheme. Empty or unset " +
			"means AWS S3 in s3.region."})
	def(connect.ConfigKey{Name: KeyPathStyle, Type: connect.TypeBoolean, Default: true,
		Importance: connect.Low, Width: connect.WidthShort, DisplayName: "Enable Path Style Access to S3",
		Doc: "Address the bucket in the URL path (http://host/bucket/key) instead of the host name " +
			"(http://bucket.host/key). Most S3-compatible stores need path style."})
	def(connect.ConfigKey{Name: KeyPartSize, Type: connect.TypeInt, Default: int32(DefaultPartSize),
		Validator: validPartSize, Importance: connect.High, DisplayName: "S3 Part Size",
		Doc: "Objects of at least this many bytes are uploaded as multipart uploads with parts of " +
			"this size (at least 5 MiB, S3's minimum); smaller objects are uploaded in one request."})
	def(connect.ConfigKey{Name: KeyCredentialsClass, Type: connect.TypeClass, Default: DefaultCredentialsClass,
		Validator: validCredentialsClass, Importance: connect.Low, DisplayName: "AWS Credentials Provider Class",
		Recommended: func(map[string]any) []any {
			return []any{DefaultCredentialsClass, DefaultCredentialsClassV1, AssumeRoleCredentialsClass}
		},
		Doc: "How the connector gets AWS credentials. " + DefaultCredentialsClass + " (or the SDK v1 name " +
			DefaultCredentialsClassV1 + ") is the AWS default chain: environment, shared config and " +
			"credentials files, web identity, container and instance roles; aws.access.key.id and " +
			"aws.secret.access.key win over it when set. " + AssumeRoleCredentialsClass + " assumes the " +
			"role in " + KeySTSRoleARN + " (with " + KeySTSSessionName + ", optional " + KeySTSExternalID +
			" and " + KeySTSRegion + ") using the static keys or the default chain. Other classes are " +
			"Java code Fjord cannot run."})
	def(connect.ConfigKey{Name: KeyAccessKeyID, Type: connect.TypeString, Default: "",
		Importance: connect.High, DisplayName: "AWS Access Key ID",
		Doc: "A static access key ID; with aws.secret.access.key it replaces the AWS default credentials chain."})
	def(connect.ConfigKey{Name: KeySecretAccessKey, Type: connect.TypePassword, Default: nil,
		Importance: connect.High, DisplayName: "AWS Secret Access Key",
		Doc: "The secret access key that goes with aws.access.key.id."})
	def(connect.ConfigKey{Name: KeySSEAlgorithm, Type: connect.TypeString, Default: "",
		Validator: connect.OneOf(sseAlgorithms...), Importance: connect.Low,
		DisplayName: "S3 Server Side Encryption Algorithm",
		Recommended: func(map[string]any) []any { return strs(sseAlgorithms[1:]) },
		Doc: "Server-side encryption of written objects: AES256 (S3-managed keys, or SSE-C with " +
			"s3.sse.customer.key), aws:kms or aws:kms:dsse (with s3.sse.kms.key.id; as in Confluent's " +
			"sink no encryption is requested when the key ID is empty). Empty: the bucket's default."})
	def(connect.ConfigKey{Name: KeySSECustomerKey, Type: connect.TypePassword, Default: nil,
		Importance: connect.Low, DisplayName: "S3 Server Side Encryption Customer-Provided Key (SSE-C)",
		Doc: "A base64-encoded 256-bit key for SSE-C (needs s3.ssea.name=AES256); the connector " +
			"sends it with every write and read."})
	def(connect.ConfigKey{Name: KeySSEKMSKeyID, Type: connect.TypeString, Default: "",
		Importance: connect.Low, DisplayName: "S3 Server Side Encryption Key",
		Visible: func(p map[string]any) bool {
			s, _ := p[KeySSEAlgorithm].(string)
			return strings.HasPrefix(strings.ToLower(s), "aws:kms")
		},
		Doc: "The AWS KMS key (ID, ARN or alias) for s3.ssea.name=aws:kms or aws:kms:dsse."})
	def(connect.ConfigKey{Name: KeyCannedACL, Type: connect.TypeString, Default: nil,
		Validator: validCannedACL, Importance: connect.Low, DisplayName: "S3 Canned ACL",
		Recommended: func(map[string]any) []any { return strs(cannedACLs) },
		Doc:         "A canned ACL set on every written object (e.g. bucket-owner-full-control). Unset: none."})
	def(connect.ConfigKey{Name: KeyWANMode, Type: connect.TypeBoolean, Default: false,
		Importance: connect.Medium, DisplayName: "S3 accelerated endpoint enabled",
		Doc: "Use S3 Transfer Acceleration endpoints (the bucket must have it enabled; AWS only)."})
	def(connect.ConfigKey{Name: KeyPartRetries, Type: connect.TypeInt, Default: int32(DefaultPartRetries),
		Validator: connect.AtLeast(0), Importance: connect.Medium, DisplayName: "S3 Part Upload Retries",
		Doc: "How many times a failed S3 request (a connection error, a 5xx, throttling such as " +
			"503 SlowDown) is retried before the operation fails; 0 = no retries. Each part of a " +
			"multipart upload is retried on its own."})
	def(connect.ConfigKey{Name: KeyRetryBackoffMs, Type: connect.TypeLong, Default: int64(DefaultRetryBackoff),
		Validator: connect.AtLeast(0), Importance: connect.Low, Width: connect.WidthShort,
		DisplayName: "Retry Backoff (ms)",
		Doc: "The wait before the first retry of a failed S3 request; each further retry waits up to " +
			"twice as long (with random jitter, at most 20 s)."})
	def(connect.ConfigKey{Name: KeyProxyURL, Type: connect.TypeString, Default: "",
		Validator: validProxyURL, Importance: connect.Low, DisplayName: "S3 Proxy Settings",
		Doc: "An HTTP(S) proxy for S3 requests, as a URL (http://[user:password@]host:port). " +
			"Empty: the HTTPS_PROXY/HTTP_PROXY/NO_PROXY environment decides."})
	def(connect.ConfigKey{Name: KeyProxyUser, Type: connect.TypeString, Default: nil,
		Importance: connect.Low, DisplayName: "S3 Proxy User",
		Doc: "The proxy user name (wins over a user in s3.proxy.url, and stays out of logs)."})
	def(connect.ConfigKey{Name: KeyProxyPassword, Type: connect.TypePassword, Default: nil,
		Importance: connect.Low, DisplayName: "S3 Proxy Password",
		Doc: "The proxy password (wins over a password in s3.proxy.url)."})
	def(connect.ConfigKey{Name: KeyExpectContinue, Type: connect.TypeBoolean, Default: true,
		Importance: connect.Low, Width: connect.WidthShort, DisplayName: "S3 HTTP Send Uses Expect Continue",
		Doc: "Send 'Expect: 100-continue' with large uploads so a refusing server answers before the " +
			"body is sent; false sends bodies right away."})
	def(connect.ConfigKey{Name: KeyObjectTagging, Type: connect.TypeBoolean, Default: false,
		Importance: connect.Low, DisplayName: "S3 Object Tagging",
		Doc: "Tag written objects with their first and last offsets and record count."})
	def(connect.ConfigKey{Name: KeyTaggingExtraPairs, Type: connect.TypeList, Default: []string{},
		Validator: validTagPairs, Importance: connect.Low,
		DisplayName: "S3 Object Tagging Extra Key Value pairs",
		Doc:         "More tags for written objects, as key:value items (with s3.object.tagging=true)."})
	def(connect.ConfigKey{Name: KeyTaggingOnError, Type: connect.TypeString, Default: "ignore",
		Validator: oneOfLower("ignore", "fail"), Importance: connect.Low, Width: connect.WidthShort,
		DisplayName: "Behavior for S3 object tagging error",
		Doc:         "What a failed tagging request does: ignore (log it) or fail (the task fails)."})
	def(connect.ConfigKey{Name: KeySendDigest, Type: connect.TypeBoolean, Default: false,
		Importance: connect.Low, Width: connect.WidthShort, DisplayName: "S3 Send Upload Message Digest",
		Doc: "Accepted for compatibility and ignored: every upload already carries a CRC32 " +
			"checksum that S3 verifies, which replaces the MD5 digest."})
	def(connect.ConfigKey{Name: KeyElasticBuffer, Type: connect.TypeBoolean, Default: false,
		Importance: connect.Low, DisplayName: "Enable elastic buffer to staging s3-part",
		Doc: "Accepted for compatibility and ignored: Fjord does not stage parts in a fixed " +
			"part-sized buffer, so there is nothing to make elastic."})
	def(connect.ConfigKey{Name: KeyElasticBufferInit, Type: connect.TypeInt, Default: int32(128 << 10),
		Validator: connect.AtLeast(4096), Importance: connect.Low,
		DisplayName: "Elastic buffer initial capacity",
		Doc:         "Accepted for compatibility and ignored (see s3.elastic.buffer.enable)."})
}

// keyDef is a ConfigDef holding only this package's keys.
func keyDef() *connect.ConfigDef {
	d := connect.NewConfigDef()
	Define(d)
	return d
}

// Validate checks the S3 keys in props: each key's own value, then the
// combinations (credentials, encryption, assume role). The result maps a
// key to its message; it is empty when the keys are fine.
func Validate(props map[string]string) map[string]string {
	out := map[string]string{}
	for _, cv := range keyDef().Validate(props) {
		if len(cv.Errors) > 0 {
			out[cv.Name] = cv.Errors[0]
		}
	}
	for _, p := range crossCheck(props) {
		if _, ok := out[p.Key]; !ok {
			out[p.Key] = p.Message
		}
	}
	return out
}

// crossCheck finds the problems no single key shows.
func crossCheck(props map[string]string) []connect.ConfigProblem {
	var ps []connect.ConfigProblem
	add := func(k, msg string) { ps = append(ps, connect.ConfigProblem{Key: k, Message: msg}) }
	id := strings.TrimSpace(props[KeyAccessKeyID])
	secret := props[KeySecretAccessKey]
	switch {
	case id != "" && secret == "":
		add(KeySecretAccessKey, KeyAccessKeyID+" is set but "+KeySecretAccessKey+
			" is not: set both, or neither to use the AWS default credentials chain")
	case id == "" && secret != "":
		add(KeyAccessKeyID, KeySecretAccessKey+" is set but "+KeyAccessKeyID+
			" is not: set both, or neither to use the AWS default credentials chain")
	}
	if ck := props[KeySSECustomerKey]; ck != "" {
		if !strings.EqualFold(strings.TrimSpace(props[KeySSEAlgorithm]), "AES256") {
			add(KeySSECustomerKey, KeySSECustomerKey+" needs "+KeySSEAlgorithm+
				"=AES256 (SSE-C); without it objects would be written without the customer key")
		} else if _, err := sseCustomerKeyMD5(ck); err != nil {
			add(KeySSECustomerKey, err.Error())
		}
	}
	if strings.TrimSpace(props[KeyCredentialsClass]) == AssumeRoleCredentialsClass {
		for _, k := range []string{KeySTSRoleARN, KeySTSSessionName} {
			if strings.TrimSpace(props[k]) == "" {
				add(k, k+" is required with "+KeyCredentialsClass+"="+AssumeRoleCredentialsClass)
			}
		}
	}
	return ps
}

func strs(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func validRegion(_ string, v any) error {
	s := strings.ToLower(strings.TrimSpace(v.(string)))
	if !regionPattern.MatchString(s) {
		return errors.New("Value must be a region name such as " + DefaultRegion)
	}
	return nil
}

// validPartSize is Confluent's range check, with its messages.
func validPartSize(_ string, v any) error {
	n, _ := v.(int32)
	if n < MinPartSize {
		return fmt.Errorf("Part size must be at least: %d bytes (5MB)", MinPartSize)
	}
	return nil
}

func validCredentialsClass(_ string, v any) error {
	switch strings.TrimSpace(v.(string)) {
	case DefaultCredentialsClass, DefaultCredentialsClassV1, AssumeRoleCredentialsClass:
		return nil
	}
	return fmt.Errorf("Fjord supports %s (or %s), the AWS default chain, and %s",
		DefaultCredentialsClass, DefaultCredentialsClassV1, AssumeRoleCredentialsClass)
}

func validCannedACL(_ string, v any) error {
	s, _ := v.(string)
	for _, a := range cannedACLs {
		if a == s {
			return nil
		}
	}
	return fmt.Errorf("Value must be one of: [%s]", strings.Join(cannedACLs, ", "))
}

func validStoreURL(_ string, v any) error {
	s, _ := v.(string)
	if s == "" {
		return nil
	}
	_, err := endpointURL(s)
	return err
}

func validProxyURL(_ string, v any) error {
	s, _ := v.(string)
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return errors.New("Value must be a proxy URL such as http://proxy:3128")
	}
	return nil
}

func validTagPairs(_ string, v any) error {
	for _, item := range v.([]string) {
		if k, _, ok := strings.Cut(item, ":"); !ok || strings.TrimSpace(k) == "" {
			return fmt.Errorf("Each item must be key:value, got %q", item)
		}
	}
	return nil
}

// oneOfLower is Confluent's enum validator: the value, lower-cased, must
// be one of allowed.
func oneOfLower(allowed ...string) connect.Validator {
	return func(name string, v any) error {
		s, _ := v.(string)
		return connect.OneOf(allowed...)(name, strings.ToLower(s))
	}
}

// endpointURL parses store.url; like Confluent's sink it assumes https://
// when the scheme is missing.
func endpointURL(s string) (string, error) {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", errors.New("Value must be an http(s) URL such as https://s3.example.com or http://minio:9000")
	}
	return strings.TrimRight(u.String(), "/"), nil
}
