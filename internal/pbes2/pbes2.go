// Package pbes2 decrypts PBES2 (RFC 8018) data with PBKDF2 and AES-CBC,
// the password-based encryption of encrypted PKCS#8 keys (`openssl pkcs8
// -topk8`, Kafka's ssl.key.password) and of modern PKCS#12 stores
// (keytool from Java 12, OpenSSL 3). Go's standard library reads neither.
package pbes2

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"hash"
)

// OID identifies PBES2; callers check it first to word their own error
// for the older schemes they do not read.
var OID = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}

var (
	oidPBKDF2     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidHMACSHA1   = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}
	oidHMACSHA256 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidHMACSHA512 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 11}
	oidAES128CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 2}
	oidAES192CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 22}
	oidAES256CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
)

// ErrWrongPassword is a decryption whose padding does not check out,
// which is what a wrong password almost always gives. Callers say which
// password setting to fix.
var ErrWrongPassword = errors.New("cannot decrypt: wrong password")

type params struct {
	KDF    pkix.AlgorithmIdentifier
	Scheme pkix.AlgorithmIdentifier
}

type kdfParams struct {
	Salt       []byte
	Iterations int
	KeyLength  int                      `asn1:"optional"`
	PRF        pkix.AlgorithmIdentifier `asn1:"optional"`
}

// Decrypt decrypts data encrypted with the PBES2 algorithm alg: a key
// from PBKDF2 with HMAC-SHA1, -SHA256 or -SHA512, then AES-CBC with
// PKCS#7 padding. It returns the plaintext without padding.
func Decrypt(alg pkix.AlgorithmIdentifier, data []byte, password string) ([]byte, error) {
	if !alg.Algorithm.Equal(OID) {
		return nil, fmt.Errorf("encryption %v is not supported (PBES2 is)", alg.Algorithm)
	}
	var p params
	if _, err := asn1.Unmarshal(alg.Parameters.FullBytes, &p); err != nil {
		return nil, fmt.Errorf("PBES2 parameters: %v", err)
	}
	if !p.KDF.Algorithm.Equal(oidPBKDF2) {
		return nil, fmt.Errorf("key derivation %v is not supported (PBKDF2 is)", p.KDF.Algorithm)
	}
	var kdf kdfParams
	if _, err := asn1.Unmarshal(p.KDF.Parameters.FullBytes, &kdf); err != nil {
		return nil, fmt.Errorf("PBKDF2 parameters: %v", err)
	}
	var prf func() hash.Hash
	switch {
	case len(kdf.PRF.Algorithm) == 0, kdf.PRF.Algorithm.Equal(oidHMACSHA1):
		prf = sha1.New // RFC 8018's default
	case kdf.PRF.Algorithm.Equal(oidHMACSHA256):
		prf = sha256.New
	case kdf.PRF.Algorithm.Equal(oidHMACSHA512):
		prf = sha512.New
	default:
		return nil, fmt.Errorf("PBKDF2 function %v is not supported (HMAC-SHA1, -SHA256 and -SHA512 are)", kdf.PRF.Algorithm)
	}
	var keyLen int
	switch {
	case p.Scheme.Algorithm.Equal(oidAES128CBC):
		keyLen = 16
	case p.Scheme.Algorithm.Equal(oidAES192CBC):
		keyLen = 24
	case p.Scheme.Algorithm.Equal(oidAES256CBC):
		keyLen = 32
	default:
		return nil, fmt.Errorf("cipher %v is not supported (AES-CBC is)", p.Scheme.Algorithm)
	}
	var iv []byte
	if _, err := asn1.Unmarshal(p.Scheme.Parameters.FullBytes, &iv); err != nil || len(iv) != aes.BlockSize {
		return nil, errors.New("AES-CBC parameters: bad IV")
	}
	key, err := pbkdf2.Key(prf, password, kdf.Salt, kdf.Iterations, keyLen)
	if err != nil {
		return nil, fmt.Errorf("key derivation: %v", err)
	}
	if len(data) == 0 || len(data)%aes.BlockSize != 0 {
		return nil, errors.New("encrypted data is not whole AES blocks")
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	plain := make([]byte, len(data))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(plain, data)
	n := int(plain[len(plain)-1])
	if n == 0 || n > aes.BlockSize || !hmac.Equal(bytes.Repeat([]byte{byte(n)}, n), plain[len(plain)-n:]) {
		return nil, ErrWrongPassword
	}
	return plain[:len(plain)-n], nil
}
