package keystore

import (
	"encoding/pem"
	"os"
	"strings"
	"testing"
)

// The stores in testdata were made by openssl and keytool (testdata/gen.sh):
// a CA; the broker's key and chain (server.jks: store password serverpass,
// key password serverkey; server.p12: serverpass); the client's
// (keystore.jks: storepass / keypass; keystore.p12: storepass); trust
// stores with the CA (trustpass).

func pemDER(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	return blk.Bytes
}

func getter(m map[string]string) Getter { return func(k string) string { return m[k] } }

func TestReadJKSTrustStore(t *testing.T) {
	ca := pemDER(t, "testdata/ca.pem")
	for _, pw := range []string{"trustpass", ""} { // Java reads a trust store without its password too
		out, err := Read("ssl.truststore", "testdata/truststore.jks", "JKS", pw, "")
		if err != nil {
			t.Fatalf("password %q: %v", pw, err)
		}
		blk, _ := pem.Decode(out)
		if blk == nil || blk.Type != "CERTIFICATE" || string(blk.Bytes) != string(ca) {
			t.Fatalf("password %q: the trust store's certificate is not the CA: %s", pw, out)
		}
	}
	if _, err := Read("ssl.truststore", "testdata/truststore.jks", "JKS", "wrong", ""); err == nil ||
		!strings.Contains(err.Error(), "integrity check failed") {
		t.Fatalf("wrong store password: %v", err)
	}
}

func TestJKSKeyStore(t *testing.T) {
	props := map[string]string{"ssl.keystore.location": "testdata/keystore.jks", "ssl.keystore.password": "storepass", "ssl.key.password": "keypass"}
	cert, err := Certificate(getter(props))
	if err != nil {
		t.Fatal(err)
	}
	if string(cert.Certificate[0]) != string(pemDER(t, "testdata/client.crt")) {
		t.Fatal("the key store's leaf is not the client certificate")
	}
	if len(cert.Certificate) != 2 {
		t.Errorf("chain of %d certificates, want the client's and the CA's", len(cert.Certificate))
	}
	for _, c := range []struct{ store, key, want string }{
		{"storepass", "wrong", "wrong ssl.key.password"},
		{"wrong", "keypass", "integrity check failed: wrong store password"},
		{"", "", "set ssl.key.password or ssl.keystore.password"},
	} {
		props["ssl.keystore.password"], props["ssl.key.password"] = c.store, c.key
		if _, err := Certificate(getter(props)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("store %q key %q: %v, want %q", c.store, c.key, err, c.want)
		}
	}
}

func TestPKCS12Stores(t *testing.T) {
	pool, err := Pool(getter(map[string]string{"ssl.truststore.type": "PKCS12", "ssl.truststore.location": "testdata/truststore.p12", "ssl.truststore.password": "trustpass"}))
	if err != nil || pool == nil {
		t.Fatalf("PKCS12 trust store: %v", err)
	}
	out, err := Read("ssl.truststore", "testdata/truststore.p12", "PKCS12", "trustpass", "")
	if err != nil {
		t.Fatal(err)
	}
	if blk, _ := pem.Decode(out); blk == nil || string(blk.Bytes) != string(pemDER(t, "testdata/ca.pem")) {
		t.Fatalf("the PKCS12 trust store's certificate is not the CA: %s", out)
	}
	props := map[string]string{"ssl.keystore.type": "PKCS12", "ssl.keystore.location": "testdata/keystore.p12", "ssl.keystore.password": "storepass"}
	cert, err := Certificate(getter(props))
	if err != nil {
		t.Fatal(err)
	}
	if string(cert.Certificate[0]) != string(pemDER(t, "testdata/client.crt")) {
		t.Fatal("the PKCS12 key store's leaf is not the client certificate")
	}
	// ssl.key.password that is not the key's: the store password is
	// tried next, as keytool protects the key with it.
	props["ssl.key.password"] = "other"
	if _, err := Certificate(getter(props)); err != nil {
		t.Fatalf("ssl.key.password other than the store's: %v", err)
	}
	props["ssl.keystore.password"] = "wrong"
	if _, err := Certificate(getter(props)); err == nil || !strings.Contains(err.Error(), "wrong password") {
		t.Fatalf("wrong password: %v", err)
	}
}

