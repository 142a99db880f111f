package protocol

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"

	"github.com/fjordhq/fjord/internal/pbes2"
)

// Encrypted PKCS#8 keys ("ENCRYPTED PRIVATE KEY", what `openssl pkcs8
// -topk8` and Java tools write; Kafka decrypts them with ssl.key.password).
// Go's standard library reads only unencrypted PKCS#8; internal/pbes2
// decrypts PBES2 with PBKDF2 and AES-CBC, the scheme OpenSSL 1.1+ uses by
// default.

type encryptedPrivateKeyInfo struct {
	Algo pkix.AlgorithmIdentifier
	Data []byte
}

var errWrongKeyPassword = errors.New("cannot decrypt the private key: wrong ssl.key.password?")

// decryptPKCS8 returns the private key of an encrypted PKCS#8 DER block.
func decryptPKCS8(der []byte, password string) (any, error) {
	var info encryptedPrivateKeyInfo
	if _, err := asn1.Unmarshal(der, &info); err != nil {
		return nil, fmt.Errorf("encrypted private key: %w", err)
	}
	if !info.Algo.Algorithm.Equal(pbes2.OID) {
		return nil, fmt.Errorf("encrypted private key uses %v; only PBES2 (openssl pkcs8 -topk8 -v2 aes-256-cbc) is supported", info.Algo.Algorithm)
	}
	plain, err := pbes2.Decrypt(info.Algo, info.Data, password)
	switch {
	case errors.Is(err, pbes2.ErrWrongPassword):
		return nil, errWrongKeyPassword
	case err != nil:
		return nil, fmt.Errorf("encrypted private key: %w", err)
	}
	k, err := x509.ParsePKCS8PrivateKey(plain)
	if err != nil {
		return nil, errWrongKeyPassword
	}
	return k, nil
}
