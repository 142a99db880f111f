package keystore

import (
	"bytes"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"

	"github.com/fjordhq/fjord/internal/pbes2"
)

// PKCS#12 stores as keytool (Java 12 and later) and OpenSSL 3 write
// them: certificates and shrouded keys encrypted with PBES2 (PBKDF2 and
// AES-CBC, decrypted by internal/pbes2). The legacy PKCS#12 PBE algorithms (3DES, RC2) are not read;
// the error says how to re-export. The store's MAC is not checked: a
// wrong password shows as a decryption failure instead.

var (
	oidData               = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 1}
	oidEncryptedData      = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 6}
	oidKeyBag             = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 10, 1, 1}
	oidShroudedKeyBag     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 10, 1, 2}
	oidCertBag            = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 10, 1, 3}
	oidX509Certificate    = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 22, 1}
	errNotPKCS12          = errors.New("not a PKCS12 store")
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

// readPKCS12 returns a PKCS#12 store's certificates and private keys as
// PEM. Certificates are encrypted with the store password; keys with
// keyPassword (Kafka's ssl.key.password) when it is set and that works,
// else with the store password, as keytool writes them.
func readPKCS12(b []byte, password, keyPassword string) ([]byte, error) {
	var pfx p12PFX
	if rest, err := asn1.Unmarshal(b, &pfx); err != nil || len(rest) != 0 || pfx.Version != 3 {
		return nil, errNotPKCS12
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
				key, err := decryptKeyBag(bag.Value.Bytes, password, keyPassword)
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

// decryptKeyBag decrypts a shrouded key bag (an encrypted PKCS#8 key)
// with keyPassword, else the store password.
func decryptKeyBag(der []byte, password, keyPassword string) ([]byte, error) {
	tries := []string{password}
	if keyPassword != "" && keyPassword != password {
		tries = []string{keyPassword, password}
	}
	var key []byte
	var err error
	for _, pw := range tries {
		if key, err = decryptPKCS8(der, pw); err == nil {
			return key, nil
		}
		if errors.Is(err, errNotPBES2) {
			return nil, errLegacyPKCS12Cipher
		}
	}
	if errors.Is(err, errWrongKeyPassword) {
		return nil, errors.New("cannot decrypt the PKCS12 store's private key: wrong password (ssl.keystore.password / ssl.key.password)")
	}
	return nil, fmt.Errorf("PKCS12 key bag: %v", err)
}

// pbes2Decrypt decrypts a PKCS12 bag or safe with internal/pbes2 (PBKDF2,
// then AES-CBC), in the PKCS12 store's words.
func pbes2Decrypt(alg p12AlgorithmIdentifier, data []byte, password string) ([]byte, error) {
	if !alg.Algorithm.Equal(pbes2.OID) {
		return nil, errLegacyPKCS12Cipher
	}
	plain, err := pbes2.Decrypt(pkix.AlgorithmIdentifier(alg), data, password)
	switch {
	case errors.Is(err, pbes2.ErrWrongPassword):
		return nil, errors.New("cannot decrypt the PKCS12 store: wrong password (ssl.truststore.password / ssl.keystore.password)")
	case err != nil:
		return nil, fmt.Errorf("PKCS12 %v", err)
	}
	return plain, nil
}
