package broker

// DescribeClientQuotas, v0-v1 (KIP-546), answered from this broker's
// metadata image as Kafka's ClientQuotasImage.describe does: each filter
// component names an entity type (user, client-id) and a match type —
// exact (that name), default (the default entity) or any ("specified":
// the type is present, default included); strict keeps only entities with
// no other parts. A bad filter fails the whole request (INVALID_REQUEST;
// an unknown entity type UNSUPPORTED_VERSION), with Kafka's messages.

import (
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/metadata"
)

// Kafka's DescribeClientQuotas match types.
const (
	quotaMatchExact     = 0
	quotaMatchDefault   = 1
	quotaMatchSpecified = 2
)

// quotaFilterPart is one filter component: exact names a value (nil: the
// default), any matches whatever the type holds.
type quotaFilterPart struct {
	set, any bool
	name     *string
}

func (s *Server) handleDescribeClientQuotas(r *kmsg.DescribeClientQuotasRequest) *kmsg.DescribeClientQuotasResponse {
	resp := r.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
	fail := func(code *kerr.Error, msg string) *kmsg.DescribeClientQuotasResponse {
		resp.ErrorCode, resp.ErrorMessage = code.Code, &msg
		resp.Entries = nil
		return resp
	}
	filter := map[string]*quotaFilterPart{}
	for _, c := range r.Components {
		switch {
		case c.EntityType == "":
			return fail(kerr.InvalidRequest, "Invalid empty entity type.")
		case filter[c.EntityType] != nil:
			return fail(kerr.InvalidRequest, "Entity type "+c.EntityType+" cannot appear more than once in the filter.")
		}
		switch c.EntityType {
		case metadata.QuotaEntityUser, metadata.QuotaEntityClientID, metadata.QuotaEntityIP:
		default:
			return fail(kerr.UnsupportedVersion, "Unsupported entity type "+c.EntityType)
		}
		p := &quotaFilterPart{set: true}
		switch c.MatchType {
		case quotaMatchExact:
			if c.Match == nil {
				return fail(kerr.InvalidRequest, "Request specified MATCH_TYPE_EXACT, but set match string to null.")
			}
			p.name = c.Match
		case quotaMatchDefault:
			if c.Match != nil {
				return fail(kerr.InvalidRequest, "Request specified MATCH_TYPE_DEFAULT, but also specified a match string.")
			}
		case quotaMatchSpecified:
			if c.Match != nil {
				return fail(kerr.InvalidRequest, "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.")
			}
			p.any = true
		default:
			return fail(kerr.InvalidRequest, "Unknown match type "+itoa(int32(c.MatchType)))
		}
		filter[c.EntityType] = p
	}
	if filter[metadata.QuotaEntityIP] != nil && (filter[metadata.QuotaEntityUser] != nil || filter[metadata.QuotaEntityClientID] != nil) {
		return fail(kerr.InvalidRequest, "Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component.")
	}
	quotas := s.image().ClientQuotas
	// Entries is nullable: null only with an error. Kafka's admin client
	// (kafka-configs.sh) reads a null list on success as a crash.
	resp.Entries = []kmsg.DescribeClientQuotasResponseEntry{}
	for _, e := range quotas.QuotaEntitiesSorted() {
		if !quotaFilterMatches(e, filter, r.Strict) {
			continue
		}
		entry := kmsg.NewDescribeClientQuotasResponseEntry()
		for _, d := range e.EntityData() {
			ed := kmsg.NewDescribeClientQuotasResponseEntryEntity()
			ed.Type, ed.Name = d.Type, d.Name
			entry.Entity = append(entry.Entity, ed)
		}
		values := quotas.Entities[e]
		for _, k := range slices.Sorted(maps.Keys(values)) {
			v := kmsg.NewDescribeClientQuotasResponseEntryValue()
			v.Key, v.Value = k, values[k]
			entry.Values = append(entry.Values, v)
		}
		resp.Entries = append(resp.Entries, entry)
	}
	return resp
}

// quotaFilterMatches is ClientQuotasImage.matches. An ip filter matches
// nothing: Fjord stores no ip entities.
func quotaFilterMatches(e metadata.QuotaEntity, filter map[string]*quotaFilterPart, strict bool) bool {
	if filter[metadata.QuotaEntityIP] != nil {
		return false
	}
	n := 0
	if e.User != metadata.QuotaAbsent {
		n++
	}
	if e.Client != metadata.QuotaAbsent {
		n++
	}
	if strict && n != len(filter) {
		return false
	}
	part := func(f *quotaFilterPart, p metadata.QuotaPart, name string) bool {
		switch {
		case f == nil:
			return true
		case p == metadata.QuotaAbsent:
			return false
		case f.any:
			return true
		case f.name == nil:
			return p == metadata.QuotaDefault
		default:
			return p == metadata.QuotaNamed && name == *f.name
		}
	}
	return part(filter[metadata.QuotaEntityUser], e.User, e.UserName) &&
		part(filter[metadata.QuotaEntityClientID], e.Client, e.ClientName)
}
