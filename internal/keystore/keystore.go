// Package keystore reads Kafka's TLS key and trust stores — the
// ssl.keystore.* and ssl.truststore.* settings — for both sides of a
// connection: the broker's listeners (broker/protocol), Fjord's clients
// (internal/clientsec) and Connect's REST listener (api/httpsec). Stores are PEM (files or inline values),
// Java KeyStore (JKS, jks.go) or PKCS12 (pkcs12.go) files; encrypted
// PKCS#8 keys are decrypted with ssl.key.password (pkcs8.go).
//
// Everything is converted to PEM first, so one path builds the
// tls.Certificate and the x509.CertPool whatever the store's type.
package keystore

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Getter looks up one of Kafka's ssl.* keys ("" when unset).
type Getter func(key string) string

// storeType checks ssl.keystore.type / ssl.truststore.type: JKS (Kafka's
// default, also when unset), PKCS12 or PEM, in upper case.
func storeType(get Getter, key string) (string, error) {
	t := strings.ToUpper(strings.TrimSpace(get(key)))
	switch t {
	case "":
		return "JKS", nil
	case "JKS", "PKCS12", "PEM":
		return t, nil
	}
	return "", fmt.Errorf("%s=%s is not supported: use JKS (Kafka's default), PKCS12 or PEM; convert other stores with keytool -importkeystore -deststoretype PKCS12", key, strings.TrimSpace(get(key)))
}

// Certificate returns the key store's private key and certificate chain,
// or nil when no key store is configured: ssl.keystore.location (a PEM,
// JKS or PKCS12 file, opened with ssl.keystore.password; the key is
// decrypted with ssl.key.password, which defaults to the store password)
// or ssl.keystore.key with ssl.keystore.certificate.chain (PEM).
func Certificate(get Getter) (*tls.Certificate, error) {
	loc := strings.TrimSpace(get("ssl.keystore.location"))
	key, chain := strings.TrimSpace(get("ssl.keystore.key")), strings.TrimSpace(get("ssl.keystore.certificate.chain"))
	if loc == "" && key == "" && chain == "" {
		return nil, nil
	}
	typ, err := storeType(get, "ssl.keystore.type")
	if err != nil {
		return nil, err
	}
	var data []byte
	what := "ssl.keystore.key/ssl.keystore.certificate.chain"
	switch {
	case loc != "" && (key != "" || chain != ""):
		return nil, errors.New("set either ssl.keystore.location or ssl.keystore.key with ssl.keystore.certificate.chain, not both")
	case loc != "":
		data, err = Read("ssl.keystore", loc, typ, get("ssl.keystore.password"), get("ssl.key.password"))
		if err != nil {
			return nil, err
		}
		what = "ssl.keystore.location " + loc
	default:
		// Kafka takes inline keys with ssl.keystore.type=PEM only; an
		// unset type is read as PEM too, since nothing else can be inline.
		if strings.TrimSpace(get("ssl.keystore.type")) != "" && typ != "PEM" {
			return nil, fmt.Errorf("ssl.keystore.key can be given only with ssl.keystore.type=PEM (got %s)", typ)
		}
		if key == "" || chain == "" {
			return nil, errors.New("inline PEM keystores need both ssl.keystore.key and ssl.keystore.certificate.chain")
		}
		data = []byte(key + "\n" + chain)
	}
	return keyPair(data, get("ssl.key.password"), what)
}

