package clientsec

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/fjordhq/fjord/internal/keystore"
)

// Keys are the client keys Options reads; the rest of ssl.* and sasl.*
// (Kerberos, OAuth, JSSE tuning) have no franz-go counterpart.
var Keys = map[string]bool{
	"security.protocol": true, "sasl.mechanism": true, "sasl.jaas.config": true,
	"ssl.truststore.location": true, "ssl.truststore.type": true, "ssl.truststore.certificates": true,
	"ssl.truststore.password": true, "ssl.keystore.location": true, "ssl.keystore.type": true,
	"ssl.keystore.key": true, "ssl.keystore.certificate.chain": true, "ssl.keystore.password": true,
	"ssl.key.password": true, "ssl.endpoint.identification.algorithm": true,
	"ssl.enabled.protocols": true, "ssl.protocol": true,
}

// Options maps Kafka's client security settings to franz-go options:
// security.protocol PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL; TLS
// trust and client certificates from PEM (files or inline), JKS or
// PKCS12 stores (ssl.truststore.*, ssl.keystore.*, ssl.key.password); host name
// verification unless ssl.endpoint.identification.algorithm is empty;
// SASL PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 with the credentials of
// sasl.jaas.config. It returns every problem found; none quotes a
// password or key.
func Options(props map[string]string) ([]kgo.Opt, []string) {
	var problems []string
	protocol := strings.ToUpper(strings.TrimSpace(props["security.protocol"]))
	useTLS, useSASL := false, false
	switch protocol {
	case "", "PLAINTEXT":
	case "SSL":
		useTLS = true
	case "SASL_PLAINTEXT":
		useSASL = true
	case "SASL_SSL":
		useTLS, useSASL = true, true
	default:
		return nil, []string{fmt.Sprintf("Invalid value %s for configuration security.protocol: String must be one of: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL", props["security.protocol"])}
	}
	var opts []kgo.Opt
	if useTLS {
		cfg, err := clientTLSConfig(props)
		if err != nil {
			problems = append(problems, err.Error())
		} else {
			opts = append(opts, kgo.DialTLSConfig(cfg))
		}
	} else if hasAny(props, "ssl.truststore.location", "ssl.truststore.certificates", "ssl.keystore.location", "ssl.keystore.key") {
		// Kafka ignores ssl.* on a PLAINTEXT connection too; say so, since
		// it usually means security.protocol was forgotten.
		problems = append(problems, fmt.Sprintf("ssl.* settings are given but security.protocol is %s, so no TLS would be used; set security.protocol=SSL or SASL_SSL", orDefault(protocol, "PLAINTEXT")))
	}
	if useSASL {
		m, err := clientSASL(props)
		if err != nil {
			problems = append(problems, err.Error())
		} else {
			opts = append(opts, kgo.SASL(m))
		}
	}
	return opts, problems
}

func hasAny(props map[string]string, keys ...string) bool {
	for _, k := range keys {
		if strings.TrimSpace(props[k]) != "" {
			return true
		}
	}
	return false
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

// clientTLSConfig builds the TLS settings of an SSL or SASL_SSL client.
// franz-go sets ServerName to each broker's host when dialing.
func clientTLSConfig(props map[string]string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if v := props["ssl.enabled.protocols"]; v != "" && !strings.Contains(v, "TLSv1.2") && strings.Contains(v, "TLSv1.3") {
		cfg.MinVersion = tls.VersionTLS13
	}
	// Trust: the system's roots unless a trust store is given. Both
	// stores are read as the broker reads its own (internal/keystore).
	get := func(k string) string { return props[k] }
	pool, err := keystore.Pool(get)
	if err != nil {
		return nil, err
	}
	cfg.RootCAs = pool
	// Client certificate (mutual TLS).
	cert, err := keystore.Certificate(get)
	if err != nil {
		return nil, err
	}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	// Kafka verifies the broker's host name unless
	// ssl.endpoint.identification.algorithm is set empty; the chain is
	// still verified then.
	if alg, set := props["ssl.endpoint.identification.algorithm"]; set && strings.TrimSpace(alg) == "" {
		roots := cfg.RootCAs
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("broker presented no certificate")
			}
			inter := x509.NewCertPool()
			for _, c := range cs.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
			return err
		}
	} else if set && !strings.EqualFold(strings.TrimSpace(alg), "https") {
		return nil, fmt.Errorf("Invalid value %s for configuration ssl.endpoint.identification.algorithm: use https (verify the broker's host name) or an empty value (do not)", alg)
	}
	return cfg, nil
}

// clientSASL returns the mechanism of sasl.mechanism with the
// credentials of sasl.jaas.config.
func clientSASL(props map[string]string) (sasl.Mechanism, error) {
	mech := strings.ToUpper(strings.TrimSpace(props["sasl.mechanism"]))
	if mech == "" {
		mech = "GSSAPI" // Kafka's default
	}
	jaas := strings.TrimSpace(props["sasl.jaas.config"])
	if jaas == "" {
		return nil, fmt.Errorf("sasl.jaas.config is required for SASL mechanism %s, e.g. sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"alice\" password=\"...\";", mech)
	}
	lm, err := ParseJAAS(jaas)
	if err != nil {
		return nil, err
	}
	user, pass := lm.Options["username"], lm.Options["password"]
	switch mech {
	case "PLAIN":
		if !strings.HasSuffix(lm.Class, "PlainLoginModule") {
			return nil, fmt.Errorf("sasl.mechanism PLAIN needs org.apache.kafka.common.security.plain.PlainLoginModule in sasl.jaas.config (got %s)", lm.Class)
		}
		if user == "" {
			return nil, errors.New("sasl.jaas.config: PlainLoginModule needs username=\"...\" and password=\"...\"")
		}
		return plain.Auth{User: user, Pass: pass}.AsMechanism(), nil
	case "SCRAM-SHA-256", "SCRAM-SHA-512":
		if !strings.HasSuffix(lm.Class, "ScramLoginModule") {
			return nil, fmt.Errorf("sasl.mechanism %s needs org.apache.kafka.common.security.scram.ScramLoginModule in sasl.jaas.config (got %s)", mech, lm.Class)
		}
		if user == "" {
			return nil, errors.New("sasl.jaas.config: ScramLoginModule needs username=\"...\" and password=\"...\"")
		}
		a := scram.Auth{User: user, Pass: pass, IsToken: strings.EqualFold(lm.Options["tokenauth"], "true")}
		if mech == "SCRAM-SHA-256" {
			return a.AsSha256Mechanism(), nil
		}
		return a.AsSha512Mechanism(), nil
	case "GSSAPI", "OAUTHBEARER":
		return nil, fmt.Errorf("sasl.mechanism %s is not supported by Fjord's Kafka client; use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (set sasl.mechanism)", mech)
	}
	return nil, fmt.Errorf("Invalid value %s for configuration sasl.mechanism: use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", props["sasl.mechanism"])
}
