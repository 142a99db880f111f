package httpsec

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strings"
)

// Fjord's own authentication keys (see the package comment).
const (
	CredentialsFileKey = "fjord.rest.auth.credentials.file"
	TokensFileKey      = "fjord.rest.auth.tokens.file"
	ReadOnlyUsersKey   = "fjord.rest.auth.read.only.users"
	// JAASConfigKey names the JAAS file as a worker property (Kafka reads
	// it from the JVM system property of the same name).
	JAASConfigKey = "java.security.auth.login.config"
)

// Realm is the basic authentication realm browsers show.
const Realm = "Fjord"

// Auth authenticates callers of a listener and checks their role. A nil
// *Auth lets every request through.
type Auth struct {
	users  map[string]user
	tokens map[secret]token
	log    *slog.Logger
}

// LoadAuth reads the authentication settings of worker properties:
// Fjord's fjord.rest.auth.* keys and Kafka's BasicAuthSecurityRestExtension
// with its JAAS file (the worker property java.security.auth.login.config,
// else -Djava.security.auth.login.config in getenv("KAFKA_OPTS")). It
// returns nil, nil when none is set: the listener is open, as Kafka's is
// without a REST extension.
func LoadAuth(props map[string]string, getenv func(string) string, log *slog.Logger) (*Auth, error) {
	if log == nil {
		log = slog.Default()
	}
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	a := &Auth{log: log.With("component", "rest-auth")}
	credFile := strings.TrimSpace(props[CredentialsFileKey])
	if slices.Contains(splitList(props["rest.extension.classes"]), BasicAuthExtension) {
		jaas := strings.TrimSpace(props[JAASConfigKey])
		if jaas == "" {
			jaas = jaasPathFromOpts(getenv("KAFKA_OPTS"))
		}
		if jaas == "" {
			return nil, fmt.Errorf("rest.extension.classes names %s but no JAAS file is given: set %s in the worker properties (or -D%s=... in KAFKA_OPTS), or use %s", BasicAuthExtension, JAASConfigKey, JAASConfigKey, CredentialsFileKey)
		}
		f, err := jaasCredentialsFile(jaas)
		if err != nil {
			return nil, err
		}
		if credFile != "" && credFile != f {
			return nil, fmt.Errorf("both %s (%s) and the JAAS file's credentials file (%s) are set; keep one", CredentialsFileKey, credFile, f)
		}
		credFile = f
	} else if other := splitList(props["rest.extension.classes"]); len(other) > 0 {
		return nil, fmt.Errorf("rest.extension.classes=%s: Fjord runs no Java REST extensions; only %s is understood", strings.Join(other, ","), BasicAuthExtension)
	}
	if credFile != "" {
		users, err := loadCredentials(credFile)
		if err != nil {
			return nil, err
		}
		a.users = users
	}
	for _, name := range splitList(props[ReadOnlyUsersKey]) {
		u, ok := a.users[name]
		if !ok {
			return nil, fmt.Errorf("%s names %q, who is not in the credentials file", ReadOnlyUsersKey, name)
		}
		u.role = RoleReadOnly
		a.users[name] = u
	}
	if f := strings.TrimSpace(props[TokensFileKey]); f != "" {
		tokens, err := loadTokens(f)
		if err != nil {
			return nil, err
		}
		a.tokens = tokens
	}
	if a.users == nil && a.tokens == nil {
		return nil, nil
	}
	return a, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Authenticate checks the request's Authorization header: Basic against
// the credentials file, Bearer against the tokens file.
func (a *Auth) Authenticate(r *http.Request) (*Principal, bool) {
	scheme, cred, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok {
		return nil, false
	}
	cred = strings.TrimSpace(cred)
	switch strings.ToLower(scheme) {
	case "basic":
		if a.users == nil {
			return nil, false
		}
		raw, err := base64.StdEncoding.DecodeString(cred)
		if err != nil {
			return nil, false
		}
		name, pw, ok := strings.Cut(string(raw), ":")
		if !ok || name == "" {
			return nil, false
		}
		u, known := a.users[name]
		// Compare even for unknown users so timing does not tell which
		// names exist.
		if !u.password.matches(pw) || !known {
			a.log.Debug("REST request failed authentication", "user", name, "remote", r.RemoteAddr)
			return nil, false
		}
		return &Principal{Name: name, Role: u.role, Scheme: "basic"}, true
	case "bearer":
		if a.tokens == nil {
			return nil, false
		}
		t, ok := a.tokens[hashSecret(cred)]
		if !ok {
			a.log.Debug("REST request failed authentication: unknown bearer token", "remote", r.RemoteAddr)
			return nil, false
		}
		return &Principal{Name: t.name, Role: t.role, Scheme: "bearer"}, true
	}
	return nil, false
}

// Kafka's JaasBasicAuthFilter lets these internal requests through: they
// carry the session key's signature instead, checked by the herder.
var internalRequests = []struct {
	method string
	path   *regexp.Regexp
}{
	{http.MethodPost, regexp.MustCompile(`^/?connectors/([^/]+)/tasks/?$`)},
	{http.MethodPut, regexp.MustCompile(`^/?connectors/[^/]+/fence/?$`)},
}

// IsInternalRequest reports a worker-to-worker request exempt from user
// authentication.
func IsInternalRequest(r *http.Request) bool {
	p := r.URL.EscapedPath()
	for _, m := range internalRequests {
		if r.Method == m.method && m.path.MatchString(p) {
			return true
		}
	}
	return false
}

// IsOpen reports the probe endpoints served to anyone: GET or HEAD
// /healthz and /readyz.
func IsOpen(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
		(r.URL.Path == "/healthz" || r.URL.Path == "/readyz")
}

// Allowed reports whether a role may make a request with this method.
func Allowed(role Role, method string) bool {
	switch role {
	case RoleAdmin:
		return true
	case RoleReadOnly:
		return method == http.MethodGet || method == http.MethodHead
	}
	return false
}

type principalKey struct{}

// PrincipalFrom returns the caller Wrap authenticated (nil for open and
// internal requests, and without authentication).
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}

// Wrap authenticates every request to h except the open probes and the
// signed internal requests, then checks the caller's role. A nil Auth
// returns h.
func (a *Auth) Wrap(h http.Handler) http.Handler {
	if a == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if IsOpen(r) || IsInternalRequest(r) {
			h.ServeHTTP(w, r)
			return
		}
		p, ok := a.Authenticate(r)
		if !ok {
			w.Header().Add("WWW-Authenticate", `Basic realm="`+Realm+`", charset="UTF-8"`)
			if a.tokens != nil {
				w.Header().Add("WWW-Authenticate", `Bearer realm="`+Realm+`"`)
			}
			// Kafka's JaasBasicAuthFilter's words, in Connect's error body.
			writeError(w, http.StatusUnauthorized, "User cannot access the resource.")
			return
		}
		if !Allowed(p.Role, r.Method) {
			a.log.Info("REST request refused: read-only caller", "user", p.Name, "method", r.Method, "path", r.URL.Path)
			writeError(w, http.StatusForbidden, fmt.Sprintf("User %s has the %s role and may not %s %s; it needs the %s role", p.Name, p.Role, r.Method, r.URL.Path, RoleAdmin))
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			// An audit line per change: who asked for what (never a body).
			a.log.Info("REST change requested", "user", p.Name, "auth", p.Scheme, "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
		}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	})
}

// writeError writes Kafka Connect's error body.
func writeError(w http.ResponseWriter, code int, msg string) {
	b, _ := json.Marshal(struct {
		Code    int    `json:"error_code"`
		Message string `json:"message"`
	}{code, msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(b)
}
