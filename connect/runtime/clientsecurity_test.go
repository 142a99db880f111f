package runtime

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// testPKI is a CA with a server certificate and a client certificate,
// written as PEM files.
type testPKI struct {
	caPEM, serverCert, serverKey, clientCert, clientKey []byte
	caFile, clientStore, clientCertFile, clientKeyFile  string
	pool                                                *x509.CertPool
}

func newTestPKI(t *testing.T, serverNames []string, serverIPs []net.IP) *testPKI {
	t.Helper()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	keyPEM := func(k *ecdsa.PrivateKey) []byte {
		b, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: b})
	}
	caKey := key()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fjord test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	issue := func(cn string, names []string, ips []net.IP, usage x509.ExtKeyUsage, serial int64) ([]byte, []byte) {
		k := key()
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			DNSNames: names, IPAddresses: ips, ExtKeyUsage: []x509.ExtKeyUsage{usage}, KeyUsage: x509.KeyUsageDigitalSignature}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM(k)
	}
	p := &testPKI{caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), pool: x509.NewCertPool()}
	p.pool.AddCert(ca)
	p.serverCert, p.serverKey = issue("broker", serverNames, serverIPs, x509.ExtKeyUsageServerAuth, 2)
	p.clientCert, p.clientKey = issue("connect-worker", nil, nil, x509.ExtKeyUsageClientAuth, 3)
	dir := t.TempDir()
	wr := func(name string, b ...[]byte) string {
		path := filepath.Join(dir, name)
		var all []byte
		for _, x := range b {
			all = append(all, x...)
		}
		if err := os.WriteFile(path, all, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	p.caFile = wr("ca.pem", p.caPEM)
	p.clientStore = wr("client-keystore.pem", p.clientKey, p.clientCert)
	p.clientCertFile = wr("client.crt", p.clientCert)
	p.clientKeyFile = wr("client.key", p.clientKey)
	return p
}

func (p *testPKI) serverTLS(t *testing.T, clientAuth tls.ClientAuthType) *tls.Config {
	cert, err := tls.X509KeyPair(p.serverCert, p.serverKey)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: p.pool, ClientAuth: clientAuth, MinVersion: tls.VersionTLS12}
}

// tryClient builds a client from Kafka properties and asks the cluster
// for its metadata.
func tryClient(t *testing.T, props map[string]string) error {
	t.Helper()
	opts, err := KafkaClientOpts(AdminClient, props, nil)
	if err != nil {
		return err
	}
	opts = append(opts, kgo.RetryTimeout(2*time.Second), kgo.RequestRetries(1))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = kadm.NewClient(cl).BrokerMetadata(ctx)
	return err
}

const plainJAAS = `org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="alice-secret";`

func scramJAAS(user, pass string) string {
	return `org.apache.kafka.common.security.scram.ScramLoginModule required username="` + user + `" password="` + pass + `";`
}

