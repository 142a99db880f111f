package herder

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"fmt"
	"hash"
	"net/http"
	"strings"

	"github.com/fjordhq/fjord/connect/storage"
)

// macAlgorithms are the javax.crypto Mac names Kafka's
// inter.worker.signature.algorithm and inter.worker.verification.algorithms
// accept, and the HMAC hashes they stand for. The key generation
// algorithm (inter.worker.key.generation.algorithm) uses the same names
// (Java's KeyGenerator), with the hash's block size in bits as the
// default key size, as Java's HMAC key generators have.
var macAlgorithms = map[string]func() hash.Hash{
	"HmacMD5":    md5.New,
	"HmacSHA1":   sha1.New,
	"HmacSHA224": sha256.New224,
	"HmacSHA256": sha256.New,
	"HmacSHA384": sha512.New384,
	"HmacSHA512": sha512.New,
}

// MacAlgorithm reports whether name is an HMAC algorithm workers can
// sign and verify internal requests with (Kafka's names, e.g. HmacSHA256).
func MacAlgorithm(name string) bool {
	_, ok := macAlgorithms[name]
	return ok
}

// MacAlgorithms lists the supported names, for error messages.
func MacAlgorithms() string {
	return "HmacMD5, HmacSHA1, HmacSHA224, HmacSHA256, HmacSHA384, HmacSHA512"
}

// defaultKeyBits is Java's default key size of an HMAC KeyGenerator.
func defaultKeyBits(alg string) int {
	switch alg {
	case "HmacSHA384", "HmacSHA512":
		return 1024
	}
	return 512
}

// generateSessionKey makes a random key of bits bits (0: the algorithm's
// default) for the key generation algorithm alg.
func generateSessionKey(alg string, bits int) ([]byte, error) {
	if !MacAlgorithm(alg) {
		return nil, fmt.Errorf("unsupported inter.worker.key.generation.algorithm %q (supported: %s)", alg, MacAlgorithms())
	}
	if bits <= 0 {
		bits = defaultKeyBits(alg)
	}
	raw := make([]byte, (bits+7)/8)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// signWith is Kafka's InternalRequestSignature.addToRequest: the body's
// HMAC under the session key, base64, with the algorithm's name.
func signWith(h http.Header, key *storage.SessionKey, alg string, body []byte) error {
	newHash, ok := macAlgorithms[alg]
	if !ok {
		return fmt.Errorf("unsupported inter.worker.signature.algorithm %q (supported: %s)", alg, MacAlgorithms())
	}
	raw, err := base64.StdEncoding.DecodeString(key.Key)
	if err != nil {
		return fmt.Errorf("session key is not base64: %w", err)
	}
	mac := hmac.New(newHash, raw)
	mac.Write(body)
	h.Set(signatureHeader, base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	h.Set(signatureAlgorithmHeader, alg)
	return nil
}

// validSignature is InternalRequestSignature.isValid in constant time.
func validSignature(key []byte, alg string, body, sig []byte) bool {
	mac := hmac.New(macAlgorithms[alg], key)
	mac.Write(body)
	return hmac.Equal(mac.Sum(nil), sig)
}

// signingDefaults fills in Kafka's defaults for the inter.worker.* keys.
func (c *DistributedConfig) signingDefaults() {
	if c.KeyGenerationAlgorithm == "" {
		c.KeyGenerationAlgorithm = signatureAlgorithm
	}
	if c.SignatureAlgorithm == "" {
		c.SignatureAlgorithm = signatureAlgorithm
	}
	if len(c.VerificationAlgorithms) == 0 {
		c.VerificationAlgorithms = []string{signatureAlgorithm}
	}
}

func verificationList(algs []string) string { return "[" + strings.Join(algs, ", ") + "]" }
