package clientsec

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"hash"
)

// PKCS#12 stores as keytool (Java 12 and later) and OpenSSL 3 write
// them: certificates and shrouded keys encrypted with PBES2 (PBKDF2 and
// AES-CBC). The legacy PKCS#12 PBE algorithms (3DES, RC2) are not read;
// the error says how to re-export. The store's MAC is not checked: a
// wrong password shows as a decryption failure instead.

var (
	oidData               = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 1}
	oidEncryptedData      = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 6}
	oidKeyBag             = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 10, 1, 1}
	oidShroudedKeyBag     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 10, 1, 2}
	oidCertBag            = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 10, 1, 3}
	oidX509Certificate    = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 22, 1}
	oidPBES2              = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2             = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidHMACSHA1           = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}
	oidHMACSHA256         = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidHMACSHA512         = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 11}
	oidAES128CBC          = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 2}
	oidAES192CBC          = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 22}
	oidAES256CBC          = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
	errLegacyPKCS12Cipher = errors.New("the PKCS12 store uses a legacy cipher (3DES/RC2); re-export it with AES, e.g. openssl pkcs12 -export ... -keypbe AES-256-CBC -certpbe AES-256-CBC, or keytool -importkeystore with Java 12 or later")
)

type p12ContentInfo struct {
	ContentType asn1.ObjectIdentifier
	Content     asn1.RawValue `asn1:"tag:0,explicit,optional"`
}

type p12PFX struct {
	Version  int
	AuthSafe p12ContentInfo
	MacData  asn1.RawValue `asn1:"optional"`
}

type p12AlgorithmIdentifier struct {
	Algorithm  asn1.ObjectIdentifier
	Parameters asn1.RawValue `asn1:"optional"`
}

type p12EncryptedData struct {
	Version              int
	EncryptedContentInfo struct {
		ContentType                asn1.ObjectIdentifier
		ContentEncryptionAlgorithm p12AlgorithmIdentifier
		EncryptedContent           []byte `asn1:"tag:0,optional"`
	}
}

type p12SafeBag struct {
	ID         asn1.ObjectIdentifier
	Value      asn1.RawValue `asn1:"tag:0,explicit"`
	Attributes asn1.RawValue `asn1:"optional"`
}

type p12CertBag struct {
	ID   asn1.ObjectIdentifier
	Data []byte `asn1:"tag:0,explicit"`
}

type p12EncryptedPrivateKeyInfo struct {
	Algorithm p12AlgorithmIdentifier
	Data      []byte
}

// readPKCS12 returns a PKCS#12 store's certificates and private keys as
// PEM.
func readPKCS12(b []byte, password string) ([]byte, error) {
	var pfx p12PFX
	if rest, err := asn1.Unmarshal(b, &pfx); err != nil || len(rest) != 0 || pfx.Version != 3 {
		return nil, errors.New("not a PKCS12 store")
	}
	if !pfx.AuthSafe.ContentType.Equal(oidData) {
		return nil, errors.New("PKCS12 stores protected with public keys are not supported")
	}
	var authSafe []byte
	if _, err := asn1.Unmarshal(pfx.AuthSafe.Content.Bytes, &authSafe); err != nil {
		return nil, fmt.Errorf("PKCS12: %v", err)
	}
	var contents []p12ContentInfo
	if _, err := asn1.Unmarshal(authSafe, &contents); err != nil {
		return nil, fmt.Errorf("PKCS12: %v", err)
	}
	var out bytes.Buffer
	for _, ci := range contents {
		var safe []byte
		switch {
		case ci.ContentType.Equal(oidData):
			if _, err := asn1.Unmarshal(ci.Content.Bytes, &safe); err != nil {
				return nil, fmt.Errorf("PKCS12: %v", err)
			}
		case ci.ContentType.Equal(oidEncryptedData):
			var ed p12EncryptedData
			if _, err := asn1.Unmarshal(ci.Content.Bytes, &ed); err != nil {
				return nil, fmt.Errorf("PKCS12: %v", err)
			}
			var err error
			safe, err = pbes2Decrypt(ed.EncryptedContentInfo.ContentEncryptionAlgorithm, ed.EncryptedContentInfo.EncryptedContent, password)
			if err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("PKCS12 content type %v is not supported", ci.ContentType)
		}
		var bags []p12SafeBag
		if _, err := asn1.Unmarshal(safe, &bags); err != nil {
			return nil, fmt.Errorf("PKCS12 safe contents: %v", err)
		}
		for _, bag := range bags {
			switch {
			case bag.ID.Equal(oidCertBag):
				var cb p12CertBag
				if _, err := asn1.Unmarshal(bag.Value.Bytes, &cb); err != nil {
					return nil, fmt.Errorf("PKCS12 certificate bag: %v", err)
				}
				if cb.ID.Equal(oidX509Certificate) {
					pem.Encode(&out, &pem.Block{Type: "CERTIFICATE", Bytes: cb.Data})
				}
			case bag.ID.Equal(oidShroudedKeyBag):
				var epki p12EncryptedPrivateKeyInfo
				if _, err := asn1.Unmarshal(bag.Value.Bytes, &epki); err != nil {
					return nil, fmt.Errorf("PKCS12 key bag: %v", err)
				}
				key, err := pbes2Decrypt(epki.Algorithm, epki.Data, password)
				if err != nil {
					return nil, err
				}
				pem.Encode(&out, &pem.Block{Type: "PRIVATE KEY", Bytes: key})
			case bag.ID.Equal(oidKeyBag):
				pem.Encode(&out, &pem.Block{Type: "PRIVATE KEY", Bytes: bag.Value.Bytes})
			}
		}
	}
	return out.Bytes(), nil
}

