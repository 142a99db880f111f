package metadata

// SCRAM credentials and ACLs in the metadata log: Kafka's
// UserScramCredentialRecord / RemoveUserScramCredentialRecord and
// AccessControlEntryRecord / RemoveAccessControlEntryRecord. The image
// keeps them so every broker authenticates and authorizes from the same
// replicated state, and so they survive restarts with the rest of the log.

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/fjordhq/fjord/broker/auth"
)

// UserScramCredentialRecord adds or replaces one user's credential for one
// mechanism. It carries only the salted keys, never the password.
type UserScramCredentialRecord struct {
	Name       string `json:"name"`
	Mechanism  int8   `json:"mechanism"` // auth.ScramMechanism
	Salt       []byte `json:"salt"`
	StoredKey  []byte `json:"storedKey"`
	ServerKey  []byte `json:"serverKey"`
	Iterations int32  `json:"iterations"`
}

// RemoveUserScramCredentialRecord deletes one user's credential for one
// mechanism.
type RemoveUserScramCredentialRecord struct {
	Name      string `json:"name"`
	Mechanism int8   `json:"mechanism"`
}

// AccessControlEntryRecord adds an ACL under a new id (Kafka names ACLs
// by a UUID so a removal is exact).
type AccessControlEntryRecord struct {
	ID           UUID   `json:"id"`
	ResourceType int8   `json:"resourceType"`
	ResourceName string `json:"resourceName"`
	PatternType  int8   `json:"patternType"`
	Principal    string `json:"principal"`
	Host         string `json:"host"`
	Operation    int8   `json:"operation"`
	Permission   int8   `json:"permissionType"`
}

// RemoveAccessControlEntryRecord deletes the ACL with ID.
type RemoveAccessControlEntryRecord struct {
	ID UUID `json:"id"`
}

// ScramKey names one stored SCRAM credential.
type ScramKey struct {
	User      string
	Mechanism auth.ScramMechanism
}

// ACLWithID is a stored ACL and the id its record gave it.
type ACLWithID struct {
	ID UUID
	auth.ACL
}

// ACLRecord is the record that stores acl under id.
func ACLRecord(id UUID, acl auth.ACL) *AccessControlEntryRecord {
	return &AccessControlEntryRecord{
		ID: id, ResourceType: int8(acl.ResourceType), ResourceName: acl.ResourceName,
		PatternType: int8(acl.PatternType), Principal: acl.Principal, Host: acl.Host,
		Operation: int8(acl.Operation), Permission: int8(acl.Permission),
	}
}

func (r *AccessControlEntryRecord) acl() auth.ACL {
	return auth.ACL{
		ResourceType: auth.ResourceType(r.ResourceType), ResourceName: r.ResourceName,
		PatternType: auth.PatternType(r.PatternType), Principal: r.Principal, Host: r.Host,
		Operation: auth.Operation(r.Operation), Permission: auth.Permission(r.Permission),
	}
}

// ScramCredential implements auth.ScramStore from the image.
func (img *Image) ScramCredential(user string, mech auth.ScramMechanism) (auth.ScramCredential, bool) {
	c, ok := img.Scram[ScramKey{user, mech}]
	return c, ok
}

var _ auth.ScramStore = (*Image)(nil)

