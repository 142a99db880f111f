// Package authorizer is Kafka's StandardAuthorizer decision logic over the
// ACLs in the broker's metadata image: super.users are allowed everything;
// otherwise the ACLs whose pattern matches the resource (literal same
// name, literal "*", or a prefix of the name) and whose principal (the
// user's, or User:*) and host (the client's, or "*") match decide — a
// matching DENY wins over any ALLOW; an ALLOW of the operation, of ALL, or
// of an operation that implies it (READ/WRITE/DELETE/ALTER imply
// DESCRIBE, ALTER_CONFIGS implies DESCRIBE_CONFIGS) allows; a resource
// with no ACLs at all is allowed only with allow.everyone.if.no.acl.found.
//
// Enforcement (which action each API checks) is the API handlers'; this
// package only decides.
package authorizer

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/fjordhq/fjord/broker/auth"
	"github.com/fjordhq/fjord/broker/metadata"
)

// Config keys, as Kafka names them.
const (
	KeyClassName    = "authorizer.class.name"
	KeySuperUsers   = "super.users"
	KeyAllowIfNoACL = "allow.everyone.if.no.acl.found"
)

// knownClasses are the authorizer.class.name values that turn the
// standard authorizer on: KRaft's StandardAuthorizer, and the ZooKeeper
// era AclAuthorizer (same ACL semantics) so old server.properties work.
var knownClasses = map[string]bool{
	"org.apache.kafka.metadata.authorizer.StandardAuthorizer": true,
	"kafka.security.authorizer.AclAuthorizer":                 true,
	"kafka.security.auth.SimpleAclAuthorizer":                 true,
}

// Enabled reports whether authorizer.class.name turns authorization on:
// "" is off (Kafka's default), a known class is on, anything else is an
// error naming what is accepted.
func Enabled(className string) (bool, error) {
	className = strings.TrimSpace(className)
	if className == "" {
		return false, nil
	}
	if knownClasses[className] {
		return true, nil
	}
	return false, fmt.Errorf("%s=%s is not supported: use org.apache.kafka.metadata.authorizer.StandardAuthorizer (ACLs in the metadata log), or leave it empty for no authorization", KeyClassName, className)
}

