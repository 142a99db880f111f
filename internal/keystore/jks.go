package keystore

import (
	"bytes"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/asn1"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"unicode/utf16"
)

// Java KeyStore (JKS) files, the type Kafka's ssl.truststore.type and
// ssl.keystore.type default to. The format is Sun's: a magic number, a
// list of entries (trusted certificates, or private keys protected with
// Sun's KeyProtector and their certificate chains) and a SHA-1 digest
// keyed by the store password. readJKS turns a store into PEM so the
// rest of the TLS set-up reads one format.

const (
	jksMagic        = 0xFEEDFEED
	jksPrivateKey   = 1
	jksTrustedCert  = 2
	jksDigestLength = sha1.Size
)

// Sun's KeyProtector algorithm (1.3.6.1.4.1.42.2.17.1.1).
var oidSunKeyProtector = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 42, 2, 17, 1, 1}

// readJKS returns the store's certificates and private keys as PEM. With
// a store password the store's digest is checked (Kafka reads stores
// with ssl.*.password too); keyPassword decrypts private keys (Kafka's
// ssl.key.password, defaulting to the store password).
func readJKS(b []byte, storePassword, keyPassword string) ([]byte, error) {
	if len(b) < 12+jksDigestLength || binary.BigEndian.Uint32(b) != jksMagic {
		return nil, errors.New("not a JKS key store")
	}
	if storePassword != "" {
		body := b[:len(b)-jksDigestLength]
		h := sha1.New()
		h.Write(javaPasswordBytes(storePassword))
		h.Write([]byte("Mighty Aphrodite"))
		h.Write(body)
		if subtle.ConstantTimeCompare(h.Sum(nil), b[len(b)-jksDigestLength:]) != 1 {
			return nil, errors.New("the JKS store's integrity check failed: wrong store password (ssl.*.password) or a damaged file")
		}
	}
	r := &jksReader{b: b[:len(b)-jksDigestLength], off: 4}
	version := r.u32()
	if version != 1 && version != 2 {
		return nil, fmt.Errorf("JKS version %d is not supported", version)
	}
	n := r.u32()
	var out bytes.Buffer
	for i := uint32(0); i < n && r.err == nil; i++ {
		tag := r.u32()
		r.utf() // alias
		r.bytes(8)
		switch tag {
		case jksTrustedCert:
			der := r.cert(version)
			if r.err == nil {
				pem.Encode(&out, &pem.Block{Type: "CERTIFICATE", Bytes: der})
			}
		case jksPrivateKey:
			protected := r.bytes(int(r.u32()))
			chain := int(r.u32())
			var certs [][]byte
			for j := 0; j < chain && r.err == nil; j++ {
				certs = append(certs, r.cert(version))
			}
			if r.err != nil {
				break
			}
			pw := keyPassword
			if pw == "" {
				pw = storePassword
			}
			if pw == "" {
				return nil, errors.New("the JKS key store holds a private key: set ssl.key.password or ssl.keystore.password to decrypt it")
			}
			key, err := jksRecoverKey(protected, pw)
			if err != nil {
				return nil, err
			}
			pem.Encode(&out, &pem.Block{Type: "PRIVATE KEY", Bytes: key})
			for _, c := range certs {
				pem.Encode(&out, &pem.Block{Type: "CERTIFICATE", Bytes: c})
			}
		default:
			return nil, fmt.Errorf("JKS entry type %d is not supported (secret key entries exist only in JCEKS stores)", tag)
		}
	}
	if r.err != nil {
		return nil, fmt.Errorf("JKS store is truncated or damaged: %v", r.err)
	}
	return out.Bytes(), nil
}

// jksRecoverKey undoes Sun's KeyProtector: the protected key is a
// PKCS#8 EncryptedPrivateKeyInfo whose data is salt, the key XORed with
// a SHA-1 keystream of password and salt, and a check digest.
func jksRecoverKey(info []byte, password string) ([]byte, error) {
	var epki struct {
		Algo struct {
			Algorithm  asn1.ObjectIdentifier
			Parameters asn1.RawValue `asn1:"optional"`
		}
		Data []byte
	}
	if _, err := asn1.Unmarshal(info, &epki); err != nil {
		return nil, fmt.Errorf("JKS private key entry: %v", err)
	}
	if !epki.Algo.Algorithm.Equal(oidSunKeyProtector) {
		return nil, fmt.Errorf("JKS private key protected with %v; only Sun's KeyProtector is supported", epki.Algo.Algorithm)
	}
	d := epki.Data
	if len(d) < 2*sha1.Size {
		return nil, errors.New("JKS private key entry is too short")
	}
	salt, enc, check := d[:sha1.Size], d[sha1.Size:len(d)-sha1.Size], d[len(d)-sha1.Size:]
	pw := javaPasswordBytes(password)
	key := make([]byte, len(enc))
	digest := salt
	for i := 0; i < len(enc); i += sha1.Size {
		h := sha1.New()
		h.Write(pw)
		h.Write(digest)
		digest = h.Sum(nil)
		for j := 0; j < sha1.Size && i+j < len(enc); j++ {
			key[i+j] = enc[i+j] ^ digest[j]
		}
	}
	h := sha1.New()
	h.Write(pw)
	h.Write(key)
	if subtle.ConstantTimeCompare(h.Sum(nil), check) != 1 {
		return nil, errors.New("cannot decrypt the JKS private key: wrong ssl.key.password (or ssl.keystore.password)")
	}
	return key, nil
}

// javaPasswordBytes is a password as Java hands it to these digests:
// each UTF-16 code unit as two big-endian bytes.
func javaPasswordBytes(p string) []byte {
	units := utf16.Encode([]rune(p))
	out := make([]byte, 2*len(units))
	for i, u := range units {
		binary.BigEndian.PutUint16(out[2*i:], u)
	}
	return out
}

type jksReader struct {
	b   []byte
	off int
	err error
}

func (r *jksReader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || r.off+n > len(r.b) {
		r.err = errors.New("unexpected end of data")
		return nil
	}
	out := r.b[r.off : r.off+n]
	r.off += n
	return out
}

func (r *jksReader) u32() uint32 {
	b := r.bytes(4)
	if b == nil {
		return 0
	}
	return binary.BigEndian.Uint32(b)
}

func (r *jksReader) utf() string {
	b := r.bytes(2)
	if b == nil {
		return ""
	}
	return string(r.bytes(int(binary.BigEndian.Uint16(b))))
}

// cert reads a certificate: its type ("X.509", version 2 only) and DER.
func (r *jksReader) cert(version uint32) []byte {
	if version == 2 {
		if t := r.utf(); r.err == nil && t != "X.509" {
			r.err = fmt.Errorf("certificate type %q is not supported", t)
			return nil
		}
	}
	return r.bytes(int(r.u32()))
}
