package broker_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fjordhq/fjord/broker"
	"github.com/fjordhq/fjord/broker/auth"
	"github.com/fjordhq/fjord/broker/protocol"
)

// testPKI is a CA with a server certificate for 127.0.0.1/localhost and
// a client certificate, written as PEM files into a temp dir.
type testPKI struct {
	Dir string
	// CA is the CA certificate; Server is key+chain in one file (what
	// ssl.keystore.location points to); ClientCert/ClientKey are the
	// client's, ClientPEM both in one file.
	CA, Server, ClientCert, ClientKey, ClientPEM string
	// ClientDN is the client certificate's subject as Kafka names it.
	ClientDN string
}

func newTestPKI(t testing.TB) *testPKI {
	t.Helper()
	dir := t.TempDir()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fjord test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	issue := func(serial int64, subject pkix.Name, server bool) (certPEM, keyPEM []byte) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: subject,
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature,
		}
		if server {
			tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
			tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
			tmpl.DNSNames = []string{"localhost"}
		} else {
			tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, _ := x509.MarshalPKCS8PrivateKey(key)
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	p := &testPKI{Dir: dir}
	write := func(name string, parts ...[]byte) string {
		var b []byte
		for _, x := range parts {
			b = append(b, x...)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	p.CA = write("ca.pem", caPEM)
	sc, sk := issue(2, pkix.Name{CommonName: "localhost", Organization: []string{"Fjord"}}, true)
	p.Server = write("server.pem", sk, sc, caPEM)
	cc, ck := issue(3, pkix.Name{CommonName: "alice", OrganizationalUnit: []string{"eng"}, Organization: []string{"Fjord"}, Country: []string{"NO"}}, false)
	p.ClientCert, p.ClientKey = write("client.crt", cc), write("client.key", ck)
	p.ClientPEM = write("client.pem", ck, cc)
	// Go writes the subject C, O, OU, CN; RFC 2253 lists it reversed.
	p.ClientDN = "CN=alice,OU=eng,O=Fjord,C=NO"
	return p
}

// memScram is an in-memory SCRAM credential store.
type memScram struct {
	mu    sync.Mutex
	creds map[string]auth.ScramCredential
}

func newMemScram(t testing.TB, users map[string]string) *memScram {
	s := &memScram{creds: map[string]auth.ScramCredential{}}
	for user, pw := range users {
		for _, m := range []auth.ScramMechanism{auth.ScramSHA256, auth.ScramSHA512} {
			c, err := protocol.NewScramCredential(m, pw, nil, 4096)
			if err != nil {
				t.Fatal(err)
			}
			s.creds[m.Name()+"/"+user] = c
		}
	}
	return s
}

func (s *memScram) ScramCredential(user string, m auth.ScramMechanism) (auth.ScramCredential, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.creds[m.Name()+"/"+user]
	return c, ok
}

// startSecureBroker starts a one-node broker with props laid over test
// defaults and the SCRAM store given (nil for none).
func startSecureBroker(t testing.TB, props map[string]string, scram auth.ScramStore) *broker.Server {
	t.Helper()
	all := map[string]string{
		"node.id":                          "0",
		"log.dirs":                         t.TempDir(),
		"offsets.topic.replication.factor": "1",
		"offsets.topic.num.partitions":     "4",
		"group.initial.rebalance.delay.ms": "0",
	}
	for k, v := range props {
		all[k] = v
	}
	level := slog.LevelWarn
	if os.Getenv("FJORD_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	cfg, err := broker.ConfigFromProperties(all, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})))
	if err != nil {
		t.Fatalf("broker config: %v", err)
	}
	cfg.ScramStore = scram
	s, err := broker.New(cfg)
	if err != nil {
		t.Fatalf("start broker: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve() }()
	t.Cleanup(func() {
		s.Close()
		<-done
	})
	return s
}
