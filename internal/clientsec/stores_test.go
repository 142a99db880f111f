package clientsec

import (
	"context"
	"encoding/pem"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
)

// The stores in testdata were made by keytool (testdata/gen.sh): a
// trust store with the CA, and a key store with the client's RSA key
// and chain (JKS: store password storepass, key password keypass;
// PKCS12: both storepass).

func pemDER(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	return blk.Bytes
}

func TestReadJKSTrustStore(t *testing.T) {
	ca := pemDER(t, "testdata/ca.pem")
	for _, pw := range []string{"trustpass", ""} { // Java reads a trust store without its password too
		out, err := readStore("ssl.truststore", "testdata/truststore.jks", "JKS", pw, "")
		if err != nil {
			t.Fatalf("password %q: %v", pw, err)
		}
		blk, _ := pem.Decode(out)
		if blk == nil || blk.Type != "CERTIFICATE" || string(blk.Bytes) != string(ca) {
			t.Fatalf("password %q: the trust store's certificate is not the CA: %s", pw, out)
		}
	}
	if _, err := readStore("ssl.truststore", "testdata/truststore.jks", "JKS", "wrong", ""); err == nil ||
		!strings.Contains(err.Error(), "integrity check failed") {
		t.Fatalf("wrong store password: %v", err)
	}
}

func TestReadJKSKeyStore(t *testing.T) {
	out, err := readStore("ssl.keystore", "testdata/keystore.jks", "JKS", "storepass", "keypass")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := pemKeyPair(out)
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
		{"wrong", "keypass", "integrity check failed"},
		{"", "", "set ssl.key.password or ssl.keystore.password"},
	} {
		if _, err := readStore("ssl.keystore", "testdata/keystore.jks", "JKS", c.store, c.key); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("store %q key %q: %v, want %q", c.store, c.key, err, c.want)
		}
	}
}

func TestReadPKCS12Stores(t *testing.T) {
	out, err := readStore("ssl.truststore", "testdata/truststore.p12", "PKCS12", "trustpass", "")
	if err != nil {
		t.Fatal(err)
	}
	if blk, _ := pem.Decode(out); blk == nil || string(blk.Bytes) != string(pemDER(t, "testdata/ca.pem")) {
		t.Fatalf("the PKCS12 trust store's certificate is not the CA: %s", out)
	}
	out, err = readStore("ssl.keystore", "testdata/keystore.p12", "PKCS12", "storepass", "")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := pemKeyPair(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(cert.Certificate[0]) != string(pemDER(t, "testdata/client.crt")) {
		t.Fatal("the PKCS12 key store's leaf is not the client certificate")
	}
	if _, err := readStore("ssl.keystore", "testdata/keystore.p12", "PKCS12", "wrong", ""); err == nil || !strings.Contains(err.Error(), "wrong password") {
		t.Fatalf("wrong password: %v", err)
	}
}

// JKS and PKCS12 stores work as Kafka users configure them (types left at their JKS
// default) against Fjord's SSL listener with client authentication.
func TestJavaStoresOnFjordBroker(t *testing.T) {
	b := testkit.StartBroker(t, map[string]string{
		"listeners": "SSL://127.0.0.1:0", "inter.broker.listener.name": "SSL",
		"ssl.keystore.type": "PEM", "ssl.keystore.location": "testdata/server.pem",
		"ssl.client.auth": "required", "ssl.truststore.type": "PEM", "ssl.truststore.location": "testdata/ca.pem",
	})
	try := func(props map[string]string) error {
		props["security.protocol"] = "SSL"
		opts, problems := Options(props)
		if len(problems) > 0 {
			t.Fatalf("%v", problems)
		}
		cl, err := kgo.NewClient(append(opts, kgo.SeedBrokers(b.Addr), kgo.RequestRetries(0), kgo.RetryTimeout(2*time.Second))...)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err = kadm.NewClient(cl).ListTopics(ctx)
		return err
	}
	if err := try(map[string]string{"ssl.truststore.location": "testdata/truststore.jks", "ssl.truststore.password": "trustpass",
		"ssl.keystore.location": "testdata/keystore.jks", "ssl.keystore.password": "storepass", "ssl.key.password": "keypass"}); err != nil {
		t.Fatalf("JKS trust and key stores: %v", err)
	}
	if err := try(map[string]string{"ssl.truststore.type": "PKCS12", "ssl.truststore.location": "testdata/truststore.p12", "ssl.truststore.password": "trustpass",
		"ssl.keystore.type": "PKCS12", "ssl.keystore.location": "testdata/keystore.p12", "ssl.keystore.password": "storepass"}); err != nil {
		t.Fatalf("PKCS12 trust and key stores: %v", err)
	}
	if err := try(map[string]string{"ssl.truststore.location": "testdata/truststore.jks"}); err == nil {
		t.Fatal("no client certificate: got in")
	}
}
