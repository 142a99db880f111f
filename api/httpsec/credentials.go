package httpsec

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"os"
	"strings"

	"github.com/fjordhq/fjord/broker/config"
)

// Role is what an authenticated caller may do.
type Role string

const (
	// RoleAdmin may call every endpoint.
	RoleAdmin Role = "admin"
	// RoleReadOnly may only GET and HEAD.
	RoleReadOnly Role = "read-only"
)

func parseRole(s string) (Role, bool) {
	switch Role(strings.ToLower(strings.TrimSpace(s))) {
	case RoleAdmin:
		return RoleAdmin, true
	case RoleReadOnly, "readonly", "read_only":
		return RoleReadOnly, true
	}
	return "", false
}

// Principal is an authenticated caller.
type Principal struct {
	Name string
	Role Role
	// Scheme is "basic" or "bearer".
	Scheme string
}

// secret is a password or token kept only as its SHA-256, compared in
// constant time; the text itself is dropped once loaded, so no dump,
// log line or error can show it.
type secret [sha256.Size]byte

func hashSecret(s string) secret { return sha256.Sum256([]byte(s)) }

func (s secret) matches(candidate string) bool {
	c := hashSecret(candidate)
	return subtle.ConstantTimeCompare(s[:], c[:]) == 1
}

type user struct {
	password secret
	role     Role
}

type token struct {
	name string
	role Role
}

// loadCredentials reads a credentials file as Kafka's
// PropertyFileLoginModule does (java.util.Properties: "user: password"
// or "user=password"). Errors name the file and line, never a value.
func loadCredentials(path string) (map[string]user, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("REST credentials file: %w", err)
	}
	props, err := config.ParseProperties(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("REST credentials file %s is not a properties file of user: password lines (%v)", path, redactErr(err))
	}
	if len(props) == 0 {
		return nil, fmt.Errorf("REST credentials file %s has no users: add \"user: password\" lines (Kafka would let everyone in; Fjord refuses)", path)
	}
	users := map[string]user{}
	for name, pw := range props {
		if pw == "" {
			return nil, fmt.Errorf("REST credentials file %s: user %q has an empty password", path, name)
		}
		users[name] = user{password: hashSecret(pw), role: RoleAdmin}
	}
	return users, nil
}

// redactErr keeps only the line number of a properties parse error (the
// message could quote a password).
func redactErr(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, ":"); i > 0 && strings.HasPrefix(msg, "properties line") {
		return msg[:i]
	}
	return "unreadable"
}

// loadTokens reads a tokens file: one "<token> <role> <name>" a line,
// '#' comments and blank lines ignored.
func loadTokens(path string) (map[secret]token, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("REST tokens file: %w", err)
	}
	defer f.Close()
	out := map[secret]token{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 3 {
			return nil, fmt.Errorf("REST tokens file %s line %d: want \"<token> <role> <name>\" (role admin or read-only)", path, n)
		}
		role, ok := parseRole(fields[1])
		if !ok {
			return nil, fmt.Errorf("REST tokens file %s line %d: role %q is not admin or read-only", path, n, fields[1])
		}
		if len(fields[0]) < 16 {
			return nil, fmt.Errorf("REST tokens file %s line %d: the token of %s is shorter than 16 characters; use a long random one (openssl rand -hex 32)", path, n, fields[2])
		}
		out[hashSecret(fields[0])] = token{name: fields[2], role: role}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("REST tokens file %s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("REST tokens file %s has no tokens: add \"<token> <role> <name>\" lines", path)
	}
	return out, nil
}
