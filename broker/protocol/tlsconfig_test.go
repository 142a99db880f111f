package protocol

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// writeKeystore writes the server certificate's key and chain as PEM
// files: key.pem (unencrypted PKCS#8) and cert.pem.
func writeKeystore(t *testing.T, cert tls.Certificate) (keyPath, certPath string) {
	dir := t.TempDir()
	der, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	keyPath, certPath = filepath.Join(dir, "key.pem"), filepath.Join(dir, "cert.pem")
	os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
	os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o600)
	return keyPath, certPath
}

func getter(m map[string]string) SSLGetter { return func(k string) string { return m[k] } }

// A keystore whose key is encrypted the way openssl writes PKCS#8 (PBES2,
// PBKDF2, AES-256-CBC) loads with ssl.key.password and serves TLS.
func TestServerTLSConfigEncryptedKey(t *testing.T) {
	srvCert, _, pool := testCerts(t, pkix.Name{CommonName: "x"})
	keyPath, certPath := writeKeystore(t, srvCert)
	enc := filepath.Join(filepath.Dir(keyPath), "enc.pem")
	if out, err := exec.Command("openssl", "pkcs8", "-topk8", "-v2", "aes-256-cbc", "-in", keyPath, "-out", enc, "-passout", "pass:s3cret").CombinedOutput(); err != nil {
		t.Fatalf("openssl pkcs8: %v\n%s", err, out)
	}
	encPEM, _ := os.ReadFile(enc)
	if !strings.Contains(string(encPEM), "ENCRYPTED PRIVATE KEY") {
		t.Fatalf("openssl did not write an encrypted key:\n%s", encPEM)
	}
	certPEM, _ := os.ReadFile(certPath)
	store := filepath.Join(filepath.Dir(keyPath), "store.pem")
	os.WriteFile(store, append(encPEM, certPEM...), 0o600)

	props := map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": store}
	if _, err := ServerTLSConfig(getter(props)); err == nil || !strings.Contains(err.Error(), "ssl.key.password") {
		t.Fatalf("encrypted key without ssl.key.password: %v", err)
	}
	props["ssl.key.password"] = "wrong"
	if _, err := ServerTLSConfig(getter(props)); err == nil || !strings.Contains(err.Error(), "wrong ssl.key.password") {
		t.Fatalf("wrong ssl.key.password: %v", err)
	}
	props["ssl.key.password"] = "s3cret"
	cfg, err := ServerTLSConfig(getter(props))
	if err != nil {
		t.Fatal(err)
	}
	_, addr := startSecure(t, &Security{Listener: "SSL", Protocol: "SSL", TLS: cfg})
	c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool})
	if err != nil {
		t.Fatalf("TLS with the decrypted key: %v", err)
	}
	c.Close()
}

func TestServerTLSConfigErrors(t *testing.T) {
	srvCert, _, _ := testCerts(t, pkix.Name{CommonName: "x"})
	keyPath, certPath := writeKeystore(t, srvCert)
	key, _ := os.ReadFile(keyPath)
	cert, _ := os.ReadFile(certPath)
	for _, tc := range []struct {
		props map[string]string
		want  string // "" means accepted
	}{
		{map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.key": string(key), "ssl.keystore.certificate.chain": string(cert)}, ""},
		{map[string]string{"ssl.keystore.location": keyPath}, "holds a private key but no certificate chain"},
		{map[string]string{"ssl.keystore.type": "JCEKS", "ssl.keystore.location": keyPath}, "use JKS (Kafka's default), PKCS12 or PEM"},
		{map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": certPath}, "holds no private key entry"},
		{map[string]string{}, "needs a certificate"},
		{map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.key": string(key), "ssl.keystore.certificate.chain": string(cert), "ssl.client.auth": "required"}, "needs a truststore"},
		{map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.key": string(key), "ssl.keystore.certificate.chain": string(cert),
			"ssl.client.auth": "required", "ssl.truststore.type": "PEM", "ssl.truststore.certificates": string(cert)}, ""},
		{map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.key": string(key), "ssl.keystore.certificate.chain": string(cert), "ssl.enabled.protocols": "TLSv1.3"}, ""},
		{map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.key": string(key), "ssl.keystore.certificate.chain": string(cert), "ssl.enabled.protocols": "TLSv1.1"}, "not supported"},
		{map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.key": string(key), "ssl.keystore.certificate.chain": string(cert), "ssl.cipher.suites": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}, ""},
		{map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.key": string(key), "ssl.keystore.certificate.chain": string(cert), "ssl.cipher.suites": "TLS_NOPE"}, "not a supported cipher suite"},
	} {
		cfg, err := ServerTLSConfig(getter(tc.props))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", keysOf(tc.props), err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: want an error containing %q, got %v", keysOf(tc.props), tc.want, err)
		case tc.props["ssl.enabled.protocols"] == "TLSv1.3" && err == nil && cfg.MinVersion != tls.VersionTLS13:
			t.Errorf("ssl.enabled.protocols=TLSv1.3: MinVersion %x", cfg.MinVersion)
		}
	}
}

func keysOf(m map[string]string) []string {
	var out []string
	for k, v := range m {
		if len(v) > 40 {
			v = v[:10] + "…"
		}
		out = append(out, k+"="+v)
	}
	return out
}
