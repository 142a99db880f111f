package broker

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Every API the broker serves has an authorization rule, and no rule is
// left for an API it does not serve: a new API cannot slip in unchecked.
func TestAuthzRuleForEveryAPI(t *testing.T) {
	for key := range apiVersions {
		if authzRules[key] == nil {
			t.Errorf("API %s (%d) is in apiVersions but has no rule in authzRules", kmsg.NameForKey(key), key)
		}
	}
	for key := range authzRules {
		if _, ok := apiVersions[key]; !ok {
			t.Errorf("authzRules has a rule for %s (%d), which apiVersions does not serve", kmsg.NameForKey(key), key)
		}
	}
}
