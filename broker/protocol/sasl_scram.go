package protocol

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"

	"github.com/fjordhq/fjord/broker/auth"
)

// scramServer is SCRAM-SHA-256/512 (RFC 5802, RFC 7677) on the broker's
// side, as Kafka's ScramSaslServer runs it: client-first → server-first
// (nonce, salt, iterations), client-final (proof) → server-final
// (signature). Credentials come from the store; passwords are never seen.
type scramServer struct {
	mech  auth.ScramMechanism
	store auth.ScramStore

	step            int
	user            string
	cred            auth.ScramCredential
	gs2Header       string
	clientFirstBare string
	serverFirst     string
	nonce           string
}

// scramClientFirst is the parsed client-first message.
type scramClientFirst struct {
	gs2Header string // "n,," or "n,a=alice,"
	authzid   string
	user      string
	nonce     string
	bare      string
	tokenAuth bool
}

// parseScramClientFirst parses "gs2-header client-first-message-bare".
// Channel binding is not supported (Kafka's neither): "p=" is refused.
func parseScramClientFirst(msg string) (scramClientFirst, error) {
	var cf scramClientFirst
	// gs2-header = cbind-flag "," [ authzid ] ","
	i := strings.IndexByte(msg, ',')
	if i < 0 {
		return cf, errors.New("invalid SCRAM client first message: no GS2 header")
	}
	switch flag := msg[:i]; {
	case flag == "n", flag == "y":
	case strings.HasPrefix(flag, "p="):
		return cf, errors.New("invalid SCRAM client first message: channel binding is not supported")
	default:
		return cf, fmt.Errorf("invalid SCRAM client first message: bad channel binding flag %q", flag)
	}
	rest := msg[i+1:]
	j := strings.IndexByte(rest, ',')
	if j < 0 {
		return cf, errors.New("invalid SCRAM client first message: GS2 header not terminated")
	}
	if az := rest[:j]; az != "" {
		if !strings.HasPrefix(az, "a=") {
			return cf, fmt.Errorf("invalid SCRAM client first message: bad authzid %q", az)
		}
		name, err := scramUnescape(az[2:])
		if err != nil {
			return cf, err
		}
		cf.authzid = name
	}
	cf.gs2Header = msg[:i+1+j+1]
	cf.bare = rest[j+1:]
	attrs := strings.Split(cf.bare, ",")
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "n=") || !strings.HasPrefix(attrs[1], "r=") {
		return cf, errors.New("invalid SCRAM client first message: expected n=<user>,r=<nonce>")
	}
	name, err := scramUnescape(attrs[0][2:])
	if err != nil {
		return cf, err
	}
	cf.user, cf.nonce = name, attrs[1][2:]
	if cf.user == "" || cf.nonce == "" {
		return cf, errors.New("invalid SCRAM client first message: empty user name or nonce")
	}
	for _, ext := range attrs[2:] {
		// Kafka's extensions (KIP-84): tokenauth marks a delegation
		// token, which Fjord does not issue.
		if k, v, _ := strings.Cut(ext, "="); k == "tokenauth" && strings.EqualFold(v, "true") {
			cf.tokenAuth = true
		}
	}
	return cf, nil
}

// scramUnescape decodes a saslname: "=2C" is ',' and "=3D" is '='.
func scramUnescape(s string) (string, error) {
	if !strings.Contains(s, "=") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			b.WriteByte(s[i])
			continue
		}
		switch {
		case strings.HasPrefix(s[i:], "=2C"):
			b.WriteByte(',')
		case strings.HasPrefix(s[i:], "=3D"):
			b.WriteByte('=')
		default:
			return "", fmt.Errorf("invalid SCRAM user name %q: '=' must be escaped as =3D", s)
		}
		i += 2
	}
	return b.String(), nil
}

// scramClientFinal is the parsed client-final message.
type scramClientFinal struct {
	channelBinding string // base64 of the GS2 header
	nonce          string
	proof          []byte
	withoutProof   string
}

func parseScramClientFinal(msg string) (scramClientFinal, error) {
	var cf scramClientFinal
	i := strings.LastIndex(msg, ",p=")
	if i < 0 {
		return cf, errors.New("invalid SCRAM client final message: no proof")
	}
	cf.withoutProof = msg[:i]
	proof, err := base64.StdEncoding.DecodeString(msg[i+3:])
	if err != nil {
		return cf, fmt.Errorf("invalid SCRAM client final message: proof: %w", err)
	}
	cf.proof = proof
	attrs := strings.Split(cf.withoutProof, ",")
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "c=") || !strings.HasPrefix(attrs[1], "r=") {
		return cf, errors.New("invalid SCRAM client final message: expected c=<binding>,r=<nonce>,p=<proof>")
	}
	cf.channelBinding, cf.nonce = attrs[0][2:], attrs[1][2:]
	return cf, nil
}

