package runtime

import (
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/clientsec"
)

// securityKeys are the client keys clientSecurityOpts reads.
var securityKeys = clientsec.Keys

// clientSecurityOpts maps security.protocol, ssl.* and sasl.* to TLS and
// SASL options (internal/clientsec, shared with the CLI).
func clientSecurityOpts(props map[string]string) ([]kgo.Opt, []string) {
	return clientsec.Options(props)
}
