package protocol

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"strconv"
)

// PlainUsers are the PLAIN mechanism's credentials: user → password, from
// the listener's JAAS line (user_<name>="<password>" options of Kafka's
// PlainLoginModule).
type PlainUsers map[string]string

// plainServer is SASL/PLAIN (RFC 4616) on the broker's side: one client
// message "authzid NUL authcid NUL passwd", checked against the users.
type plainServer struct{ users PlainUsers }

// errAuthentication is a failure whose message Kafka passes to the client
// as it is (SaslAuthenticationException); other errors are reported with
// Kafka's generic "invalid credentials" message.
type errAuthentication struct{ msg string }

func (e *errAuthentication) Error() string { return e.msg }

func authFailed(msg string) error { return &errAuthentication{msg} }

// parsePlain splits a PLAIN client message into its three fields.
func parsePlain(msg []byte) (authzid, user, pass string, err error) {
	parts := bytes.Split(msg, []byte{0})
	if len(parts) != 3 {
		return "", "", "", errors.New("Invalid SASL/PLAIN response: expected 3 tokens, got " + strconv.Itoa(len(parts)))
	}
	authzid, user, pass = string(parts[0]), string(parts[1]), string(parts[2])
	switch {
	case user == "":
		return "", "", "", authFailed("Authentication failed: username not specified")
	case pass == "":
		return "", "", "", authFailed("Authentication failed: password not specified")
	case authzid != "" && authzid != user:
		return "", "", "", authFailed("Authentication failed: Client requested an authorization id that is different from username")
	}
	return authzid, user, pass, nil
}

func (p *plainServer) next(msg []byte) (resp []byte, user string, done bool, err error) {
	_, user, pass, err := parsePlain(msg)
	if err != nil {
		return nil, "", false, err
	}
	want, ok := p.users[user]
	// Compare even for an unknown user so timing does not tell which
	// user names exist.
	if subtle.ConstantTimeCompare([]byte(want), []byte(pass)) != 1 || !ok {
		return nil, "", false, authFailed("Authentication failed: Invalid username or password")
	}
	return []byte{}, user, true, nil
}