// Both stores of each kind yield the broker's key and chain; the type
// may be left at Kafka's JKS default for a PKCS12 file (Java opens it).
func TestServerStores(t *testing.T) {
	for _, props := range []map[string]string{
		{"ssl.keystore.location": "testdata/server.jks", "ssl.keystore.password": "serverpass", "ssl.key.password": "serverkey"},
		{"ssl.keystore.type": "JKS", "ssl.keystore.location": "testdata/server.jks", "ssl.keystore.password": "serverpass", "ssl.key.password": "serverkey"},
		{"ssl.keystore.type": "PKCS12", "ssl.keystore.location": "testdata/server.p12", "ssl.keystore.password": "serverpass"},
		{"ssl.keystore.location": "testdata/server.p12", "ssl.keystore.password": "serverpass"},
		{"ssl.keystore.type": "PEM", "ssl.keystore.location": "testdata/server.pem"},
	} {
		cert, err := Certificate(getter(props))
		if err != nil {
			t.Fatalf("%v: %v", props, err)
		}
		if cert.Leaf == nil || cert.Leaf.Subject.CommonName != "localhost" {
			t.Fatalf("%v: leaf %v, want the broker's certificate", props, cert.Leaf)
		}
	}
}

func TestStoreErrors(t *testing.T) {
	for _, c := range []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{"ssl.keystore.type": "JCEKS", "ssl.keystore.location": "testdata/server.jks"}, "ssl.keystore.type=JCEKS is not supported: use JKS (Kafka's default), PKCS12 or PEM"},
		{map[string]string{"ssl.truststore.type": "BCFKS", "ssl.truststore.location": "testdata/truststore.jks"}, "ssl.truststore.type=BCFKS is not supported"},
		{map[string]string{"ssl.keystore.location": "testdata/truststore.jks", "ssl.keystore.password": "trustpass"}, "holds no private key entry (is it a trust store?)"},
		{map[string]string{"ssl.keystore.type": "PKCS12", "ssl.keystore.location": "testdata/truststore.p12", "ssl.keystore.password": "trustpass"}, "holds no private key entry"},
		{map[string]string{"ssl.keystore.location": "testdata/server.jks", "ssl.keystore.password": "nope", "ssl.key.password": "serverkey"}, "wrong store password"},
		{map[string]string{"ssl.keystore.location": "testdata/server.jks", "ssl.keystore.password": "serverpass"}, "wrong ssl.key.password"},
		{map[string]string{"ssl.keystore.location": "testdata/server.p12", "ssl.keystore.password": "nope"}, "wrong password"},
		{map[string]string{"ssl.keystore.location": "testdata/gen.sh"}, "is not a PEM, JKS or PKCS12 store (type JKS)"},
		{map[string]string{"ssl.keystore.location": "testdata/missing.jks"}, "no such file"},
		{map[string]string{"ssl.keystore.type": "JKS", "ssl.keystore.key": "k", "ssl.keystore.certificate.chain": "c"}, "only with ssl.keystore.type=PEM"},
		{map[string]string{"ssl.keystore.location": "testdata/server.pem", "ssl.keystore.key": "k"}, "not both"},
		{map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": "testdata/ca.pem"}, "holds no private key entry"},
	} {
		_, err := Certificate(getter(c.props))
		if _, ok := c.props["ssl.truststore.type"]; ok {
			_, err = Pool(getter(c.props))
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.props, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "serverpass") {
			t.Errorf("error quotes a password: %v", err)
		}
	}
	for _, c := range []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{"ssl.truststore.type": "JKS", "ssl.truststore.certificates": "x"}, "needs ssl.truststore.type=PEM"},
		{map[string]string{"ssl.truststore.location": "testdata/ca.pem", "ssl.truststore.certificates": "x"}, "not both"},
		{map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.certificates": "x"}, "holds no certificate"},
	} {
		if _, err := Pool(getter(c.props)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.props, err, c.want)
		}
	}
	if c, err := Certificate(getter(nil)); c != nil || err != nil {
		t.Errorf("no key store: %v, %v", c, err)
	}
	if p, err := Pool(getter(nil)); p != nil || err != nil {
		t.Errorf("no trust store: %v, %v", p, err)
	}
}
