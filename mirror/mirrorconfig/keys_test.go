package mirrorconfig

import (
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/mirror/policy"
)

func TestDefineDefaults(t *testing.T) {
	c, err := Parse(NewConfigDef(), map[string]string{SourceClusterAlias: "a", "name": "MirrorSourceConnector"})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Enabled() || c.SourceClusterAlias() != "a" || c.TargetClusterAlias() != "target" || c.AdminTimeout() != time.Minute {
		t.Errorf("defaults: enabled %v source %q target %q admin timeout %v", c.Enabled(), c.SourceClusterAlias(), c.TargetClusterAlias(), c.AdminTimeout())
	}
	if got := c.String(ReplicationPolicyClass); got != policy.DefaultClass {
		t.Errorf("policy class default %q", got)
	}
	if got := c.String(ReplicationPolicySeparator); got != "." {
		t.Errorf("separator default %q", got)
	}
	if !c.Bool(InternalTopicSeparatorEnabled) || c.String(SecurityProtocol) != "PLAINTEXT" || c.String(ForwardingAdminClass) != ForwardingAdminClassDefault {
		t.Error("boolean/security/forwarding defaults")
	}
	if got := c.ReplicationPolicy().FormatRemoteTopic("a", "t"); got != "a.t" {
		t.Errorf("policy: %q", got)
	}
	if got := c.EntityLabel(); got != "a->target|MirrorSourceConnector" {
		t.Errorf("EntityLabel = %q", got)
	}
}

func TestParsePolicy(t *testing.T) {
	c, err := Parse(NewConfigDef(), map[string]string{
		SourceClusterAlias: "a", TargetClusterAlias: "b",
		ReplicationPolicyClass: "IdentityReplicationPolicy", ReplicationPolicySeparator: "_",
	})
	if err != nil {
		t.Fatal(err)
	}
	p := c.ReplicationPolicy()
	// Identity's TopicSource is source.cluster.alias, from the originals.
	if got := p.TopicSource("orders"); got != "a" {
		t.Errorf("TopicSource = %q", got)
	}
	if got := p.OffsetSyncsTopic("a"); got != "mm2-offset-syncs_a_internal" {
		t.Errorf("OffsetSyncsTopic = %q", got)
	}
}

func TestDefineErrors(t *testing.T) {
	cases := []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{}, `Missing required configuration "source.cluster.alias" which has no default value.`},
		{map[string]string{SourceClusterAlias: "a", ReplicationPolicyClass: "com.example.Mine"},
			"Invalid value com.example.Mine for configuration replication.policy.class: Class com.example.Mine could not be found."},
		{map[string]string{SourceClusterAlias: "a", ForwardingAdminClass: "com.example.Admin"},
			"Invalid value com.example.Admin for configuration forwarding.admin.class: Class com.example.Admin could not be found."},
		{map[string]string{SourceClusterAlias: "a", SecurityProtocol: "TLS"},
			"Invalid value TLS for configuration security.protocol: String must be one of (case insensitive): PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"},
		{map[string]string{SourceClusterAlias: "a", AdminTimeoutMs: "soon"},
			"Invalid value soon for configuration admin.timeout.ms: Not a number of type LONG"},
		{map[string]string{SourceClusterAlias: "a", Enabled: "yes"},
			"Invalid value yes for configuration enabled: Expected value to be either true or false"},
	}
	for _, c := range cases {
		_, err := Parse(NewConfigDef(), c.props)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.props, err, c.want)
		}
	}
	if _, err := Parse(NewConfigDef(), map[string]string{SourceClusterAlias: "a", SecurityProtocol: "ssl", ReplicationPolicyClass: policy.IdentityClass}); err != nil {
		t.Errorf("valid config: %v", err)
	}
}
