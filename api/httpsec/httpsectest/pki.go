// Package httpsectest makes a throwaway PKI for tests of HTTPS
// listeners: a CA, a server certificate for 127.0.0.1 and localhost,
// and a client certificate, written as PEM files.
package httpsectest

import (
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
	"testing"
	"time"
)

// PKI is a CA with one server and one client certificate.
type PKI struct {
	// CAFile is the CA certificate (a PEM truststore).
	CAFile string
	// ServerFile holds the server's private key and certificate (a PEM
	// keystore for ssl.keystore.location); ServerCert/ServerKey the same
	// parts alone.
	ServerFile, ServerCert, ServerKey string
	// ClientFile is a client keystore (key and certificate, CN=client).
	ClientFile string
	// Pool trusts the CA.
	Pool *x509.CertPool
	// Client is the client certificate for tls.Config.Certificates.
	Client tls.Certificate
}

// New writes a fresh PKI into dir.
func New(t testing.TB, dir string) *PKI {
	t.Helper()
	caKey := key(t)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Fjord test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	p := &PKI{Pool: x509.NewCertPool()}
	p.Pool.AddCert(ca)
	p.CAFile = write(t, dir, "ca.pem", pemOf("CERTIFICATE", caDER))

	leaf := func(name string, serial int64, usage x509.ExtKeyUsage) (certPEM, keyPEM []byte) {
		k := key(t)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kd, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return pemOf("CERTIFICATE", der), pemOf("PRIVATE KEY", kd)
	}
	sc, sk := leaf("localhost", 2, x509.ExtKeyUsageServerAuth)
	p.ServerCert, p.ServerKey = string(sc), string(sk)
	p.ServerFile = write(t, dir, "server.pem", append(append([]byte{}, sk...), sc...))
	cc, ck := leaf("client", 3, x509.ExtKeyUsageClientAuth)
	p.ClientFile = write(t, dir, "client.pem", append(append([]byte{}, ck...), cc...))
	if p.Client, err = tls.X509KeyPair(cc, ck); err != nil {
		t.Fatal(err)
	}
	return p
}

func key(t testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func pemOf(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func write(t testing.TB, dir, name string, b []byte) string {
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
