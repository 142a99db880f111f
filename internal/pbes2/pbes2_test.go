package pbes2

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"strings"
	"testing"
)

// encrypt is the inverse of Decrypt for PBKDF2-HMAC-SHA256 and
// AES-256-CBC, what OpenSSL 3 writes by default.
func encrypt(t *testing.T, plain []byte, password string, prf asn1.ObjectIdentifier) (pkix.AlgorithmIdentifier, []byte) {
	t.Helper()
	salt, iv, iter := []byte("saltsalt"), bytes.Repeat([]byte{7}, aes.BlockSize), 2048
	key, err := pbkdf2.Key(sha256.New, password, salt, iter, 32)
	if err != nil {
		t.Fatal(err)
	}
	n := aes.BlockSize - len(plain)%aes.BlockSize
	padded := append(append([]byte{}, plain...), bytes.Repeat([]byte{byte(n)}, n)...)
	block, _ := aes.NewCipher(key)
	out := make([]byte, len(padded))
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(out, padded)
	marshal := func(v any) asn1.RawValue {
		b, err := asn1.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return asn1.RawValue{FullBytes: b}
	}
	kdf := kdfParams{Salt: salt, Iterations: iter, PRF: pkix.AlgorithmIdentifier{Algorithm: prf, Parameters: asn1.NullRawValue}}
	p := params{
		KDF:    pkix.AlgorithmIdentifier{Algorithm: oidPBKDF2, Parameters: marshal(kdf)},
		Scheme: pkix.AlgorithmIdentifier{Algorithm: oidAES256CBC, Parameters: marshal(iv)},
	}
	return pkix.AlgorithmIdentifier{Algorithm: OID, Parameters: marshal(p)}, out
}

func TestDecrypt(t *testing.T) {
	msg := []byte("a private key, sixteen+ bytes long")
	alg, data := encrypt(t, msg, "s3cret", oidHMACSHA256)
	got, err := Decrypt(alg, data, "s3cret")
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("Decrypt = %q, %v", got, err)
	}
	if _, err := Decrypt(alg, data, "wrong"); !errors.Is(err, ErrWrongPassword) {
		// One wrong password in 256 pads validly by chance; this one does not.
		t.Errorf("wrong password: %v", err)
	}
	if _, err := Decrypt(alg, data[:len(data)-1], "s3cret"); err == nil || !strings.Contains(err.Error(), "whole AES blocks") {
		t.Errorf("truncated: %v", err)
	}
	if _, err := Decrypt(pkix.AlgorithmIdentifier{Algorithm: oidPBKDF2}, data, "s3cret"); err == nil || !strings.Contains(err.Error(), "PBES2 is") {
		t.Errorf("not PBES2: %v", err)
	}
	md5 := asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 5}
	alg, data = encrypt(t, msg, "s3cret", md5)
	if _, err := Decrypt(alg, data, "s3cret"); err == nil || !strings.Contains(err.Error(), "PBKDF2 function") {
		t.Errorf("HMAC-MD5: %v", err)
	}
}
