package broker

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/auth"
	"github.com/fjordhq/fjord/broker/authorizer"
	"github.com/fjordhq/fjord/broker/metadata"
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

// BenchmarkAuthzProduceCheck measures what the authorizer adds to one
// Produce request (one topic, 16 partitions) against n stored topic
// ACLs: one Authorize call for the topic, however many partitions or
// records. (The standard authorizer scans a resource type's ACLs
// linearly, so the cost grows with n.)
func BenchmarkAuthzProduceCheck(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("acls=%d", n), func(b *testing.B) {
			img := metadata.Empty()
			img.ACLs = map[metadata.UUID]metadata.ACLWithID{}
			for i := range n {
				var id metadata.UUID
				binary.BigEndian.PutUint32(id[:], uint32(i))
				img.ACLs[id] = metadata.ACLWithID{ID: id, ACL: auth.ACL{ResourceType: auth.ResourceTopic, ResourceName: fmt.Sprintf("topic-%d", i),
					PatternType: auth.PatternLiteral, Principal: fmt.Sprintf("User:u%d", i%50), Host: "*", Operation: auth.OpWrite, Permission: auth.PermissionAllow}}
			}
			s := &Server{}
			s.img.Store(img)
			a := &authzReq{s: s, az: authorizer.NewFromImage(s.image, nil, false), p: auth.User("u7"), host: "127.0.0.1"}
			r := kmsg.NewPtrProduceRequest()
			r.Version, r.Acks = 9, 1
			t := kmsg.ProduceRequestTopic{Topic: "topic-7"}
			for p := range int32(16) {
				t.Partitions = append(t.Partitions, kmsg.ProduceRequestTopicPartition{Partition: p})
			}
			r.Topics = []kmsg.ProduceRequestTopic{t}
			b.ReportAllocs()
			for b.Loop() {
				if deny, post := authzProduce(a, r); deny != nil || post != nil {
					b.Fatal("u7 may write topic-7")
				}
			}
		})
	}
}
