package auth

// Kafka's names for the ACL codes (the Java enums' names, as kafka-acls
// and AdminClient print them), and parsing of those names.

import "strings"

var resourceTypeNames = []string{"UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER"}
var patternTypeNames = []string{"UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"}
var operationNames = []string{"UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE",
	"CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS"}
var permissionNames = []string{"UNKNOWN", "ANY", "DENY", "ALLOW"}

func name(names []string, i int) string {
	if i < 0 || i >= len(names) {
		return "UNKNOWN"
	}
	return names[i]
}

func (t ResourceType) String() string { return name(resourceTypeNames, int(t)) }
func (t PatternType) String() string  { return name(patternTypeNames, int(t)) }
func (o Operation) String() string    { return name(operationNames, int(o)) }
func (p Permission) String() string   { return name(permissionNames, int(p)) }

// parse finds s among names, ignoring case and treating "-"/"" like "_"
// (kafka-acls accepts Read, IdempotentWrite, ClusterAction, ...).
func parse(names []string, s string) (int, bool) {
	norm := func(x string) string {
		return strings.ToUpper(strings.NewReplacer("_", "", "-", "").Replace(x))
	}
	for i, n := range names {
		if norm(n) == norm(s) {
			return i, true
		}
	}
	return 0, false
}

// ParseResourceType parses a resource type name ("topic", "TRANSACTIONAL_ID").
func ParseResourceType(s string) (ResourceType, bool) {
	i, ok := parse(resourceTypeNames, s)
	return ResourceType(i), ok
}

// ParsePatternType parses a pattern type name ("literal", "prefixed", "match", "any").
func ParsePatternType(s string) (PatternType, bool) {
	i, ok := parse(patternTypeNames, s)
	return PatternType(i), ok
}

// ParseOperation parses an operation name ("Read", "IdempotentWrite", "DESCRIBE_CONFIGS").
func ParseOperation(s string) (Operation, bool) {
	i, ok := parse(operationNames, s)
	return Operation(i), ok
}

// ParsePermission parses a permission name ("allow", "deny").
func ParsePermission(s string) (Permission, bool) {
	i, ok := parse(permissionNames, s)
	return Permission(i), ok
}