// The client settings Kafka users write for SASL_SSL, SASL_PLAINTEXT and
// SSL (with mutual TLS) work against a TLS+SASL Kafka server (franz-go's
// kfake), and wrong credentials, trust or host names fail.
func TestClientSecurityAgainstSecuredCluster(t *testing.T) {
	pki := newTestPKI(t, []string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")})
	sasl := []kfake.Opt{kfake.EnableSASL(),
		kfake.Superuser("PLAIN", "alice", "alice-secret"),
		kfake.Superuser("SCRAM-SHA-256", "bob", "bob-secret"),
		kfake.Superuser("SCRAM-SHA-512", "carol", "carol-secret")}
	start := func(opts ...kfake.Opt) string {
		c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c.ListenAddrs()[0]
	}
	saslSSL := start(append(sasl, kfake.TLS(pki.serverTLS(t, tls.NoClientCert)))...)
	saslPlain := start(sasl...)
	mtls := start(kfake.TLS(pki.serverTLS(t, tls.RequireAndVerifyClientCert)))

	ok := []struct {
		name  string
		props map[string]string
	}{
		{"SASL_SSL PLAIN", map[string]string{"bootstrap.servers": saslSSL, "security.protocol": "SASL_SSL",
			"sasl.mechanism": "PLAIN", "sasl.jaas.config": plainJAAS,
			"ssl.truststore.type": "PEM", "ssl.truststore.location": pki.caFile}},
		{"SASL_SSL SCRAM-SHA-256, inline trust", map[string]string{"bootstrap.servers": "SASL_SSL://" + saslSSL, "security.protocol": "sasl_ssl",
			"sasl.mechanism": "SCRAM-SHA-256", "sasl.jaas.config": scramJAAS("bob", "bob-secret"),
			"ssl.truststore.type": "PEM", "ssl.truststore.certificates": string(pki.caPEM)}},
		{"SASL_SSL SCRAM-SHA-512", map[string]string{"bootstrap.servers": saslSSL, "security.protocol": "SASL_SSL",
			"sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": scramJAAS("carol", "carol-secret"),
			"ssl.truststore.location": pki.caFile}},
		{"SASL_PLAINTEXT SCRAM-SHA-256", map[string]string{"bootstrap.servers": saslPlain, "security.protocol": "SASL_PLAINTEXT",
			"sasl.mechanism": "SCRAM-SHA-256", "sasl.jaas.config": scramJAAS("bob", "bob-secret")}},
		{"SSL mTLS keystore file", map[string]string{"bootstrap.servers": mtls, "security.protocol": "SSL",
			"ssl.truststore.location": pki.caFile, "ssl.keystore.type": "PEM", "ssl.keystore.location": pki.clientStore}},
		{"SSL mTLS inline key and chain", map[string]string{"bootstrap.servers": mtls, "security.protocol": "SSL",
			"ssl.truststore.location": pki.caFile, "ssl.keystore.type": "PEM",
			"ssl.keystore.key": string(pki.clientKey), "ssl.keystore.certificate.chain": string(pki.clientCert)}},
	}
	for _, c := range ok {
		if err := tryClient(t, c.props); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}

	otherCA := newTestPKI(t, []string{"localhost"}, nil)
	onlyLocalhost := newTestPKI(t, []string{"localhost"}, nil)
	hostCheck := start(kfake.TLS(onlyLocalhost.serverTLS(t, tls.NoClientCert)))
	bad := []struct {
		name  string
		props map[string]string
		want  string
	}{
		{"wrong PLAIN password", map[string]string{"bootstrap.servers": saslSSL, "security.protocol": "SASL_SSL",
			"sasl.mechanism": "PLAIN", "sasl.jaas.config": strings.Replace(plainJAAS, "alice-secret", "nope", 1),
			"ssl.truststore.location": pki.caFile}, ""},
		{"wrong SCRAM password", map[string]string{"bootstrap.servers": saslPlain, "security.protocol": "SASL_PLAINTEXT",
			"sasl.mechanism": "SCRAM-SHA-256", "sasl.jaas.config": scramJAAS("bob", "nope")}, ""},
		{"no SASL on a SASL listener", map[string]string{"bootstrap.servers": saslPlain}, ""},
		{"untrusted broker certificate", map[string]string{"bootstrap.servers": saslSSL, "security.protocol": "SASL_SSL",
			"sasl.mechanism": "PLAIN", "sasl.jaas.config": plainJAAS, "ssl.truststore.location": otherCA.caFile}, "certificate"},
		{"mTLS without a client certificate", map[string]string{"bootstrap.servers": mtls, "security.protocol": "SSL",
			"ssl.truststore.location": pki.caFile}, ""},
		{"host name not in the certificate", map[string]string{"bootstrap.servers": hostCheck, "security.protocol": "SSL",
			"ssl.truststore.location": onlyLocalhost.caFile}, "127.0.0.1"},
	}
	for _, c := range bad {
		err := tryClient(t, c.props)
		if err == nil {
			t.Errorf("%s: connected, want a failure", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q in it", c.name, err, c.want)
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: error quotes a password: %v", c.name, err)
		}
	}
	// Kafka's ssl.endpoint.identification.algorithm= (empty) turns the
	// host name check off, but the chain must still be trusted.
	if err := tryClient(t, map[string]string{"bootstrap.servers": hostCheck, "security.protocol": "SSL",
		"ssl.truststore.location": onlyLocalhost.caFile, "ssl.endpoint.identification.algorithm": ""}); err != nil {
		t.Errorf("no host name check: %v", err)
	}
	if err := tryClient(t, map[string]string{"bootstrap.servers": hostCheck, "security.protocol": "SSL",
		"ssl.truststore.location": otherCA.caFile, "ssl.endpoint.identification.algorithm": ""}); err == nil {
		t.Errorf("no host name check but an untrusted CA: connected")
	}
}

func TestClientSecurityConfigErrors(t *testing.T) {
	dir := t.TempDir()
	jks := filepath.Join(dir, "truststore.jks")
	os.WriteFile(jks, []byte{0xfe, 0xed, 0xfe, 0xed, 0, 0, 0, 2}, 0o600)
	p12 := filepath.Join(dir, "truststore.p12")
	os.WriteFile(p12, []byte{0x30, 0x82, 0x0a, 0x00, 0x02, 0x01, 0x03}, 0o600)
	cases := []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{"security.protocol": "SASL_TLS"}, "security.protocol: String must be one of"},
		{map[string]string{"security.protocol": "SASL_SSL", "sasl.jaas.config": plainJAAS}, "GSSAPI is not supported"},
		{map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN"}, "sasl.jaas.config is required"},
		{map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-256", "sasl.jaas.config": plainJAAS}, "needs org.apache.kafka.common.security.scram.ScramLoginModule"},
		{map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.jaas.config": `PlainLoginModule required username="a" password="secret"`}, "must end with ';'"},
		{map[string]string{"security.protocol": "SSL", "ssl.truststore.location": jks}, "truststore.jks: not a JKS key store"},
		{map[string]string{"security.protocol": "SSL", "ssl.truststore.location": p12, "ssl.truststore.type": "PKCS12"}, "is not a PEM, JKS or PKCS12 store (type PKCS12)"},
		{map[string]string{"security.protocol": "SSL", "ssl.truststore.location": filepath.Join(dir, "missing.pem")}, "ssl.truststore.location"},
		{map[string]string{"security.protocol": "SSL", "ssl.endpoint.identification.algorithm": "ldap"}, "ssl.endpoint.identification.algorithm"},
		{map[string]string{"ssl.truststore.location": jks}, "set security.protocol=SSL or SASL_SSL"},
	}
	for _, c := range cases {
		c.props["bootstrap.servers"] = "127.0.0.1:1"
		_, err := KafkaClientOpts(ProducerClient, c.props, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.props, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("error quotes a password: %v", err)
		}
	}
}
