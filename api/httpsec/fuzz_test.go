package httpsec

import (
	"encoding/base64"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzAuthorization: no Authorization header lets a caller in without
// the right secret, and none panics.
func FuzzAuthorization(f *testing.F) {
	creds, tokens, _ := authFiles(f)
	a, err := LoadAuth(map[string]string{CredentialsFileKey: creds, TokensFileKey: tokens}, nil, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(basic("admin", adminPW))
	f.Add("Bearer " + adminToken)
	f.Add("Basic ")
	f.Add("Basic Og==")
	f.Add(basic("admin", adminPW+"x"))
	f.Fuzz(func(t *testing.T, h string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Authorization", h)
		p, ok := a.Authenticate(r)
		if !ok {
			return
		}
		// Only the exact secrets authenticate (case-insensitive scheme,
		// surrounding blanks aside).
		scheme, cred, _ := strings.Cut(h, " ")
		cred = strings.TrimSpace(cred)
		switch {
		case strings.EqualFold(scheme, "bearer") && (cred == adminToken || cred == readToken):
		case strings.EqualFold(scheme, "basic") && decoded(cred) == p.Name+":"+map[string]string{"admin": adminPW, "reader": readerPW}[p.Name]:
		default:
			t.Fatalf("%q authenticated as %+v", h, p)
		}
	})
}

func decoded(s string) string {
	b, _ := base64.StdEncoding.DecodeString(s)
	return string(b)
}
