package protocol

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fjordhq/fjord/internal/jaas"
)

// JAAS is one login module entry of a sasl.jaas.config value:
//
//	org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="pw" user_alice="a";
//
// Kafka's JaasConfig accepts exactly one entry per sasl.jaas.config.
type JAAS struct {
	LoginModule string
	Flag        string // required, requisite, sufficient or optional
	Options     map[string]string
}

// ParseJAAS parses a sasl.jaas.config value as Kafka's JaasConfig does
// (internal/jaas holds the grammar and quoting rules). Errors never quote
// the value: it holds passwords.
func ParseJAAS(s string) (JAAS, error) {
	lm, err := jaas.ParseModule(s)
	switch {
	case errors.Is(err, jaas.ErrEnd), errors.Is(err, jaas.ErrOneOnly):
		return JAAS{}, fmt.Errorf("sasl.jaas.config must be '<LoginModule> <flag> [key=\"value\" ...];' (%v)", err)
	case err != nil:
		return JAAS{}, fmt.Errorf("sasl.jaas.config: %w", err)
	}
	return JAAS{LoginModule: lm.Class, Flag: lm.Flag, Options: lm.Options}, nil
}

// PlainUsersFromJAAS returns the user_<name>="<password>" options of a
// PlainLoginModule entry, the broker's PLAIN credentials.
func PlainUsersFromJAAS(j JAAS) PlainUsers {
	users := PlainUsers{}
	for k, v := range j.Options {
		if name, ok := strings.CutPrefix(k, "user_"); ok && name != "" {
			users[name] = v
		}
	}
	return users
}