func scramHash(m auth.ScramMechanism) func() hash.Hash {
	if m == auth.ScramSHA512 {
		return sha512.New
	}
	return sha256.New
}

func hmacSum(h func() hash.Hash, key []byte, msg string) []byte {
	mac := hmac.New(h, key)
	mac.Write([]byte(msg))
	return mac.Sum(nil)
}

// NewScramCredential derives what the broker stores for a password (Kafka's
// ScramFormatter.generateCredential): SaltedPassword = PBKDF2(password,
// salt, iterations), StoredKey = H(HMAC(SaltedPassword, "Client Key")),
// ServerKey = HMAC(SaltedPassword, "Server Key"). A nil salt gets 32
// random bytes.
func NewScramCredential(mech auth.ScramMechanism, password string, salt []byte, iterations int32) (auth.ScramCredential, error) {
	if mech != auth.ScramSHA256 && mech != auth.ScramSHA512 {
		return auth.ScramCredential{}, fmt.Errorf("unknown SCRAM mechanism %d: use SCRAM-SHA-256 or SCRAM-SHA-512", mech)
	}
	if iterations < 4096 {
		// Kafka's minimum (clients refuse fewer).
		return auth.ScramCredential{}, fmt.Errorf("SCRAM iterations %d is below the minimum 4096", iterations)
	}
	if salt == nil {
		salt = make([]byte, 32)
		if _, err := rand.Read(salt); err != nil {
			return auth.ScramCredential{}, err
		}
	}
	h := scramHash(mech)
	salted, err := pbkdf2.Key(h, password, salt, int(iterations), h().Size())
	if err != nil {
		return auth.ScramCredential{}, err
	}
	clientKey := hmacSum(h, salted, "Client Key")
	stored := h()
	stored.Write(clientKey)
	return auth.ScramCredential{
		Mechanism:  mech,
		Salt:       salt,
		StoredKey:  stored.Sum(nil),
		ServerKey:  hmacSum(h, salted, "Server Key"),
		Iterations: iterations,
	}, nil
}

func (s *scramServer) next(msg []byte) (resp []byte, user string, done bool, err error) {
	switch s.step {
	case 0:
		cf, err := parseScramClientFirst(string(msg))
		if err != nil {
			return nil, "", false, err
		}
		if cf.tokenAuth {
			return nil, "", false, errors.New("delegation tokens are not supported")
		}
		if cf.authzid != "" && cf.authzid != cf.user {
			return nil, "", false, authFailed("Authentication failed: Client requested an authorization id that is different from username")
		}
		cred, ok := s.store.ScramCredential(cf.user, s.mech)
		if !ok {
			return nil, "", false, errors.New("Authentication failed: Invalid user credentials")
		}
		var snonce [24]byte
		if _, err := rand.Read(snonce[:]); err != nil {
			return nil, "", false, err
		}
		s.user, s.cred, s.gs2Header, s.clientFirstBare = cf.user, cred, cf.gs2Header, cf.bare
		// Alphanumeric, like Kafka's.
		s.nonce = cf.nonce + hex.EncodeToString(snonce[:])
		s.serverFirst = "r=" + s.nonce + ",s=" + base64.StdEncoding.EncodeToString(cred.Salt) + ",i=" + strconv.Itoa(int(cred.Iterations))
		s.step = 1
		return []byte(s.serverFirst), "", false, nil
	case 1:
		s.step = 2
		cf, err := parseScramClientFinal(string(msg))
		if err != nil {
			return nil, "", false, err
		}
		// Kafka checks only that the nonce ends with the one it sent:
		// librdkafka sends its own nonce followed by the server's whole
		// nonce (which already starts with the client's).
		if !strings.HasSuffix(cf.nonce, s.nonce) {
			return nil, "", false, errors.New("Invalid client nonce in the final client message.")
		}
		if cf.channelBinding != base64.StdEncoding.EncodeToString([]byte(s.gs2Header)) {
			return nil, "", false, errors.New("invalid SCRAM client final message: channel binding does not match the GS2 header")
		}
		h := scramHash(s.mech)
		authMsg := s.clientFirstBare + "," + s.serverFirst + "," + cf.withoutProof
		sig := hmacSum(h, s.cred.StoredKey, authMsg)
		if len(cf.proof) != len(sig) {
			return nil, "", false, errors.New("Invalid client credentials")
		}
		clientKey := make([]byte, len(sig))
		for i := range sig {
			clientKey[i] = cf.proof[i] ^ sig[i]
		}
		hk := h()
		hk.Write(clientKey)
		if subtle.ConstantTimeCompare(hk.Sum(nil), s.cred.StoredKey) != 1 {
			return nil, "", false, errors.New("Invalid client credentials")
		}
		serverSig := hmacSum(h, s.cred.ServerKey, authMsg)
		return []byte("v=" + base64.StdEncoding.EncodeToString(serverSig)), s.user, true, nil
	}
	return nil, "", false, errors.New("unexpected SCRAM message after the exchange completed")
}
