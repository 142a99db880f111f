package protocol

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/fjordhq/fjord/broker/auth"
)

// scramClient is a small RFC 5802 client for tests, written from the
// RFC (not from the server code) so the two check each other.
type scramClient struct {
	mech                          auth.ScramMechanism
	user, pass, cnonce, firstBare string
	serverSig                     []byte
}

func newScramClient(mech auth.ScramMechanism, user, pass string) *scramClient {
	return &scramClient{mech: mech, user: user, pass: pass, cnonce: "fyko+d2lbbFgONRv9qkxdawL"}
}

func (c *scramClient) first() string {
	c.firstBare = "n=" + c.user + ",r=" + c.cnonce
	return "n,," + c.firstBare
}

func (c *scramClient) final(serverFirst string) (string, error) {
	attrs := map[string]string{}
	for _, a := range strings.Split(serverFirst, ",") {
		k, v, _ := strings.Cut(a, "=")
		attrs[k] = v
	}
	salt, err := base64.StdEncoding.DecodeString(attrs["s"])
	if err != nil {
		return "", err
	}
	iters, err := strconv.Atoi(attrs["i"])
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(attrs["r"], c.cnonce) {
		return "", fmt.Errorf("server nonce %q does not extend ours", attrs["r"])
	}
	h := scramHash(c.mech)
	salted, err := pbkdf2.Key(h, c.pass, salt, iters, h().Size())
	if err != nil {
		return "", err
	}
	mac := func(key []byte, msg string) []byte { m := hmac.New(h, key); m.Write([]byte(msg)); return m.Sum(nil) }
	clientKey := mac(salted, "Client Key")
	sum := h()
	sum.Write(clientKey)
	withoutProof := "c=biws,r=" + attrs["r"]
	authMsg := c.firstBare + "," + serverFirst + "," + withoutProof
	sig := mac(sum.Sum(nil), authMsg)
	proof := make([]byte, len(sig))
	for i := range sig {
		proof[i] = clientKey[i] ^ sig[i]
	}
	c.serverSig = mac(mac(salted, "Server Key"), authMsg)
	return withoutProof + ",p=" + base64.StdEncoding.EncodeToString(proof), nil
}

func (c *scramClient) verify(serverFinal string) bool {
	return serverFinal == "v="+base64.StdEncoding.EncodeToString(c.serverSig)
}
