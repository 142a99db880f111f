package controller

// SCRAM credentials and ACLs, as Kafka's ScramControlManager and
// AclControlManager: requests are validated against the image, turned
// into records, and committed atomically (all of a request's records or
// none), through the Local journal or the raft quorum alike.

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"hash"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/fjordhq/fjord/broker/auth"
	"github.com/fjordhq/fjord/broker/metadata"
)

// SecurityController is the part of a controller that stores credentials
// and ACLs; Local and Quorum implement it.
type SecurityController interface {
	AlterScram(ctx context.Context, deletions []ScramDeletion, upsertions []ScramUpsertion) []ScramResult
	CreateACLs(ctx context.Context, acls []auth.ACL) []*Error
	DeleteACLs(ctx context.Context, filters []metadata.ACLFilter) []ACLDeleteResult
}

var (
	_ SecurityController = (*Local)(nil)
	_ SecurityController = (*Quorum)(nil)
)

// ScramUpsertion sets a user's credential for a mechanism: the client
// sends the salt and the salted password (never the password); the
// controller derives the stored and server keys.
type ScramUpsertion struct {
	Name           string
	Mechanism      auth.ScramMechanism
	Iterations     int32
	Salt           []byte
	SaltedPassword []byte
}

// ScramDeletion removes a user's credential for a mechanism.
type ScramDeletion struct {
	Name      string
	Mechanism auth.ScramMechanism
}

// ScramResult is the answer for one user.
type ScramResult struct {
	User string
	Err  *Error
}

// ACLDeleteResult is the answer for one delete filter: the ACLs it
// removed, or an error.
type ACLDeleteResult struct {
	Deleted []auth.ACL
	Err     *Error
}

// Kafka's SCRAM iteration bounds (ScramMechanism.minIterations,
// ScramControlManager.MAX_ITERATIONS).
const (
	ScramMinIterations = 4096
	ScramMaxIterations = 16384
)

const errAlteredTwice = "A user credential cannot be altered twice in the same request"

// planAlterScram is ScramControlManager.alterCredentials: a user named
// twice in one request fails with DUPLICATE_RESOURCE (each user at most
// once, whatever the mechanisms). Results list successful deletions,
// then successful upsertions, then failures, as Kafka's do.
func planAlterScram(img *metadata.Image, dels []ScramDeletion, ups []ScramUpsertion) ([]ScramResult, []metadata.Record) {
	failed := map[string]*Error{}
	var failOrder []string
	fail := func(user string, e *Error) {
		if _, ok := failed[user]; !ok {
			failOrder = append(failOrder, user)
		}
		failed[user] = e
	}
	okDel := map[string]ScramDeletion{}
	okUp := map[string]ScramUpsertion{}
	var delOrder, upOrder []string
	for _, d := range dels {
		if failed[d.Name] != nil {
			continue
		}
		if _, dup := okDel[d.Name]; dup {
			delete(okDel, d.Name)
			fail(d.Name, errorf(kerr.DuplicateResource, errAlteredTwice))
			continue
		}
		if e := validateScramName(d.Name, d.Mechanism); e != nil {
			fail(d.Name, e)
			continue
		}
		if _, ok := img.ScramCredential(d.Name, d.Mechanism); !ok {
			fail(d.Name, errorf(kerr.ResourceNotFound, "Attempt to delete a user credential that does not exist"))
			continue
		}
		okDel[d.Name] = d
		delOrder = append(delOrder, d.Name)
	}
	for _, u := range ups {
		if failed[u.Name] != nil {
			continue
		}
		_, dupDel := okDel[u.Name]
		_, dupUp := okUp[u.Name]
		if dupDel || dupUp {
			delete(okDel, u.Name)
			delete(okUp, u.Name)
			fail(u.Name, errorf(kerr.DuplicateResource, errAlteredTwice))
			continue
		}
		if e := validateScramName(u.Name, u.Mechanism); e != nil {
			fail(u.Name, e)
			continue
		}
		if u.Iterations < ScramMinIterations {
			fail(u.Name, errorf(kerr.UnacceptableCredential, "Too few iterations"))
			continue
		}
		if u.Iterations > ScramMaxIterations {
			fail(u.Name, errorf(kerr.UnacceptableCredential, "Too many iterations"))
			continue
		}
		okUp[u.Name] = u
		upOrder = append(upOrder, u.Name)
	}
	var results []ScramResult
	var recs []metadata.Record
	for _, name := range delOrder {
		d, ok := okDel[name]
		if !ok {
			continue
		}
		results = append(results, ScramResult{User: name})
		recs = append(recs, metadata.Record{RemoveScramCredential: &metadata.RemoveUserScramCredentialRecord{Name: name, Mechanism: int8(d.Mechanism)}})
	}
	for _, name := range upOrder {
		u, ok := okUp[name]
		if !ok {
			continue
		}
		stored, server := ScramKeys(u.Mechanism, u.SaltedPassword)
		results = append(results, ScramResult{User: name})
		recs = append(recs, metadata.Record{ScramCredential: &metadata.UserScramCredentialRecord{
			Name: name, Mechanism: int8(u.Mechanism), Salt: slices.Clone(u.Salt),
			StoredKey: stored, ServerKey: server, Iterations: u.Iterations}})
	}
	for _, name := range failOrder {
		results = append(results, ScramResult{User: name, Err: failed[name]})
	}
	return results, recs
}