// keyPair builds the certificate from PEM text holding one private key
// (plain, or encrypted PKCS#8 decrypted with keyPassword) and its chain.
func keyPair(data []byte, keyPassword, what string) (*tls.Certificate, error) {
	var certPEM, keyPEM []byte
	keys := 0
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
			keys++
			if keyPassword == "" {
				return nil, fmt.Errorf("%s: the private key is encrypted: set ssl.key.password", what)
			}
			der, err := decryptPKCS8(b.Bytes, keyPassword)
			if errors.Is(err, errNotPBES2) {
				return nil, fmt.Errorf("%s: %v; re-encrypt it with openssl pkcs8 -topk8 -v2 aes-256-cbc", what, err)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
			keyPEM = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
		case strings.HasSuffix(b.Type, "PRIVATE KEY"):
			keys++
			keyPEM = pem.EncodeToMemory(b)
		}
	}
	switch {
	case keys == 0:
		return nil, fmt.Errorf("%s holds no private key entry (is it a trust store?): a key store needs a private key and its certificate chain", what)
	case keys > 1:
		// Java's key manager would pick one by alias and key type; a
		// broker or client presents one certificate, so ask for one.
		return nil, fmt.Errorf("%s holds %d private keys: keep the one to present (keytool -delete -alias <name>)", what, keys)
	case certPEM == nil:
		return nil, fmt.Errorf("%s holds a private key but no certificate chain", what)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("%s: the certificate and key do not form a pair: %w", what, err)
	}
	return &cert, nil
}

// Pool returns the trust store's CA certificates, or nil when none is
// configured: ssl.truststore.location (a PEM, JKS or PKCS12 file; the
// password, ssl.truststore.password, may be left out for JKS as in Java)
// or ssl.truststore.certificates (PEM).
func Pool(get Getter) (*x509.CertPool, error) {
	loc, inline := strings.TrimSpace(get("ssl.truststore.location")), strings.TrimSpace(get("ssl.truststore.certificates"))
	if loc == "" && inline == "" {
		return nil, nil
	}
	typ, err := storeType(get, "ssl.truststore.type")
	if err != nil {
		return nil, err
	}
	data, what := []byte(inline), "ssl.truststore.certificates"
	switch {
	case loc != "" && inline != "":
		return nil, errors.New("set either ssl.truststore.location or ssl.truststore.certificates, not both")
	case loc != "":
		if data, err = Read("ssl.truststore", loc, typ, get("ssl.truststore.password"), ""); err != nil {
			return nil, err
		}
		what = "ssl.truststore.location " + loc
	case strings.TrimSpace(get("ssl.truststore.type")) != "" && typ != "PEM":
		return nil, fmt.Errorf("ssl.truststore.certificates needs ssl.truststore.type=PEM (got %s)", typ)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("%s holds no certificate: give the CA certificates (PEM -----BEGIN CERTIFICATE----- blocks, or a JKS or PKCS12 trust store)", what)
	}
	return pool, nil
}

// Read reads the store file loc as PEM text: PEM files as they are, JKS
// and PKCS12 stores converted. The file's content decides rather than
// ssl.*.type, as Java's keystore.type.compat does (a JKS-typed store
// opens a PKCS12 file and the other way round), since Kafka users often
// leave the type at its JKS default. key is "ssl.keystore" or
// "ssl.truststore" and typ the configured type, for messages.
func Read(key, loc, typ, storePassword, keyPassword string) ([]byte, error) {
	b, err := os.ReadFile(loc)
	if err != nil {
		return nil, fmt.Errorf("%s.location: %w", key, err)
	}
	if bytes.Contains(b, []byte("-----BEGIN ")) {
		return b, nil
	}
	if len(b) >= 4 && binary.BigEndian.Uint32(b) == jksMagic {
		out, err := readJKS(b, storePassword, keyPassword)
		if err != nil {
			return nil, fmt.Errorf("%s.location %s: %v", key, loc, err)
		}
		return out, nil
	}
	if len(b) > 0 && b[0] == 0x30 { // a DER SEQUENCE: PKCS12
		out, err := readPKCS12(b, storePassword, keyPassword)
		if err == nil {
			return out, nil
		}
		if !errors.Is(err, errNotPKCS12) {
			return nil, fmt.Errorf("%s.location %s: %v", key, loc, err)
		}
	}
	return nil, fmt.Errorf("%s.location %s is not a PEM, JKS or PKCS12 store (type %s); convert it, e.g. keytool -importkeystore -srckeystore %s -destkeystore store.p12 -deststoretype PKCS12", key, loc, typ, loc)
}
