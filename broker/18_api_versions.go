package broker

// ApiVersions, v0-v5. Answers advertisedVersions in apis.go. A request newer than
// v5 is answered by the protocol layer at v0 with UNSUPPORTED_VERSION
// (KIP-511), so clients retry at a version we speak. No finalized
// features are advertised: Fjord has no KIP-584 feature flags, and
// clients fall back to the classic group protocol without group.version.

import (
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (s *Server) handleApiVersions(r *kmsg.ApiVersionsRequest) *kmsg.ApiVersionsResponse {
	resp := r.ResponseKind().(*kmsg.ApiVersionsResponse)
	for _, k := range sortedAPIKeys {
		vr := advertisedVersions[k]
		resp.ApiKeys = append(resp.ApiKeys, kmsg.ApiVersionsResponseApiKey{ApiKey: k, MinVersion: vr.Min, MaxVersion: vr.Max})
	}
	return resp
}

// sortedAPIKeys lists the served API keys in order (package init order
// guarantees apiVersions is set first).
var sortedAPIKeys = slices.Sorted(maps.Keys(apiVersions))
