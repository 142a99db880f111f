package httpsec

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/fjordhq/fjord/api/httpsec/httpsectest"
)

// serve runs an http.Server on a loopback listener secured by props and
// returns its address.
func serve(t *testing.T, props map[string]string, h http.Handler) string {
	t.Helper()
	sec, err := ForListener(props, "https", nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: sec.Handler(h)}
	go srv.Serve(sec.Listen(ln))
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

var hello = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		io.WriteString(w, "hello "+r.TLS.PeerCertificates[0].Subject.CommonName)
		return
	}
	io.WriteString(w, "hello")
})

func get(t *testing.T, c *http.Client, url string) (int, string, error) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

func tlsClient(cfg *tls.Config) *http.Client {
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true}}
}

func TestHTTPSListenerPEM(t *testing.T) {
	pki := httpsectest.New(t, t.TempDir())
	addr := serve(t, map[string]string{
		"listeners":                             "https://127.0.0.1:0",
		"listeners.https.ssl.keystore.type":     "PEM",
		"listeners.https.ssl.keystore.location": pki.ServerFile,
		// Plain ssl.* keys (the Kafka clients') are ignored once a
		// listeners.https.* key is set: this bogus one must not matter.
		"ssl.keystore.type": "JKS",
	}, hello)

	// A real TLS client trusting the test CA, over HTTP/2 and HTTP/1.1.
	c := tlsClient(&tls.Config{RootCAs: pki.Pool})
	code, body, err := get(t, c, "https://"+addr+"/")
	if err != nil || code != 200 || body != "hello" {
		t.Fatalf("GET over TLS = %d %q %v", code, body, err)
	}
	c11 := tlsClient(&tls.Config{RootCAs: pki.Pool, NextProtos: []string{"http/1.1"}})
	c11.Transport.(*http.Transport).ForceAttemptHTTP2 = false
	if code, _, err := get(t, c11, "https://"+addr+"/"); err != nil || code != 200 {
		t.Fatalf("GET over TLS, HTTP/1.1 = %d %v", code, err)
	}
	// A client that does not trust the CA fails the handshake.
	if _, _, err := get(t, tlsClient(&tls.Config{}), "https://"+addr+"/"); err == nil {
		t.Errorf("a client without the test CA connected")
	}
	// Plain HTTP is refused.
	code, body, err = get(t, http.DefaultClient, "http://"+addr+"/")
	if err != nil || code != http.StatusBadRequest || !strings.Contains(body, "HTTPS server") {
		t.Errorf("plain HTTP to the HTTPS listener = %d %q %v, want 400", code, body, err)
	}
	// TLS 1.1 and below are refused.
	old := tlsClient(&tls.Config{RootCAs: pki.Pool, MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11})
	if _, _, err := get(t, old, "https://"+addr+"/"); err == nil {
		t.Errorf("a TLS 1.1 client connected")
	}
}

func TestHTTPSInlinePEMAndUnprefixedKeys(t *testing.T) {
	pki := httpsectest.New(t, t.TempDir())
	// No listeners.https.* key: the plain ssl.* keys are the listener's.
	addr := serve(t, map[string]string{
		"ssl.keystore.type":              "PEM",
		"ssl.keystore.certificate.chain": pki.ServerCert,
		"ssl.keystore.key":               pki.ServerKey,
		"ssl.enabled.protocols":          "TLSv1.3",
	}, hello)
	if code, _, err := get(t, tlsClient(&tls.Config{RootCAs: pki.Pool}), "https://"+addr+"/"); err != nil || code != 200 {
		t.Fatalf("GET = %d %v", code, err)
	}
	tls12 := tlsClient(&tls.Config{RootCAs: pki.Pool, MaxVersion: tls.VersionTLS12})
	if _, _, err := get(t, tls12, "https://"+addr+"/"); err == nil {
		t.Errorf("ssl.enabled.protocols=TLSv1.3 accepted a TLS 1.2 client")
	}
}

