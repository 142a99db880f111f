package source

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// aclBinding is one ACL (Kafka's AclBinding): a resource pattern and an
// access control entry.
type aclBinding struct {
	resourceType kmsg.ACLResourceType
	name         string
	patternType  kmsg.ACLResourcePatternType
	principal    string
	host         string
	operation    kmsg.ACLOperation
	permission   kmsg.ACLPermissionType
}

func (b aclBinding) String() string {
	return fmt.Sprintf("(pattern=ResourcePattern(resourceType=%s, name=%s, patternType=%s), entry=(principal=%s, host=%s, operation=%s, permissionType=%s))",
		b.resourceType, b.name, b.patternType, b.principal, b.host, b.operation, b.permission)
}

// errNoAuthorizer is what describeTopicACLs returns when the cluster
// has no authorizer (SECURITY_DISABLED).
var errNoAuthorizer = errors.New("no ACL authorizer is configured on the cluster")

// describeTopicACLs lists every ACL on a topic resource, of any pattern
// type: MirrorSourceConnector's ANY_TOPIC_ACL filter.
func (a *admin) describeTopicACLs(ctx context.Context) ([]aclBinding, error) {
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType = kmsg.ACLResourceTypeTopic
	req.ResourceName = nil
	req.ResourcePatternType = kmsg.ACLResourcePatternTypeAny
	req.Principal, req.Host = nil, nil
	req.Operation = kmsg.ACLOperationAny
	req.PermissionType = kmsg.ACLPermissionTypeAny
	resp, err := req.RequestWith(ctx, a.cl)
	if err != nil {
		return nil, fmt.Errorf("describe ACLs on %s cluster: %w", a.alias, err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		if errors.Is(err, kerr.SecurityDisabled) {
			return nil, errNoAuthorizer
		}
		return nil, fmt.Errorf("describe ACLs on %s cluster: %w", a.alias, withMessage(err, derefString(resp.ErrorMessage)))
	}
	var out []aclBinding
	for _, r := range resp.Resources {
		for _, e := range r.ACLs {
			out = append(out, aclBinding{resourceType: r.ResourceType, name: r.ResourceName, patternType: r.ResourcePatternType,
				principal: e.Principal, host: e.Host, operation: e.Operation, permission: e.PermissionType})
		}
	}
	return out, nil
}

// createACLs creates the bindings and returns each one's error, in the
// bindings' order (nil when created or already there: CreateAcls is
// idempotent).
func (a *admin) createACLs(ctx context.Context, bindings []aclBinding) ([]error, error) {
	req := kmsg.NewPtrCreateACLsRequest()
	for _, b := range bindings {
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType, c.ResourceName, c.ResourcePatternType = b.resourceType, b.name, b.patternType
		c.Principal, c.Host, c.Operation, c.PermissionType = b.principal, b.host, b.operation, b.permission
		req.Creations = append(req.Creations, c)
	}
	resp, err := req.RequestWith(ctx, a.cl)
	if err != nil {
		return nil, fmt.Errorf("create ACLs on %s cluster: %w", a.alias, err)
	}
	if len(resp.Results) != len(bindings) {
		return nil, fmt.Errorf("create ACLs on %s cluster: %d results for %d ACLs", a.alias, len(resp.Results), len(bindings))
	}
	out := make([]error, len(bindings))
	for i, r := range resp.Results {
		out[i] = withMessage(kerr.ErrorForCode(r.ErrorCode), derefString(r.ErrorMessage))
	}
	return out, nil
}

// syncTopicACLs is MirrorSourceConnector.syncTopicAcls: the source's
// literal topic ACLs of the topics it replicates, less ALLOW WRITE, with
// ALLOW ALL downgraded to ALLOW READ, are created on their remote topics.
// Nothing is ever deleted on the target, as in MM2. A source without an
// authorizer is noted once (info) and then only at debug level, each
// interval, as MM2 does: the sync is then a no-op, not an error.
func (c *Connector) syncTopicACLs(ctx context.Context) error {
	raw, err := c.src.describeTopicACLs(ctx)
	if errors.Is(err, errNoAuthorizer) {
		if c.noACLAuthorizer.CompareAndSwap(false, true) {
			c.log.Info("No ACL authorizer is configured on the source Kafka cluster, so no topic ACL syncing will take place. " +
				"Consider disabling topic ACL syncing by setting " + SyncTopicACLsEnabledConfig + " to 'false'.")
		} else {
			c.log.Debug("Source-side ACL authorizer still not found; skipping topic ACL sync")
		}
		return nil
	}
	if err != nil {
		return err
	}
	var bindings []aclBinding
	for _, b := range raw {
		if b.resourceType != kmsg.ACLResourceTypeTopic || b.patternType != kmsg.ACLResourcePatternTypeLiteral ||
			!shouldReplicateACL(b) || !c.shouldReplicateTopic(b.name) {
			continue
		}
		bindings = append(bindings, c.targetACLBinding(b))
	}
	c.log.Debug("Syncing topic ACL bindings", "count", len(bindings))
	if len(bindings) == 0 {
		return nil
	}
	errs, err := c.dst.createACLs(ctx, bindings)
	if err != nil {
		return err
	}
	for i, err := range errs {
		if err != nil {
			c.log.Warn("Could not sync ACL of topic", "topic", bindings[i].name, "acl", bindings[i].String(), "err", err)
		}
	}
	return nil
}

// shouldReplicateACL is MirrorSourceConnector.shouldReplicateAcl: every
// ACL but ALLOW WRITE (only MirrorMaker writes to remote topics). DENY
// ACLs, DENY WRITE included, are replicated.
func shouldReplicateACL(b aclBinding) bool {
	return !(b.permission == kmsg.ACLPermissionTypeAllow && b.operation == kmsg.ACLOperationWrite)
}

// targetACLBinding is MirrorSourceConnector.targetAclBinding: the ACL on
// the remote topic (a literal pattern), ALLOW ALL downgraded to ALLOW
// READ so that nobody but MirrorMaker may write to or alter it.
func (c *Connector) targetACLBinding(b aclBinding) aclBinding {
	out := b
	out.resourceType, out.name, out.patternType = kmsg.ACLResourceTypeTopic, c.formatRemoteTopic(b.name), kmsg.ACLResourcePatternTypeLiteral
	if b.permission == kmsg.ACLPermissionTypeAllow && b.operation == kmsg.ACLOperationAll {
		out.operation = kmsg.ACLOperationRead
	}
	return out
}
