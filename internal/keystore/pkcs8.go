package keystore

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"

	"github.com/fjordhq/fjord/internal/pbes2"
)

// Encrypted PKCS#8 keys ("ENCRYPTED PRIVATE KEY", what `openssl pkcs8
// -topk8` writes, and the shrouded key bags of PKCS#12 stores; Kafka
// decrypts them with ssl.key.password). Go's standard library reads only
// unencrypted PKCS#8; internal/pbes2 decrypts PBES2 with PBKDF2 and
// AES-CBC, the scheme OpenSSL 1.1+ and keytool (Java 12+) use by default.

type encryptedPrivateKeyInfo struct {
	Algo pkix.AlgorithmIdentifier
	Data []byte
}

var (
	errWrongKeyPassword = errors.New("cannot decrypt the private key: wrong ssl.key.password?")
	// errNotPBES2 is a key encrypted with an older scheme (PKCS#5 v1.5,
	// PKCS#12 3DES/RC2); callers say how to re-encrypt it.
	errNotPBES2 = errors.New("the private key is encrypted with a legacy scheme")
)

// decryptPKCS8 returns the unencrypted PKCS#8 DER of an encrypted PKCS#8
// DER block, checked to parse as a private key.
func decryptPKCS8(der []byte, password string) ([]byte, error) {
	var info encryptedPrivateKeyInfo
	if _, err := asn1.Unmarshal(der, &info); err != nil {
		return nil, fmt.Errorf("encrypted private key: %w", err)
	}
	if !info.Algo.Algorithm.Equal(pbes2.OID) {
		return nil, fmt.Errorf("%w (%v); only PBES2 is supported", errNotPBES2, info.Algo.Algorithm)
	}
	plain, err := pbes2.Decrypt(info.Algo, info.Data, password)
	switch {
	case errors.Is(err, pbes2.ErrWrongPassword):
		return nil, errWrongKeyPassword
	case err != nil:
		return nil, fmt.Errorf("encrypted private key: %w", err)
	}
	// A wrong password sometimes passes the padding check; the key then
	// does not parse.
	if _, err := x509.ParsePKCS8PrivateKey(plain); err != nil {
		return nil, errWrongKeyPassword
	}
	return plain, nil
}
