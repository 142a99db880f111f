package storage

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// testSSECKey is a base64 256-bit SSE-C key.
var testSSECKey = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))

// headerLog records chosen headers of the requests matching a method.
type headerLog struct {
	mu   sync.Mutex
	seen []http.Header
}

func (l *headerLog) record(r *http.Request) {
	l.mu.Lock()
	l.seen = append(l.seen, r.Header.Clone())
	l.mu.Unlock()
}

func (l *headerLog) all() []http.Header {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]http.Header(nil), l.seen...)
}

// SSE-C: the key goes with every write (each part too) and every read.
func TestSSECustomerKeySent(t *testing.T) {
	f := newFake(t)
	cfg := testConfig(f, "bkt")
	cfg.SSEAlgorithm, cfg.SSECustomerKey = "AES256", testSSECKey
	s := newStore(t, cfg)
	ctx := context.Background()
	if err := s.CreateBucket(ctx); err != nil {
		t.Fatal(err)
	}
	var log headerLog
	f.use(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/bkt" && !r.URL.Query().Has("uploads") && !r.URL.Query().Has("uploadId") ||
			r.URL.Query().Has("partNumber") {
			log.record(r)
		}
		return false
	})
	mustPut(t, s, "small", []byte("secret"), nil)
	big := randomBytes(MinPartSize + 1)
	mustPut(t, s, "big", big, nil)
	if _, _, err := s.Head(ctx, "small"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReadAll(ctx, "big"); err != nil {
		t.Fatal(err)
	}
	md5, _ := sseCustomerKeyMD5(testSSECKey)
	seen := log.all()
	if len(seen) != 5 { // put, 2 parts, head, get
		t.Fatalf("%d object requests, want 5", len(seen))
	}
	for i, h := range seen {
		if h.Get("X-Amz-Server-Side-Encryption-Customer-Algorithm") != "AES256" ||
			h.Get("X-Amz-Server-Side-Encryption-Customer-Key") != testSSECKey ||
			h.Get("X-Amz-Server-Side-Encryption-Customer-Key-Md5") != md5 {
			t.Fatalf("request %d lacks the SSE-C headers: %v", i, h)
		}
	}
}

// SSE-KMS and a canned ACL go with single and multipart uploads.
func TestKMSAndACLSent(t *testing.T) {
	f := newFake(t)
	cfg := testConfig(f, "bkt")
	cfg.SSEAlgorithm, cfg.SSEKMSKeyID, cfg.CannedACL = "aws:kms", "alias/fjord", "bucket-owner-full-control"
	s := newStore(t, cfg)
	if err := s.CreateBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	var log headerLog
	f.use(func(w http.ResponseWriter, r *http.Request) bool {
		q := r.URL.Query()
		if r.Method == http.MethodPut && !q.Has("partNumber") || r.Method == http.MethodPost && q.Has("uploads") {
			log.record(r)
		}
		return false
	})
	mustPut(t, s, "small", []byte("x"), nil)
	mustPut(t, s, "big", randomBytes(MinPartSize+1), nil)
	seen := log.all()
	if len(seen) != 2 {
		t.Fatalf("%d PutObject/CreateMultipartUpload requests, want 2", len(seen))
	}
	for i, h := range seen {
		if h.Get("X-Amz-Server-Side-Encryption") != "aws:kms" ||
			h.Get("X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id") != "alias/fjord" ||
			h.Get("X-Amz-Acl") != "bucket-owner-full-control" {
			t.Fatalf("request %d lacks SSE-KMS or the ACL: %v", i, h)
		}
	}
}

// s3.http.send.expect.continue=false sends large bodies without
// waiting for 100 Continue.
func TestExpectContinue(t *testing.T) {
	for _, on := range []bool{true, false} {
		f := newFake(t)
		cfg := testConfig(f, "bkt")
		cfg.ExpectContinue = on
		s := newStore(t, cfg)
		if err := s.CreateBucket(context.Background()); err != nil {
			t.Fatal(err)
		}
		var log headerLog
		f.use(func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method == http.MethodPut {
				log.record(r)
			}
			return false
		})
		mustPut(t, s, "k", randomBytes(3<<20), nil) // above the SDK's 2 MiB threshold
		got := log.all()[0].Get("Expect")
		if want := map[bool]string{true: "100-continue", false: ""}[on]; got != want {
			t.Fatalf("expect.continue=%v: Expect header %q, want %q", on, got, want)
		}
	}
}