// ParseSuperUsers parses super.users: principals separated by ";"
// ("User:admin;User:ops"), each Type:Name.
func ParseSuperUsers(s string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(s, ";") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if _, err := auth.ParsePrincipal(p); err != nil {
			return nil, fmt.Errorf("%s: %w", KeySuperUsers, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// FromProperties builds the authorizer a broker's properties ask for, or
// nil (no authorization) when authorizer.class.name is unset. image
// returns the current metadata image.
func FromProperties(props map[string]string, image func() *metadata.Image) (auth.Authorizer, error) {
	on, err := Enabled(props[KeyClassName])
	if err != nil || !on {
		return nil, err
	}
	supers, err := ParseSuperUsers(props[KeySuperUsers])
	if err != nil {
		return nil, err
	}
	allow := false
	if v := strings.TrimSpace(props[KeyAllowIfNoACL]); v != "" {
		allow, err = strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("%s=%s: want true or false", KeyAllowIfNoACL, v)
		}
	}
	return NewFromImage(image, supers, allow), nil
}

// Standard is the standard authorizer.
type Standard struct {
	image        func() *metadata.Image
	superUsers   map[string]bool
	allowIfNoACL bool
	// index caches the ACLs of the last image seen, by resource type.
	index atomic.Pointer[aclIndex]
}

type aclIndex struct {
	img    *metadata.Image
	byType map[auth.ResourceType]*typeIndex
}

// typeIndex holds one resource type's ACLs by pattern, so a check looks
// at the ACLs that can match its resource name (as Kafka's
// StandardAuthorizer looks them up in a set sorted by name) instead of
// every ACL of the type: the literal name's, the literal wildcard's, and
// the prefixed ACLs of each prefix length that exists.
type typeIndex struct {
	literal    map[string][]auth.ACL
	prefixed   map[string][]auth.ACL
	prefixLens []int // distinct lengths of prefixed names, ascending
}

func (ix *typeIndex) add(a auth.ACL) {
	switch a.PatternType {
	case auth.PatternLiteral:
		ix.literal[a.ResourceName] = append(ix.literal[a.ResourceName], a)
	case auth.PatternPrefixed:
		if _, ok := ix.prefixed[a.ResourceName]; !ok {
			n := len(a.ResourceName)
			if i, found := slices.BinarySearch(ix.prefixLens, n); !found {
				ix.prefixLens = slices.Insert(ix.prefixLens, i, n)
			}
		}
		ix.prefixed[a.ResourceName] = append(ix.prefixed[a.ResourceName], a)
	}
}

// matching calls f with each group of ACLs whose pattern covers name,
// until f returns false.
func (ix *typeIndex) matching(name string, f func([]auth.ACL) bool) {
	if ix == nil {
		return
	}
	if acls := ix.literal[name]; len(acls) > 0 && !f(acls) {
		return
	}
	if name != auth.WildcardResource {
		if acls := ix.literal[auth.WildcardResource]; len(acls) > 0 && !f(acls) {
			return
		}
	}
	for _, n := range ix.prefixLens {
		if n > len(name) {
			return
		}
		if acls := ix.prefixed[name[:n]]; len(acls) > 0 && !f(acls) {
			return
		}
	}
}

var _ auth.Authorizer = (*Standard)(nil)

// NewFromImage returns a Standard authorizer reading ACLs from image().
// superUsers are principal strings ("User:admin").
func NewFromImage(image func() *metadata.Image, superUsers []string, allowIfNoACL bool) *Standard {
	s := &Standard{image: image, superUsers: map[string]bool{}, allowIfNoACL: allowIfNoACL}
	for _, u := range superUsers {
		s.superUsers[u] = true
	}
	return s
}

func (s *Standard) acls() map[auth.ResourceType]*typeIndex {
	img := s.image()
	if ix := s.index.Load(); ix != nil && ix.img == img {
		return ix.byType
	}
	ix := &aclIndex{img: img, byType: map[auth.ResourceType]*typeIndex{}}
	for _, a := range img.ACLList() {
		t := ix.byType[a.ResourceType]
		if t == nil {
			t = &typeIndex{literal: map[string][]auth.ACL{}, prefixed: map[string][]auth.ACL{}}
			ix.byType[a.ResourceType] = t
		}
		t.add(a.ACL)
	}
	s.index.Store(ix)
	return ix.byType
}

// Authorize decides each action for principal p connecting from host.
func (s *Standard) Authorize(p auth.Principal, host string, actions []auth.Action) []bool {
	out := make([]bool, len(actions))
	if s.superUsers[p.String()] {
		for i := range out {
			out[i] = true
		}
		return out
	}
	acls := s.acls()
	for i, a := range actions {
		out[i] = s.decide(acls[a.ResourceType], p, host, a)
	}
	return out
}

// wildcardPrincipal matches every principal of ACLs ("User:*").
const wildcardPrincipal = "User:*"

func (s *Standard) decide(ix *typeIndex, p auth.Principal, host string, a auth.Action) bool {
	principal := p.String()
	found, allowed, denied := false, false, false
	ix.matching(a.ResourceName, func(acls []auth.ACL) bool {
		found = true
		for _, acl := range acls {
			if acl.Principal != principal && acl.Principal != wildcardPrincipal {
				continue
			}
			if acl.Host != "*" && acl.Host != host {
				continue
			}
			switch acl.Permission {
			case auth.PermissionDeny:
				if acl.Operation == auth.OpAll || acl.Operation == a.Operation {
					denied = true // DENY beats every ALLOW
					return false
				}
			case auth.PermissionAllow:
				if allows(acl.Operation, a.Operation) {
					allowed = true
				}
			}
		}
		return true
	})
	switch {
	case denied:
		return false
	case !found:
		return s.allowIfNoACL
	}
	return allowed
}

// allows reports whether an ALLOW of granted permits op.
func allows(granted, op auth.Operation) bool {
	if granted == auth.OpAll || granted == op {
		return true
	}
	switch op {
	case auth.OpDescribe:
		return granted == auth.OpRead || granted == auth.OpWrite || granted == auth.OpDelete || granted == auth.OpAlter
	case auth.OpDescribeConfigs:
		return granted == auth.OpAlterConfigs
	}
	return false
}
