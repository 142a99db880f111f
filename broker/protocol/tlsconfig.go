package protocol

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"

	"github.com/fjordhq/fjord/internal/keystore"
)

// SSLGetter looks up an ssl.* key for one listener: the
// listener.name.<listener>.ssl.* override if set, else the broker-wide
// key ("" when neither is set).
type SSLGetter func(key string) string

// ServerTLSConfig builds a TLS listener's configuration from Kafka's ssl.*
// keys. Keystores and truststores are files of ssl.keystore.type /
// ssl.truststore.type JKS (Kafka's default), PKCS12 or PEM
// (ssl.keystore.location with ssl.keystore.password and ssl.key.password;
// ssl.truststore.location with ssl.truststore.password), or inline PEM
// values (ssl.keystore.key with ssl.keystore.certificate.chain;
// ssl.truststore.certificates).
func ServerTLSConfig(get SSLGetter) (*tls.Config, error) {
	cert, err := loadKeystore(get)
	if err != nil {
		return nil, err
	}
	if cert == nil {
		return nil, errors.New("a TLS listener needs a certificate: set ssl.keystore.location (a JKS, PKCS12 or PEM key store; ssl.keystore.type, ssl.keystore.password and ssl.key.password), or ssl.keystore.type=PEM with ssl.keystore.key and ssl.keystore.certificate.chain")
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{*cert}}
	if err := applyProtocols(cfg, get); err != nil {
		return nil, err
	}
	pool, err := loadTruststore(get)
	if err != nil {
		return nil, err
	}
	switch ca := strings.ToLower(strings.TrimSpace(get("ssl.client.auth"))); ca {
	case "", "none":
		cfg.ClientAuth = tls.NoClientCert
	case "required", "requested":
		if pool == nil {
			return nil, fmt.Errorf("ssl.client.auth=%s needs a truststore to verify client certificates: set ssl.truststore.location (JKS, PKCS12 or PEM; ssl.truststore.type, ssl.truststore.password) or ssl.truststore.certificates", ca)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
		if ca == "requested" {
			cfg.ClientAuth = tls.VerifyClientCertIfGiven
		}
	default:
		return nil, fmt.Errorf("ssl.client.auth=%q: use required, requested or none", ca)
	}
	return cfg, nil
}

// ClientTLSConfig builds the configuration a broker uses to dial another
// broker's TLS listener: the truststore verifies the server, and a
// keystore, if configured, is presented for ssl.client.auth.
// ssl.endpoint.identification.algorithm="" skips the host name check
// (the chain is still verified), as in Kafka; get must return Kafka's
// default "https" when the key is unset.
func ClientTLSConfig(get SSLGetter, serverName string) (*tls.Config, error) {
	cfg := &tls.Config{ServerName: serverName}
	if err := applyProtocols(cfg, get); err != nil {
		return nil, err
	}
	pool, err := loadTruststore(get)
	if err != nil {
		return nil, err
	}
	cfg.RootCAs = pool
	cert, err := loadKeystore(get)
	if err != nil {
		return nil, err
	}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	if strings.TrimSpace(get("ssl.endpoint.identification.algorithm")) == "" {
		cfg.InsecureSkipVerify = true // the chain is verified below
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			opts := x509.VerifyOptions{Roots: pool, Intermediates: x509.NewCertPool()}
			for _, c := range cs.PeerCertificates[1:] {
				opts.Intermediates.AddCert(c)
			}
			_, err := cs.PeerCertificates[0].Verify(opts)
			return err
		}
	}
	return cfg, nil
}

// applyProtocols sets the TLS versions from ssl.enabled.protocols: TLS 1.2
// and 1.3 only; older versions are refused with an error.
func applyProtocols(cfg *tls.Config, get SSLGetter) error {
	raw := get("ssl.enabled.protocols")
	if strings.TrimSpace(raw) == "" {
		raw = "TLSv1.2,TLSv1.3"
	}
	var lo, hi uint16
	for _, p := range strings.Split(raw, ",") {
		var v uint16
		switch strings.TrimSpace(p) {
		case "TLSv1.2":
			v = tls.VersionTLS12
		case "TLSv1.3":
			v = tls.VersionTLS13
		case "":
			continue
		default:
			return fmt.Errorf("ssl.enabled.protocols: %q is not supported; Fjord accepts TLSv1.2 and TLSv1.3", strings.TrimSpace(p))
		}
		if lo == 0 || v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	cfg.MinVersion, cfg.MaxVersion = lo, hi
	if suites := strings.TrimSpace(get("ssl.cipher.suites")); suites != "" {
		// Java and Go both use the IANA names (TLS_ECDHE_RSA_WITH_...).
		byName := map[string]uint16{}
		for _, s := range tls.CipherSuites() {
			byName[s.Name] = s.ID
		}
		for _, n := range strings.Split(suites, ",") {
			id, ok := byName[strings.TrimSpace(n)]
			if !ok {
				return fmt.Errorf("ssl.cipher.suites: %q is not a supported cipher suite", strings.TrimSpace(n))
			}
			cfg.CipherSuites = append(cfg.CipherSuites, id)
		}
	}
	return nil
}

// loadKeystore returns the listener's certificate and key, or nil when
// no keystore is configured; internal/keystore reads PEM, JKS and PKCS12
// stores for the broker and Fjord's clients alike.
func loadKeystore(get SSLGetter) (*tls.Certificate, error) {
	return keystore.Certificate(keystore.Getter(get))
}

// loadTruststore returns the trusted CAs, or nil when none are configured.
func loadTruststore(get SSLGetter) (*x509.CertPool, error) {
	return keystore.Pool(keystore.Getter(get))
}
