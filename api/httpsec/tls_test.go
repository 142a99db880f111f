package httpsec

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"os"
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

// javaStores are internal/keystore's keytool-made fixtures: a server key
// store for localhost/127.0.0.1 (JKS: store password serverpass, key
// password serverkey; PKCS12: serverpass), a JKS trust store with their
// CA (trustpass) and the client certificate CN=Duke.
const javaStores = "../../internal/keystore/testdata/"

// Kafka's REST listeners take JKS and PKCS12 stores too (the default
// type is JKS): both serve HTTPS, and a JKS trust store verifies client
// certificates.
func TestHTTPSListenerJavaStores(t *testing.T) {
	pool := x509.NewCertPool()
	ca, err := os.ReadFile(javaStores + "ca.pem")
	if err != nil {
		t.Fatal(err)
	}
	pool.AppendCertsFromPEM(ca)
	for name, props := range map[string]map[string]string{
		"JKS": {"listeners.https.ssl.keystore.location": javaStores + "server.jks",
			"listeners.https.ssl.keystore.password": "serverpass", "listeners.https.ssl.key.password": "serverkey"},
		"PKCS12": {"listeners.https.ssl.keystore.type": "PKCS12", "listeners.https.ssl.keystore.location": javaStores + "server.p12",
			"listeners.https.ssl.keystore.password": "serverpass"},
	} {
		props["listeners"] = "https://127.0.0.1:0"
		props["listeners.https.ssl.truststore.location"] = javaStores + "truststore.jks"
		props["listeners.https.ssl.truststore.password"] = "trustpass"
		props["listeners.https.ssl.client.auth"] = "required"
		addr := serve(t, props, hello)
		cert, err := tls.LoadX509KeyPair(javaStores+"client.pem", javaStores+"client.pem")
		if err != nil {
			t.Fatal(err)
		}
		c := tlsClient(&tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}})
		if code, body, err := get(t, c, "https://"+addr+"/"); err != nil || code != 200 || body != "hello Duke" {
			t.Errorf("%s: GET with a client certificate = %d %q %v", name, code, body, err)
		}
		if _, _, err := get(t, tlsClient(&tls.Config{RootCAs: pool}), "https://"+addr+"/"); err == nil {
			t.Errorf("%s: a client without a certificate connected", name)
		}
	}
}

func TestHTTPSConfigErrors(t *testing.T) {
	pki := httpsectest.New(t, t.TempDir())
	for name, tc := range map[string]struct {
		props map[string]string
		want  string
	}{
		"no keystore": {map[string]string{}, "needs a certificate"},
		"jceks":       {map[string]string{"listeners.https.ssl.keystore.type": "JCEKS", "listeners.https.ssl.keystore.location": "/x.jks"}, "ssl.keystore.type=JCEKS is not supported"},
		"bcfks trust": {map[string]string{"listeners.https.ssl.keystore.location": pki.ServerFile, "listeners.https.ssl.truststore.type": "BCFKS",
			"listeners.https.ssl.truststore.location": pki.CAFile}, "ssl.truststore.type=BCFKS is not supported"},
		"jks password": {map[string]string{"listeners.https.ssl.keystore.location": javaStores + "server.jks", "listeners.https.ssl.keystore.password": "wrong"}, "wrong store password"},
		"tls1.1":       {map[string]string{"listeners.https.ssl.keystore.location": pki.ServerFile, "listeners.https.ssl.enabled.protocols": "TLSv1.1,TLSv1.2"}, "TLSv1.2 and TLSv1.3 only"},
		"client auth":  {map[string]string{"listeners.https.ssl.keystore.location": pki.ServerFile, "listeners.https.ssl.client.auth": "required"}, "needs a truststore"},
		"bad mode":     {map[string]string{"listeners.https.ssl.keystore.location": pki.ServerFile, "listeners.https.ssl.client.auth": "maybe"}, "none, requested, required"},
		"cert only":    {map[string]string{"listeners.https.ssl.keystore.location": pki.CAFile}, "no private key entry"},
		"missing file": {map[string]string{"listeners.https.ssl.keystore.location": "/no/such.pem"}, "no such file"},
	} {
		_, err := ServerTLS(tc.props)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, tc.want)
		}
	}
}