func TestHTTPSClientAuth(t *testing.T) {
	pki := httpsectest.New(t, t.TempDir())
	for _, mode := range []string{"required", "requested", "none"} {
		t.Run(mode, func(t *testing.T) {
			addr := serve(t, map[string]string{
				"listeners.https.ssl.keystore.location":   pki.ServerFile,
				"listeners.https.ssl.truststore.location": pki.CAFile,
				"listeners.https.ssl.client.auth":         mode,
			}, hello)
			withCert := tlsClient(&tls.Config{RootCAs: pki.Pool, Certificates: []tls.Certificate{pki.Client}})
			code, body, err := get(t, withCert, "https://"+addr+"/")
			want := "hello client"
			if mode == "none" {
				want = "hello"
			}
			if err != nil || code != 200 || body != want {
				t.Errorf("with a client certificate: %d %q %v, want %q", code, body, err, want)
			}
			code, body, err = get(t, tlsClient(&tls.Config{RootCAs: pki.Pool}), "https://"+addr+"/")
			if mode == "required" {
				if err == nil {
					t.Errorf("without a client certificate: %d %q, want a failed handshake", code, body)
				}
			} else if err != nil || code != 200 || body != "hello" {
				t.Errorf("without a client certificate: %d %q %v", code, body, err)
			}
		})
	}
	// ssl.client.authentication is the same key.
	cfg, err := ServerTLS(map[string]string{"listeners.https.ssl.keystore.location": pki.ServerFile,
		"listeners.https.ssl.truststore.location": pki.CAFile, "listeners.https.ssl.client.authentication": "required"})
	if err != nil || cfg.ClientAuth != tls.RequireAndVerifyClientCert {
		t.Errorf("ssl.client.authentication=required: %v %v", cfg, err)
	}
}

func TestPeerClientTrustsTruststore(t *testing.T) {
	pki := httpsectest.New(t, t.TempDir())
	props := map[string]string{
		"listeners.https.ssl.keystore.location":   pki.ServerFile,
		"listeners.https.ssl.truststore.location": pki.CAFile,
	}
	addr := serve(t, props, hello)
	c, err := PeerClient(props, "https://"+addr+"/", 0)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, err := get(t, c, "https://"+addr+"/"); err != nil || code != 200 {
		t.Fatalf("peer client: %d %v", code, err)
	}
	// The certificate names 127.0.0.1 and localhost; another name fails
	// unless ssl.endpoint.identification.algorithm is empty.
	props2 := map[string]string{"listeners.https.ssl.truststore.location": pki.CAFile}
	strict, _ := PeerClient(props2, "https://x/", 0)
	strict.Transport.(*http.Transport).TLSClientConfig.ServerName = "elsewhere.example"
	if _, _, err := get(t, strict, "https://"+addr+"/"); err == nil {
		t.Errorf("host name check: connected to a certificate for another name")
	}
	props2["listeners.https.ssl.endpoint.identification.algorithm"] = ""
	lax, _ := PeerClient(props2, "https://x/", 0)
	lax.Transport.(*http.Transport).TLSClientConfig.ServerName = "elsewhere.example"
	if code, _, err := get(t, lax, "https://"+addr+"/"); err != nil || code != 200 {
		t.Errorf("ssl.endpoint.identification.algorithm= : %d %v", code, err)
	}
	// A plain-HTTP worker does not read ssl.* (they may be the Kafka
	// clients' JKS stores).
	if _, err := PeerClient(map[string]string{"ssl.keystore.type": "JKS", "ssl.keystore.location": "/nope"}, "http://w:8083/", 0); err != nil {
		t.Errorf("plain-HTTP worker: %v", err)
	}
}

func TestHTTPSConfigErrors(t *testing.T) {
	pki := httpsectest.New(t, t.TempDir())
	for name, tc := range map[string]struct {
		props map[string]string
		want  string
	}{
		"no keystore":  {map[string]string{}, "needs a certificate"},
		"jks":          {map[string]string{"listeners.https.ssl.keystore.type": "JKS", "listeners.https.ssl.keystore.location": "/x.jks"}, "convert the store to PEM"},
		"pkcs12 trust": {map[string]string{"listeners.https.ssl.keystore.location": pki.ServerFile, "listeners.https.ssl.truststore.type": "PKCS12"}, "ssl.truststore.type=PKCS12 is not supported"},
		"tls1.1":       {map[string]string{"listeners.https.ssl.keystore.location": pki.ServerFile, "listeners.https.ssl.enabled.protocols": "TLSv1.1,TLSv1.2"}, "TLSv1.2 and TLSv1.3 only"},
		"client auth":  {map[string]string{"listeners.https.ssl.keystore.location": pki.ServerFile, "listeners.https.ssl.client.auth": "required"}, "needs a truststore"},
		"bad mode":     {map[string]string{"listeners.https.ssl.keystore.location": pki.ServerFile, "listeners.https.ssl.client.auth": "maybe"}, "none, requested, required"},
		"cert only":    {map[string]string{"listeners.https.ssl.keystore.location": pki.CAFile}, "PEM private key"},
		"missing file": {map[string]string{"listeners.https.ssl.keystore.location": "/no/such.pem"}, "no such file"},
	} {
		_, err := ServerTLS(tc.props)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, tc.want)
		}
	}
}
