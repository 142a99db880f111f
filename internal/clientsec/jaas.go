package clientsec

import (
	"fmt"

	"github.com/fjordhq/fjord/internal/jaas"
)

// LoginModule is the one entry of a JAAS configuration line
// (sasl.jaas.config): the login module class, its control flag and its
// options.
type LoginModule = jaas.LoginModule

// ParseJAAS parses Kafka's sasl.jaas.config, which holds exactly one login
// module: `<class> <flag> key=value ... ;` (internal/jaas holds the
// grammar and Kafka's quoting rules). Errors never quote option values,
// which hold passwords.
func ParseJAAS(s string) (*LoginModule, error) {
	lm, err := jaas.ParseModule(s)
	if err != nil {
		return nil, fmt.Errorf("sasl.jaas.config is not a valid JAAS login module line (%v); expected e.g. org.apache.kafka.common.security.plain.PlainLoginModule required username=\"alice\" password=\"...\";", err)
	}
	return &lm, nil
}
