package httpsec

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"

	ks "github.com/fjordhq/fjord/internal/keystore"
)

// HTTPSPrefix is the prefix of the HTTPS listener's own ssl.* keys.
const HTTPSPrefix = "listeners.https."

// sslValues returns the ssl.* settings of the HTTPS listener as Kafka's
// AbstractConfig.valuesWithPrefixAllOrNothing picks them: when any key
// starts with listeners.https., only those keys count (prefix removed);
// otherwise the plain keys.
func sslValues(props map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range props {
		if rest, ok := strings.CutPrefix(k, HTTPSPrefix); ok {
			out[rest] = v
		}
	}
	if len(out) > 0 {
		return out
	}
	for k, v := range props {
		if strings.HasPrefix(k, "ssl.") {
			out[k] = v
		}
	}
	return out
}

// ServerTLS is the TLS configuration of an https:// listener.
func ServerTLS(props map[string]string) (*tls.Config, error) {
	ssl := sslValues(props)
	cfg, err := baseTLS(ssl)
	if err != nil {
		return nil, err
	}
	certs, err := keystore(ssl)
	if err != nil {
		return nil, err
	}
	if certs == nil {
		return nil, errors.New("an https listener needs a certificate: set listeners.https.ssl.keystore.location to a key store with the private key and certificate chain (ssl.keystore.type JKS, PKCS12 or PEM, with ssl.keystore.password and ssl.key.password), or ssl.keystore.key and ssl.keystore.certificate.chain")
	}
	cfg.Certificates = []tls.Certificate{*certs}
	pool, err := truststore(ssl)
	if err != nil {
		return nil, err
	}
	cfg.ClientCAs = pool
	auth := ssl["ssl.client.auth"]
	if auth == "" {
		auth = ssl["ssl.client.authentication"]
	}
	switch strings.ToLower(strings.TrimSpace(auth)) {
	case "", "none":
		cfg.ClientAuth = tls.NoClientCert
	case "requested":
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	case "required":
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	default:
		return nil, fmt.Errorf("Invalid value %s for configuration ssl.client.auth: must be one of none, requested, required", auth)
	}
	if cfg.ClientAuth != tls.NoClientCert && pool == nil {
		return nil, fmt.Errorf("ssl.client.auth=%s needs a truststore with the CA that signs client certificates: set listeners.https.ssl.truststore.location (JKS, PKCS12 or PEM)", auth)
	}
	return cfg, nil
}

// ClientTLS is the TLS configuration a worker uses to call another
// worker's https:// listener (Kafka's RestClient): the truststore checks
// the server (the system's roots without one), the keystore, when set,
// is the client certificate.
func ClientTLS(props map[string]string) (*tls.Config, error) {
	ssl := sslValues(props)
	cfg, err := baseTLS(ssl)
	if err != nil {
		return nil, err
	}
	if cfg.RootCAs, err = truststore(ssl); err != nil {
		return nil, err
	}
	certs, err := keystore(ssl)
	if err != nil {
		return nil, err
	}
	if certs != nil {
		cfg.Certificates = []tls.Certificate{*certs}
	}
	// Kafka's default is "https" (check the host name); "" turns it off.
	if alg, ok := ssl["ssl.endpoint.identification.algorithm"]; ok && strings.TrimSpace(alg) == "" {
		cfg.InsecureSkipVerify = true
		roots := cfg.RootCAs
		cfg.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
			return verifyChainOnly(raw, roots)
		}
	}
	return cfg, nil
}

// verifyChainOnly checks a server chain against roots without the host
// name (ssl.endpoint.identification.algorithm=).
func verifyChainOnly(raw [][]byte, roots *x509.CertPool) error {
	if len(raw) == 0 {
		return errors.New("server sent no certificate")
	}
	certs := make([]*x509.Certificate, len(raw))
	for i, b := range raw {
		c, err := x509.ParseCertificate(b)
		if err != nil {
			return err
		}
		certs[i] = c
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	_, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
	return err
}

// baseTLS applies ssl.enabled.protocols and ssl.cipher.suites, never
// allowing less than TLS 1.2.
func baseTLS(ssl map[string]string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS13}
	if p := strings.TrimSpace(ssl["ssl.enabled.protocols"]); p != "" {
		lo, hi := uint16(0), uint16(0)
		for _, name := range strings.Split(p, ",") {
			var v uint16
			switch strings.TrimSpace(name) {
			case "TLSv1.2":
				v = tls.VersionTLS12
			case "TLSv1.3":
				v = tls.VersionTLS13
			case "TLSv1", "TLSv1.1", "SSLv3":
				return nil, fmt.Errorf("ssl.enabled.protocols lists %s: Fjord serves TLSv1.2 and TLSv1.3 only; remove it", strings.TrimSpace(name))
			default:
				return nil, fmt.Errorf("Invalid value %s for configuration ssl.enabled.protocols: use TLSv1.2 and/or TLSv1.3", strings.TrimSpace(name))
			}
			if lo == 0 || v < lo {
				lo = v
			}
			if v > hi {
				hi = v
			}
		}
		cfg.MinVersion, cfg.MaxVersion = lo, hi
	}
	if s := strings.TrimSpace(ssl["ssl.cipher.suites"]); s != "" {
		byName := map[string]uint16{}
		for _, cs := range tls.CipherSuites() {
			byName[cs.Name] = cs.ID
		}
		for _, name := range strings.Split(s, ",") {
			id, ok := byName[strings.TrimSpace(name)]
			if !ok {
				return nil, fmt.Errorf("ssl.cipher.suites: %q is not a secure cipher suite Fjord knows (IANA names such as TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)", strings.TrimSpace(name))
			}
			cfg.CipherSuites = append(cfg.CipherSuites, id)
		}
	}
	return cfg, nil
}

// keystore loads the certificate chain and private key (nil, nil when
// no keystore is configured): JKS, PKCS12 or PEM, read by
// internal/keystore as the broker's listeners and Kafka clients read them.
func keystore(ssl map[string]string) (*tls.Certificate, error) {
	return ks.Certificate(func(k string) string { return ssl[k] })
}

// truststore loads the trusted CA certificates (nil when none is set).
func truststore(ssl map[string]string) (*x509.CertPool, error) {
	return ks.Pool(func(k string) string { return ssl[k] })
}
