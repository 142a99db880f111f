package protocol

import (
	"testing"

	"github.com/fjordhq/fjord/broker/auth"
)

// FuzzSASLPlain: any client message either fails or authenticates a
// configured user with that user's password.
func FuzzSASLPlain(f *testing.F) {
	for _, s := range []string{"\x00alice\x00pw", "alice\x00alice\x00pw", "\x00\x00", "x", "\x00alice\x00pw\x00", "bob\x00alice\x00pw", ""} {
		f.Add([]byte(s))
	}
	users := PlainUsers{"alice": "pw", "": "empty"}
	f.Fuzz(func(t *testing.T, msg []byte) {
		p := &plainServer{users: users}
		_, user, done, err := p.next(msg)
		if err == nil != done {
			t.Fatalf("done=%v with err=%v", done, err)
		}
		if done {
			_, u, pass, perr := parsePlain(msg)
			if perr != nil || u != user || users[user] != pass || user == "" {
				t.Fatalf("authenticated %q from %q", user, msg)
			}
		}
	})
}

// FuzzSASLScram: arbitrary client-first and client-final messages never
// panic and never authenticate without the password's proof.
func FuzzSASLScram(f *testing.F) {
	f.Add("n,,n=alice,r=abc", "c=biws,r=abcXYZ,p=AAAA")
	f.Add("y,a=alice,n=alice,r=abc,tokenauth=true", "c=eSxhPWFsaWNlLA==,r=abc,p=")
	f.Add("p=tls-unique,,n=alice,r=x", "")
	f.Add("n,,n=al=2Cice,r=x", "c=biws,r=x,p=====")
	f.Add("n,,n=al=3Dice=,r=x", "p=,c=,r=")
	cred, err := NewScramCredential(auth.ScramSHA256, "secret", []byte("salt"), 4096)
	if err != nil {
		f.Fatal(err)
	}
	store := memStore{"SCRAM-SHA-256/alice": cred, "SCRAM-SHA-256/al,ice": cred}
	f.Fuzz(func(t *testing.T, first, final string) {
		s := &scramServer{mech: auth.ScramSHA256, store: store}
		if _, _, done, err := s.next([]byte(first)); err != nil || done {
			return
		}
		if _, _, done, err := s.next([]byte(final)); done || err == nil {
			// The proof needs the password; fuzzed input cannot have it
			// (and cannot know the server's random nonce).
			t.Fatalf("authenticated with first %q final %q", first, final)
		}
	})
}