// pbes2Decrypt decrypts PBES2 (RFC 8018) data: PBKDF2 with an HMAC, then
// AES-CBC with PKCS#7 padding.
func pbes2Decrypt(alg p12AlgorithmIdentifier, data []byte, password string) ([]byte, error) {
	if !alg.Algorithm.Equal(oidPBES2) {
		return nil, errLegacyPKCS12Cipher
	}
	var params struct {
		KDF    p12AlgorithmIdentifier
		Scheme p12AlgorithmIdentifier
	}
	if _, err := asn1.Unmarshal(alg.Parameters.FullBytes, &params); err != nil {
		return nil, fmt.Errorf("PKCS12 PBES2 parameters: %v", err)
	}
	if !params.KDF.Algorithm.Equal(oidPBKDF2) {
		return nil, fmt.Errorf("PKCS12 key derivation %v is not supported (PBKDF2 is)", params.KDF.Algorithm)
	}
	var kdf struct {
		Salt       []byte
		Iterations int
		KeyLength  int                    `asn1:"optional"`
		PRF        p12AlgorithmIdentifier `asn1:"optional"`
	}
	if _, err := asn1.Unmarshal(params.KDF.Parameters.FullBytes, &kdf); err != nil {
		return nil, fmt.Errorf("PKCS12 PBKDF2 parameters: %v", err)
	}
	var prf func() hash.Hash
	switch {
	case kdf.PRF.Algorithm == nil || kdf.PRF.Algorithm.Equal(oidHMACSHA1):
		prf = sha1.New
	case kdf.PRF.Algorithm.Equal(oidHMACSHA256):
		prf = sha256.New
	case kdf.PRF.Algorithm.Equal(oidHMACSHA512):
		prf = sha512.New
	default:
		return nil, fmt.Errorf("PKCS12 PBKDF2 function %v is not supported", kdf.PRF.Algorithm)
	}
	var keyLen int
	switch {
	case params.Scheme.Algorithm.Equal(oidAES128CBC):
		keyLen = 16
	case params.Scheme.Algorithm.Equal(oidAES192CBC):
		keyLen = 24
	case params.Scheme.Algorithm.Equal(oidAES256CBC):
		keyLen = 32
	default:
		return nil, fmt.Errorf("PKCS12 cipher %v is not supported (AES-CBC is)", params.Scheme.Algorithm)
	}
	var iv []byte
	if _, err := asn1.Unmarshal(params.Scheme.Parameters.FullBytes, &iv); err != nil || len(iv) != aes.BlockSize {
		return nil, errors.New("PKCS12 AES parameters: bad IV")
	}
	key, err := pbkdf2.Key(prf, password, kdf.Salt, kdf.Iterations, keyLen)
	if err != nil {
		return nil, fmt.Errorf("PKCS12 key derivation: %v", err)
	}
	if len(data) == 0 || len(data)%aes.BlockSize != 0 {
		return nil, errors.New("PKCS12 encrypted data has a bad length")
	}
	block, _ := aes.NewCipher(key)
	plain := make([]byte, len(data))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(plain, data)
	n := int(plain[len(plain)-1])
	if n == 0 || n > aes.BlockSize || !hmac.Equal(bytes.Repeat([]byte{byte(n)}, n), plain[len(plain)-n:]) {
		return nil, errors.New("cannot decrypt the PKCS12 store: wrong password (ssl.truststore.password / ssl.keystore.password)")
	}
	return plain[:len(plain)-n], nil
}