func validateScramName(name string, m auth.ScramMechanism) *Error {
	if name == "" {
		return errorf(kerr.UnacceptableCredential, "Username must not be empty")
	}
	if m != auth.ScramSHA256 && m != auth.ScramSHA512 {
		return errorf(kerr.UnsupportedSaslMechanism, "Unknown SCRAM mechanism")
	}
	return nil
}

// ScramKeys derives RFC 5802's StoredKey = H(HMAC(SaltedPassword,
// "Client Key")) and ServerKey = HMAC(SaltedPassword, "Server Key"), as
// Kafka's ScramFormatter does.
func ScramKeys(m auth.ScramMechanism, saltedPassword []byte) (storedKey, serverKey []byte) {
	h := sha256.New
	if m == auth.ScramSHA512 {
		h = sha512.New
	}
	mac := func(key []byte, msg string) []byte {
		m := hmac.New(h, key)
		m.Write([]byte(msg))
		return m.Sum(nil)
	}
	clientKey := mac(saltedPassword, "Client Key")
	var d hash.Hash = h()
	d.Write(clientKey)
	return d.Sum(nil), mac(saltedPassword, "Server Key")
}

// planCreateACLs is AclControlManager.createAcls: each ACL is validated
// on its own; an ACL already stored (or earlier in the request) succeeds
// without a new record.
func planCreateACLs(img *metadata.Image, acls []auth.ACL) ([]*Error, []metadata.Record) {
	errs := make([]*Error, len(acls))
	var recs []metadata.Record
	pending := map[auth.ACL]bool{}
	used := map[metadata.UUID]bool{}
	for i, acl := range acls {
		if e := validateNewACL(acl); e != nil {
			errs[i] = e
			continue
		}
		if pending[acl] || img.HasACL(acl) {
			continue
		}
		pending[acl] = true
		id := metadata.NewUUID()
		for img.ACLs[id].ID == id || used[id] {
			id = metadata.NewUUID()
		}
		used[id] = true
		recs = append(recs, metadata.Record{ACL: metadata.ACLRecord(id, acl)})
	}
	return errs, recs
}

// validateNewACL is AclControlManager.validateNewAcl.
func validateNewACL(acl auth.ACL) *Error {
	switch {
	case acl.ResourceType <= auth.ResourceAny || acl.ResourceType > auth.ResourceUser:
		return errorf(kerr.InvalidRequest, "Invalid resourceType %s", acl.ResourceType)
	case acl.PatternType != auth.PatternLiteral && acl.PatternType != auth.PatternPrefixed:
		return errorf(kerr.InvalidRequest, "Invalid patternType %s", acl.PatternType)
	case acl.Operation <= auth.OpAny || acl.Operation > auth.OpDescribeTokens:
		return errorf(kerr.InvalidRequest, "Invalid operation %s", acl.Operation)
	case acl.Permission != auth.PermissionAllow && acl.Permission != auth.PermissionDeny:
		return errorf(kerr.InvalidRequest, "Invalid permissionType %s", acl.Permission)
	case acl.ResourceName == "":
		return errorf(kerr.InvalidRequest, "Resource name should not be empty")
	}
	return nil
}