// s3.proxy.url: requests go through the proxy with its credentials
// (s3.proxy.user/password winning over the URL's). The endpoint is not on
// loopback, so payloads are signed.
func TestProxy(t *testing.T) {
	f := newFake(t)
	target, _ := url.Parse(f.URL)
	var mu sync.Mutex
	var auths, hashes []string
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		mu.Lock()
		auths = append(auths, r.In.Header.Get("Proxy-Authorization"))
		if r.In.Method == http.MethodPut && r.In.URL.Path == "/bkt/k" {
			hashes = append(hashes, r.In.Header.Get("X-Amz-Content-Sha256"))
		}
		mu.Unlock()
		r.SetURL(target)
		r.Out.Host = r.In.Host
	}})
	t.Cleanup(proxy.Close)
	cfg := testConfig(f, "bkt")
	cfg.Endpoint = "http://s3.fjord.test"
	cfg.ProxyURL = strings.Replace(proxy.URL, "http://", "http://urluser:urlpass@", 1)
	cfg.ProxyPassword = "pw"
	s := newStore(t, cfg)
	ctx := context.Background()
	if err := s.CreateBucket(ctx); err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "k", []byte("via proxy"), nil)
	if got, err := s.ReadAll(ctx, "k"); err != nil || string(got) != "via proxy" {
		t.Fatalf("read through proxy: %q, %v", got, err)
	}
	wantAuth := "Basic " + base64.StdEncoding.EncodeToString([]byte("urluser:pw"))
	mu.Lock()
	defer mu.Unlock()
	if len(auths) < 3 {
		t.Fatalf("%d requests through the proxy, want all 3", len(auths))
	}
	for _, a := range auths {
		if a != wantAuth {
			t.Fatalf("Proxy-Authorization %q, want %q", a, wantAuth)
		}
	}
	if len(hashes) != 1 || !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(hashes[0]) {
		t.Fatalf("non-loopback PUT payload hash %q, want a signed SHA-256", hashes)
	}
}

// The assume-role provider gets a session from STS (with the static keys,
// role, session name and external ID) and signs S3 requests with it.
func TestAssumeRole(t *testing.T) {
	var mu sync.Mutex
	var form url.Values
	var stsAuth string
	sts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		mu.Lock()
		form, stsAuth = r.PostForm, r.Header.Get("Authorization")
		mu.Unlock()
		w.Header().Set("Content-Type", "text/xml")
		w.Write([]byte(`<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult>
<Credentials><AccessKeyId>ASIATEMP</AccessKeyId><SecretAccessKey>tempsecret</SecretAccessKey>
<SessionToken>session-token</SessionToken><Expiration>2099-01-01T00:00:00Z</Expiration></Credentials>
<AssumedRoleUser><Arn>arn:aws:sts::123:assumed-role/r/fjord</Arn><AssumedRoleId>AROA:fjord</AssumedRoleId></AssumedRoleUser>
</AssumeRoleResult><ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></AssumeRoleResponse>`))
	}))
	t.Cleanup(sts.Close)
	f := newFake(t)
	cfg := testConfig(f, "bkt")
	cfg.AssumeRole = &AssumeRole{RoleARN: "arn:aws:iam::123:role/r", SessionName: "fjord",
		ExternalID: "ext-1", Endpoint: sts.URL}
	s := newStore(t, cfg)
	var log headerLog
	f.use(func(w http.ResponseWriter, r *http.Request) bool { log.record(r); return false })
	if err := s.CreateBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	h := log.all()[0]
	if !strings.Contains(h.Get("Authorization"), "Credential=ASIATEMP/") || h.Get("X-Amz-Security-Token") != "session-token" {
		t.Fatalf("S3 request not signed with the session: Authorization %q, token %q",
			h.Get("Authorization"), h.Get("X-Amz-Security-Token"))
	}
	mu.Lock()
	defer mu.Unlock()
	if form.Get("Action") != "AssumeRole" || form.Get("RoleArn") != "arn:aws:iam::123:role/r" ||
		form.Get("RoleSessionName") != "fjord" || form.Get("ExternalId") != "ext-1" {
		t.Fatalf("STS request %v", form)
	}
	if !strings.Contains(stsAuth, "Credential=test/") {
		t.Fatalf("STS request not signed with the static keys: %q", stsAuth)
	}
}
