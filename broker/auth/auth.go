// Package auth holds the broker's security vocabulary, shared by the
// listeners that authenticate connections (TLS, SASL), the metadata that
// stores credentials and ACLs, and the APIs that authorize requests:
// principals, SCRAM credentials, and Kafka's ACL model (resource types,
// pattern types, operations, permission types — with Kafka's numeric
// codes, which the wire protocol and the metadata log carry).
package auth

import "fmt"

// Principal is an authenticated identity, Kafka's KafkaPrincipal: a type
// ("User") and a name. Its string form "User:alice" is what ACLs and
// super.users name.
type Principal struct {
	Type string
	Name string
}

// Anonymous is the principal of a PLAINTEXT connection (Kafka's
// KafkaPrincipal.ANONYMOUS).
var Anonymous = Principal{Type: "User", Name: "ANONYMOUS"}

// User is a "User" principal.
func User(name string) Principal { return Principal{Type: "User", Name: name} }

func (p Principal) String() string { return p.Type + ":" + p.Name }

// ParsePrincipal parses "Type:Name" (Kafka's SecurityUtils.parseKafkaPrincipal).
func ParsePrincipal(s string) (Principal, error) {
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			if i == 0 || i == len(s)-1 {
				break
			}
			return Principal{Type: s[:i], Name: s[i+1:]}, nil
		}
	}
	return Principal{}, fmt.Errorf("principal %q must be Type:Name, e.g. User:alice", s)
}

// ScramMechanism is a SCRAM mechanism with Kafka's code
// (org.apache.kafka.common.security.scram.internals.ScramMechanism /
// the ScramCredential APIs' mechanism field).
type ScramMechanism int8

const (
	ScramUnknown ScramMechanism = 0
	ScramSHA256  ScramMechanism = 1
	ScramSHA512  ScramMechanism = 2
)

// Name is the SASL mechanism name ("SCRAM-SHA-256").
func (m ScramMechanism) Name() string {
	switch m {
	case ScramSHA256:
		return "SCRAM-SHA-256"
	case ScramSHA512:
		return "SCRAM-SHA-512"
	}
	return "UNKNOWN"
}

// ScramCredential is what the broker keeps for a SCRAM user (RFC 5802):
// never the password, only the salted keys.
type ScramCredential struct {
	Mechanism  ScramMechanism
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
	Iterations int32
}

// ScramStore looks up SCRAM credentials; the broker's metadata image
// implements it (credentials live in the metadata log).
type ScramStore interface {
	ScramCredential(user string, mech ScramMechanism) (ScramCredential, bool)
}

// ResourceType is Kafka's ACL resource type code.
type ResourceType int8

const (
	ResourceUnknown         ResourceType = 0
	ResourceAny             ResourceType = 1
	ResourceTopic           ResourceType = 2
	ResourceGroup           ResourceType = 3
	ResourceCluster         ResourceType = 4
	ResourceTransactionalID ResourceType = 5
	ResourceDelegationToken ResourceType = 6
	ResourceUser            ResourceType = 7
)

// PatternType is Kafka's resource pattern type code.
type PatternType int8

const (
	PatternUnknown  PatternType = 0
	PatternAny      PatternType = 1
	PatternMatch    PatternType = 2
	PatternLiteral  PatternType = 3
	PatternPrefixed PatternType = 4
)

// Operation is Kafka's ACL operation code.
type Operation int8

const (
	OpUnknown         Operation = 0
	OpAny             Operation = 1
	OpAll             Operation = 2
	OpRead            Operation = 3
	OpWrite           Operation = 4
	OpCreate          Operation = 5
	OpDelete          Operation = 6
	OpAlter           Operation = 7
	OpDescribe        Operation = 8
	OpClusterAction   Operation = 9
	OpDescribeConfigs Operation = 10
	OpAlterConfigs    Operation = 11
	OpIdempotentWrite Operation = 12
	OpCreateTokens    Operation = 13
	OpDescribeTokens  Operation = 14
)

// Permission is Kafka's ACL permission type code.
type Permission int8

const (
	PermissionUnknown Permission = 0
	PermissionAny     Permission = 1
	PermissionDeny    Permission = 2
	PermissionAllow   Permission = 3
)

// WildcardResource is the literal resource name that matches every name
// ("*").
const WildcardResource = "*"

// ACL is one access control entry bound to a resource pattern (Kafka's
// AclBinding).
type ACL struct {
	ResourceType ResourceType
	ResourceName string
	PatternType  PatternType // PatternLiteral or PatternPrefixed when stored
	Principal    string      // "User:alice" or "User:*"
	Host         string      // "*" or an IP address
	Operation    Operation
	Permission   Permission
}

// Action is one thing a request wants to do: an operation on a named
// resource.
type Action struct {
	Operation    Operation
	ResourceType ResourceType
	ResourceName string
}

// Authorizer decides actions for a principal connecting from host (an IP
// address string). It answers one bool per action, in order. A nil
// Authorizer on the broker means no authorization (Kafka without
// authorizer.class.name).
type Authorizer interface {
	Authorize(p Principal, host string, actions []Action) []bool
}
