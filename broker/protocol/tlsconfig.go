package protocol

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
)

// SSLGetter looks up an ssl.* key for one listener: the
// listener.name.<listener>.ssl.* override if set, else the broker-wide
// key ("" when neither is set).
type SSLGetter func(key string) string

// ServerTLSConfig builds a TLS listener's configuration from Kafka's ssl.*
// keys. Keystores and truststores must be PEM (ssl.keystore.type=PEM and
// ssl.truststore.type=PEM): a file (ssl.keystore.location holding the
// private key and the certificate chain; ssl.truststore.location holding
// CA certificates) or inline values (ssl.keystore.key with
// ssl.keystore.certificate.chain; ssl.truststore.certificates).
func ServerTLSConfig(get SSLGetter) (*tls.Config, error) {
	cert, err := loadKeystore(get)
	if err != nil {
		return nil, err
	}
	if cert == nil {
		return nil, errors.New("a TLS listener needs a certificate: set ssl.keystore.type=PEM and ssl.keystore.location (a PEM file with the private key and certificate chain), or ssl.keystore.key and ssl.keystore.certificate.chain")
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
			return nil, fmt.Errorf("ssl.client.auth=%s needs a truststore to verify client certificates: set ssl.truststore.type=PEM and ssl.truststore.location or ssl.truststore.certificates", ca)
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

func storeType(get SSLGetter, key string) (string, error) {
	t := strings.ToUpper(strings.TrimSpace(get(key)))
	switch t {
	case "PEM":
		return t, nil
	case "", "JKS", "PKCS12":
		if t == "" {
			t = "JKS (Kafka's default)"
		}
		return "", fmt.Errorf("%s=%s is not supported: Fjord reads PEM stores; convert the store to PEM (e.g. openssl pkcs12 -in store.p12 -nodes) and set %s=PEM", key, t, key)
	}
	return "", fmt.Errorf("%s=%q: use PEM", key, t)
}

// loadKeystore returns the listener's certificate and key, or nil when
// no keystore is configured.
func loadKeystore(get SSLGetter) (*tls.Certificate, error) {
	loc, key, chain := get("ssl.keystore.location"), get("ssl.keystore.key"), get("ssl.keystore.certificate.chain")
	if loc == "" && key == "" && chain == "" {
		return nil, nil
	}
	if _, err := storeType(get, "ssl.keystore.type"); err != nil {
		return nil, err
	}
	var data []byte
	what := "ssl.keystore.key/ssl.keystore.certificate.chain"
	switch {
	case loc != "" && (key != "" || chain != ""):
		return nil, errors.New("set either ssl.keystore.location or ssl.keystore.key with ssl.keystore.certificate.chain, not both")
	case loc != "":
		b, err := os.ReadFile(loc)
		if err != nil {
			return nil, fmt.Errorf("ssl.keystore.location: %w", err)
		}
		data, what = b, "ssl.keystore.location "+loc
	default:
		if key == "" || chain == "" {
			return nil, errors.New("inline PEM keystores need both ssl.keystore.key and ssl.keystore.certificate.chain")
		}
		data = []byte(key + "\n" + chain)
	}
	var certPEM, keyPEM []byte
	var decrypted any
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		switch {
		case b.Type == "CERTIFICATE":
			certPEM = append(certPEM, pem.EncodeToMemory(b)...)
		case b.Headers["Proc-Type"] != "":
			return nil, fmt.Errorf("%s: legacy encrypted PEM keys are not supported: convert with openssl pkcs8 -topk8 -v2 aes-256-cbc and set ssl.key.password", what)
		case b.Type == "ENCRYPTED PRIVATE KEY":
			pw := get("ssl.key.password")
			if pw == "" {
				return nil, fmt.Errorf("%s: the private key is encrypted: set ssl.key.password", what)
			}
			k, err := decryptPKCS8(b.Bytes, pw)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
			decrypted = k
		case strings.HasSuffix(b.Type, "PRIVATE KEY"):
			keyPEM = pem.EncodeToMemory(b)
		}
	}
	if decrypted != nil {
		der, err := x509.MarshalPKCS8PrivateKey(decrypted)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		keyPEM = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	}
	if certPEM == nil || keyPEM == nil {
		return nil, fmt.Errorf("%s must hold a PEM private key and certificate chain", what)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return &cert, nil
}

// loadTruststore returns the trusted CAs, or nil when none are configured.
func loadTruststore(get SSLGetter) (*x509.CertPool, error) {
	loc, inline := get("ssl.truststore.location"), get("ssl.truststore.certificates")
	if loc == "" && inline == "" {
		return nil, nil
	}
	if _, err := storeType(get, "ssl.truststore.type"); err != nil {
		return nil, err
	}
	data, what := []byte(inline), "ssl.truststore.certificates"
	if loc != "" {
		b, err := os.ReadFile(loc)
		if err != nil {
			return nil, fmt.Errorf("ssl.truststore.location: %w", err)
		}
		data, what = b, "ssl.truststore.location "+loc
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("%s holds no PEM certificates", what)
	}
	return pool, nil
}
