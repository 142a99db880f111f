package httpsec

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
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
		return nil, errors.New("an https listener needs a certificate: set listeners.https.ssl.keystore.location to a PEM file with the private key and certificate chain (ssl.keystore.type=PEM), or ssl.keystore.key and ssl.keystore.certificate.chain")
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
		return nil, fmt.Errorf("ssl.client.auth=%s needs a truststore with the CA that signs client certificates: set listeners.https.ssl.truststore.location (PEM)", auth)
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

// checkPEMType refuses keystore and truststore types other than PEM.
func checkPEMType(key, typ string) error {
	switch strings.ToUpper(strings.TrimSpace(typ)) {
	case "", "PEM":
		return nil
	case "JKS", "PKCS12":
		return fmt.Errorf("%s=%s is not supported yet: convert the store to PEM (keytool -importkeystore -deststoretype PKCS12, then openssl pkcs12 -nodes) and set %s=PEM", key, typ, key)
	default:
		return fmt.Errorf("Invalid value %s for configuration %s: Fjord reads PEM stores", typ, key)
	}
}

// keystore loads the certificate chain and private key (nil, nil when
// no keystore is configured).
func keystore(ssl map[string]string) (*tls.Certificate, error) {
	if err := checkPEMType("ssl.keystore.type", ssl["ssl.keystore.type"]); err != nil {
		return nil, err
	}
	var pemData []byte
	switch {
	case strings.TrimSpace(ssl["ssl.keystore.location"]) != "":
		path := strings.TrimSpace(ssl["ssl.keystore.location"])
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("ssl.keystore.location: %w", err)
		}
		pemData = b
	case strings.TrimSpace(ssl["ssl.keystore.key"]) != "" || strings.TrimSpace(ssl["ssl.keystore.certificate.chain"]) != "":
		pemData = []byte(ssl["ssl.keystore.certificate.chain"] + "\n" + ssl["ssl.keystore.key"])
	default:
		return nil, nil
	}
	var certPEM, keyPEM []byte
	for rest := pemData; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		switch {
		case b.Type == "CERTIFICATE":
			certPEM = append(certPEM, pem.EncodeToMemory(b)...)
		case strings.HasSuffix(b.Type, "PRIVATE KEY"):
			if b.Type == "ENCRYPTED PRIVATE KEY" || x509.IsEncryptedPEMBlock(b) { //nolint:staticcheck // only to name the problem
				return nil, errors.New("the keystore's private key is encrypted (ssl.key.password); Fjord reads unencrypted PEM keys only: decrypt it with openssl pkey and protect the file's permissions instead")
			}
			keyPEM = pem.EncodeToMemory(b)
		}
	}
	if certPEM == nil || keyPEM == nil {
		return nil, errors.New("the keystore must hold a PEM certificate chain and a PEM private key (ssl.keystore.location, or ssl.keystore.certificate.chain and ssl.keystore.key)")
	}
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("keystore: %w", err)
	}
	return &c, nil
}

// truststore loads the trusted CA certificates (nil when none is set).
func truststore(ssl map[string]string) (*x509.CertPool, error) {
	if err := checkPEMType("ssl.truststore.type", ssl["ssl.truststore.type"]); err != nil {
		return nil, err
	}
	var data []byte
	switch {
	case strings.TrimSpace(ssl["ssl.truststore.location"]) != "":
		b, err := os.ReadFile(strings.TrimSpace(ssl["ssl.truststore.location"]))
		if err != nil {
			return nil, fmt.Errorf("ssl.truststore.location: %w", err)
		}
		data = b
	case strings.TrimSpace(ssl["ssl.truststore.certificates"]) != "":
		data = []byte(ssl["ssl.truststore.certificates"])
	default:
		return nil, nil
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, errors.New("the truststore holds no PEM certificate (ssl.truststore.location or ssl.truststore.certificates)")
	}
	return pool, nil
}