// planDeleteACLs is AclControlManager.deleteAcls: every filter answers
// the ACLs it matches; an ACL matched by several filters is removed once.
func planDeleteACLs(img *metadata.Image, filters []metadata.ACLFilter) ([]ACLDeleteResult, []metadata.Record) {
	results := make([]ACLDeleteResult, len(filters))
	var recs []metadata.Record
	removed := map[metadata.UUID]bool{}
	all := img.ACLList()
	for i, f := range filters {
		if f.PatternUnknown() {
			results[i].Err = errorf(kerr.InvalidRequest, "Unknown patternFilter.")
			continue
		}
		if f.EntryUnknown() {
			results[i].Err = errorf(kerr.InvalidRequest, "Unknown entryFilter.")
			continue
		}
		results[i].Deleted = []auth.ACL{}
		for _, a := range all {
			if !f.Matches(a.ACL) {
				continue
			}
			results[i].Deleted = append(results[i].Deleted, a.ACL)
			if !removed[a.ID] {
				removed[a.ID] = true
				recs = append(recs, metadata.Record{RemoveACL: &metadata.RemoveAccessControlEntryRecord{ID: a.ID}})
			}
		}
	}
	return results, recs
}

// AlterScram upserts and deletes SCRAM credentials.
func (c *Local) AlterScram(ctx context.Context, dels []ScramDeletion, ups []ScramUpsertion) []ScramResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	results, recs := planAlterScram(c.image.Load(), dels, ups)
	if len(recs) > 0 {
		if err := c.commit(recs); err != nil {
			failScram(results, asError(err, kerr.UnknownServerError))
		}
	}
	return results
}

// CreateACLs stores ACLs.
func (c *Local) CreateACLs(ctx context.Context, acls []auth.ACL) []*Error {
	c.mu.Lock()
	defer c.mu.Unlock()
	errs, recs := planCreateACLs(c.image.Load(), acls)
	if len(recs) > 0 {
		if err := c.commit(recs); err != nil {
			failAll(errs, err)
		}
	}
	return errs
}

// DeleteACLs removes the ACLs each filter matches.
func (c *Local) DeleteACLs(ctx context.Context, filters []metadata.ACLFilter) []ACLDeleteResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	results, recs := planDeleteACLs(c.image.Load(), filters)
	if len(recs) > 0 {
		if err := c.commit(recs); err != nil {
			failACLDeletes(results, asError(err, kerr.UnknownServerError))
		}
	}
	return results
}

// AlterScram upserts and deletes SCRAM credentials through raft.
func (q *Quorum) AlterScram(ctx context.Context, dels []ScramDeletion, ups []ScramUpsertion) []ScramResult {
	if err := q.lockActive(); err != nil {
		var results []ScramResult
		seen := map[string]bool{}
		for _, n := range append(scramNames(dels), upsertNames(ups)...) {
			if !seen[n] {
				seen[n] = true
				results = append(results, ScramResult{User: n, Err: err})
			}
		}
		return results
	}
	defer q.mu.Unlock()
	results, recs := planAlterScram(q.Image(), dels, ups)
	if err := q.propose(recs); err != nil {
		failScram(results, err)
	}
	return results
}

// CreateACLs stores ACLs through raft.
func (q *Quorum) CreateACLs(ctx context.Context, acls []auth.ACL) []*Error {
	if err := q.lockActive(); err != nil {
		errs := make([]*Error, len(acls))
		failAll(errs, err)
		return errs
	}
	defer q.mu.Unlock()
	errs, recs := planCreateACLs(q.Image(), acls)
	if err := q.propose(recs); err != nil {
		failAll(errs, err)
	}
	return errs
}

// DeleteACLs removes the ACLs each filter matches, through raft.
func (q *Quorum) DeleteACLs(ctx context.Context, filters []metadata.ACLFilter) []ACLDeleteResult {
	if err := q.lockActive(); err != nil {
		results := make([]ACLDeleteResult, len(filters))
		failACLDeletes(results, err)
		return results
	}
	defer q.mu.Unlock()
	results, recs := planDeleteACLs(q.Image(), filters)
	if err := q.propose(recs); err != nil {
		failACLDeletes(results, err)
	}
	return results
}

func scramNames(d []ScramDeletion) []string {
	out := make([]string, len(d))
	for i := range d {
		out[i] = d[i].Name
	}
	return out
}

func upsertNames(u []ScramUpsertion) []string {
	out := make([]string, len(u))
	for i := range u {
		out[i] = u[i].Name
	}
	return out
}

// failScram turns every success into err: the records were not stored.
func failScram(results []ScramResult, err *Error) {
	for i := range results {
		if results[i].Err == nil {
			results[i].Err = err
		}
	}
}

func failACLDeletes(results []ACLDeleteResult, err *Error) {
	for i := range results {
		if results[i].Err == nil {
			results[i] = ACLDeleteResult{Err: err}
		}
	}
}