// ScramUsers returns the users with at least one SCRAM credential, sorted.
func (img *Image) ScramUsers() []string {
	seen := map[string]bool{}
	for k := range img.Scram {
		seen[k.User] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

// ScramCredentials returns a user's credentials ordered by mechanism.
func (img *Image) ScramCredentials(user string) []auth.ScramCredential {
	var out []auth.ScramCredential
	for _, m := range []auth.ScramMechanism{auth.ScramSHA256, auth.ScramSHA512} {
		if c, ok := img.Scram[ScramKey{user, m}]; ok {
			out = append(out, c)
		}
	}
	return out
}

// ACLList returns every stored ACL in a stable order (by resource, then
// entry), so answers and snapshots are deterministic.
func (img *Image) ACLList() []ACLWithID {
	out := slices.Collect(maps.Values(img.ACLs))
	slices.SortFunc(out, func(a, b ACLWithID) int {
		return cmp.Or(
			cmp.Compare(a.ResourceType, b.ResourceType),
			cmp.Compare(a.PatternType, b.PatternType),
			cmp.Compare(a.ResourceName, b.ResourceName),
			cmp.Compare(a.Principal, b.Principal),
			cmp.Compare(a.Host, b.Host),
			cmp.Compare(a.Operation, b.Operation),
			cmp.Compare(a.Permission, b.Permission),
			slices.Compare(a.ID[:], b.ID[:]),
		)
	})
	return out
}

// HasACL reports whether an identical ACL is stored (under any id).
func (img *Image) HasACL(acl auth.ACL) bool {
	for _, a := range img.ACLs {
		if a.ACL == acl {
			return true
		}
	}
	return false
}

// applySecurity applies the security records; ok is false for any other
// record.
func (img *Image) applySecurity(r Record) (ok bool, err error) {
	switch {
	case r.ScramCredential != nil:
		c := r.ScramCredential
		img.Scram[ScramKey{c.Name, auth.ScramMechanism(c.Mechanism)}] = auth.ScramCredential{
			Mechanism: auth.ScramMechanism(c.Mechanism),
			Salt:      slices.Clone(c.Salt), StoredKey: slices.Clone(c.StoredKey), ServerKey: slices.Clone(c.ServerKey),
			Iterations: c.Iterations,
		}
	case r.RemoveScramCredential != nil:
		k := ScramKey{r.RemoveScramCredential.Name, auth.ScramMechanism(r.RemoveScramCredential.Mechanism)}
		if _, ok := img.Scram[k]; !ok {
			return true, fmt.Errorf("remove of unknown SCRAM credential %s/%s", k.User, k.Mechanism.Name())
		}
		delete(img.Scram, k)
	case r.ACL != nil:
		if _, ok := img.ACLs[r.ACL.ID]; ok {
			return true, fmt.Errorf("ACL id %s already exists", r.ACL.ID)
		}
		img.ACLs[r.ACL.ID] = ACLWithID{ID: r.ACL.ID, ACL: r.ACL.acl()}
	case r.RemoveACL != nil:
		if _, ok := img.ACLs[r.RemoveACL.ID]; !ok {
			return true, fmt.Errorf("remove of unknown ACL id %s", r.RemoveACL.ID)
		}
		delete(img.ACLs, r.RemoveACL.ID)
	default:
		return false, nil
	}
	return true, nil
}

// SecurityRecords returns the records that rebuild img's credentials and
// ACLs from empty (for snapshots).
func (img *Image) SecurityRecords() []Record {
	var recs []Record
	keys := slices.SortedFunc(maps.Keys(img.Scram), func(a, b ScramKey) int {
		return cmp.Or(cmp.Compare(a.User, b.User), cmp.Compare(a.Mechanism, b.Mechanism))
	})
	for _, k := range keys {
		c := img.Scram[k]
		recs = append(recs, Record{ScramCredential: &UserScramCredentialRecord{
			Name: k.User, Mechanism: int8(k.Mechanism), Salt: c.Salt, StoredKey: c.StoredKey,
			ServerKey: c.ServerKey, Iterations: c.Iterations}})
	}
	for _, a := range img.ACLList() {
		recs = append(recs, Record{ACL: ACLRecord(a.ID, a.ACL)})
	}
	return recs
}

// ACLFilter selects ACLs (Kafka's AclBindingFilter): ANY codes and nil
// strings match everything; PatternMatch selects the ACLs that would
// apply to the named resource (literal same name or "*", and prefixes of
// it).
type ACLFilter struct {
	ResourceType auth.ResourceType
	ResourceName *string
	PatternType  auth.PatternType
	Principal    *string
	Host         *string
	Operation    auth.Operation
	Permission   auth.Permission
}

// PatternUnknown reports whether the resource part names an unknown code
// (Kafka's ResourcePatternFilter.isUnknown).
func (f ACLFilter) PatternUnknown() bool {
	return !knownResourceType(f.ResourceType) || !knownPatternType(f.PatternType)
}

// EntryUnknown reports whether the entry part names an unknown code
// (Kafka's AccessControlEntryFilter.isUnknown).
func (f ACLFilter) EntryUnknown() bool {
	return !knownOperation(f.Operation) || !knownPermission(f.Permission)
}

func knownResourceType(t auth.ResourceType) bool {
	return t >= auth.ResourceAny && t <= auth.ResourceUser
}
func knownPatternType(t auth.PatternType) bool {
	return t >= auth.PatternAny && t <= auth.PatternPrefixed
}
func knownOperation(o auth.Operation) bool {
	return o >= auth.OpAny && o <= auth.OpDescribeTokens
}
func knownPermission(p auth.Permission) bool {
	return p >= auth.PermissionAny && p <= auth.PermissionAllow
}

// Matches reports whether acl is selected, as Kafka's
// AclBindingFilter.matches.
func (f ACLFilter) Matches(acl auth.ACL) bool {
	if f.ResourceType != auth.ResourceAny && f.ResourceType != acl.ResourceType {
		return false
	}
	if f.PatternType != auth.PatternAny && f.PatternType != auth.PatternMatch && f.PatternType != acl.PatternType {
		return false
	}
	if f.ResourceName != nil {
		name := *f.ResourceName
		switch {
		case f.PatternType == auth.PatternAny || f.PatternType == acl.PatternType:
			if name != acl.ResourceName {
				return false
			}
		case acl.PatternType == auth.PatternLiteral:
			if name != acl.ResourceName && acl.ResourceName != auth.WildcardResource {
				return false
			}
		case acl.PatternType == auth.PatternPrefixed:
			if len(name) < len(acl.ResourceName) || name[:len(acl.ResourceName)] != acl.ResourceName {
				return false
			}
		default:
			return false
		}
	}
	if f.Principal != nil && *f.Principal != acl.Principal {
		return false
	}
	if f.Host != nil && *f.Host != acl.Host {
		return false
	}
	if f.Operation != auth.OpAny && f.Operation != acl.Operation {
		return false
	}
	return f.Permission == auth.PermissionAny || f.Permission == acl.Permission
}
