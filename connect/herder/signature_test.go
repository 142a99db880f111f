package herder

import (
	"crypto/hmac"
	"crypto/sha512"
	"encoding/base64"
	"net/http"
	"testing"

	"github.com/fjordhq/fjord/connect/storage"
)

func TestSignatureAlgorithms(t *testing.T) {
	body := []byte(`[{"k":"v"}]`)
	for _, alg := range []string{"HmacMD5", "HmacSHA1", "HmacSHA224", "HmacSHA256", "HmacSHA384", "HmacSHA512"} {
		raw, err := generateSessionKey(alg, 0)
		if err != nil {
			t.Fatal(err)
		}
		if want := defaultKeyBits(alg) / 8; len(raw) != want {
			t.Errorf("%s: default key of %d bytes, want %d", alg, len(raw), want)
		}
		key := &storage.SessionKey{Key: base64.StdEncoding.EncodeToString(raw), Algorithm: alg}
		h := http.Header{}
		if err := signWith(h, key, alg, body); err != nil {
			t.Fatal(err)
		}
		if h.Get(signatureAlgorithmHeader) != alg {
			t.Errorf("%s: algorithm header %q", alg, h.Get(signatureAlgorithmHeader))
		}
		sig, _ := base64.StdEncoding.DecodeString(h.Get(signatureHeader))
		if !validSignature(raw, alg, body, sig) {
			t.Errorf("%s: own signature not valid", alg)
		}
		if validSignature(raw, alg, append(body, ' '), sig) {
			t.Errorf("%s: signature valid for another body", alg)
		}
		other, _ := generateSessionKey(alg, 256)
		if validSignature(other, alg, body, sig) {
			t.Errorf("%s: signature valid under another key", alg)
		}
	}
	// Kafka's HmacSHA512 is the standard HMAC (what a Java worker sends).
	raw := []byte("0123456789abcdef0123456789abcdef")
	mac := hmac.New(sha512.New, raw)
	mac.Write(body)
	if !validSignature(raw, "HmacSHA512", body, mac.Sum(nil)) {
		t.Errorf("a standard HMAC-SHA512 is not accepted")
	}
	if k, _ := generateSessionKey("HmacSHA256", 128); len(k) != 16 {
		t.Errorf("inter.worker.key.size=128 gave %d bytes", len(k))
	}
	if _, err := generateSessionKey("AES", 0); err == nil {
		t.Errorf("AES accepted as an HMAC key generator")
	}
	if err := signWith(http.Header{}, &storage.SessionKey{Key: "AAAA"}, "HmacSHA3", body); err == nil {
		t.Errorf("unknown signature algorithm accepted")
	}
}
