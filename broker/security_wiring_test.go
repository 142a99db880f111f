package broker_test

import (
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/fjordhq/fjord/broker"
	"github.com/fjordhq/fjord/internal/testkit"
)

// TestSCRAMFromMetadataOnSecondListener: a broker with a PLAINTEXT and a
// SASL_PLAINTEXT listener and no SCRAM store given authenticates SCRAM
// users against the credentials in its metadata log (created through the
// PLAINTEXT listener with AlterUserScramCredentials, as `fjord user set`
// does), and tells each listener's clients that listener's address — a
// SASL client bootstrapped on the SASL port must not be sent to the
// PLAINTEXT one.
func TestSCRAMFromMetadataOnSecondListener(t *testing.T) {
	s := startSecureBroker(t, map[string]string{
		"listeners":                      "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
		"inter.broker.listener.name":     "PLAINTEXT",
		"sasl.enabled.mechanisms":        "SCRAM-SHA-256",
		"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT",
	}, nil)
	addrs := s.Addrs()
	if len(addrs) != 2 {
		t.Fatalf("listening on %v, want two listeners", addrs)
	}
	plainAddr, saslAddr := addrs[0].String(), addrs[1].String()
	ctx := testkit.Context(t, 30*time.Second)

	adm := testkit.Admin(t, plainAddr)
	res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: "carol", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: "carol-secret"}})
	if err != nil || res.Error() != nil {
		t.Fatalf("create carol's credential: %v %v", err, res.Error())
	}
	// Metadata through the PLAINTEXT listener names the PLAINTEXT port.
	if md, err := adm.BrokerMetadata(ctx); err != nil || len(md.Brokers) != 1 || brokerAddr(md.Brokers[0]) != plainAddr {
		t.Fatalf("metadata on the PLAINTEXT listener: %+v %v, want %s", md.Brokers, err, plainAddr)
	}

	mech := scram.Auth{User: "carol", Pass: "carol-secret"}.AsSha256Mechanism()
	cl := testkit.Client(t, saslAddr, kgo.SASL(mech), kgo.DefaultProduceTopic("wired"), kgo.AllowAutoTopicCreation())
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("over SASL")}).FirstErr(); err != nil {
		t.Fatalf("produce as carol over SASL_PLAINTEXT: %v", err)
	}
	md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil || len(md.Brokers) != 1 || brokerAddr(md.Brokers[0]) != saslAddr {
		t.Fatalf("metadata on the SASL listener: %+v %v, want %s", md.Brokers, err, saslAddr)
	}

	// A wrong password is refused against the same stored credential.
	bad := testkit.Client(t, saslAddr, kgo.SASL(scram.Auth{User: "carol", Pass: "nope"}.AsSha256Mechanism()))
	if err := bad.Ping(ctx); err == nil || !strings.Contains(err.Error(), "SASL_AUTHENTICATION_FAILED") {
		t.Fatalf("wrong password: %v, want SASL_AUTHENTICATION_FAILED", err)
	}
}

func brokerAddr(b kadm.BrokerDetail) string {
	return b.Host + ":" + strconv.Itoa(int(b.Port))
}

// TestUnknownAuthorizerRefusesToStart: an authorizer.class.name Fjord
// does not have stops start-up (Kafka fails to load the class) instead of
// serving without authorization.
func TestUnknownAuthorizerRefusesToStart(t *testing.T) {
	for _, props := range []map[string]string{
		{"authorizer.class.name": "com.example.MyAuthorizer"},
		{"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer", "super.users": "alice"},
	} {
		all := map[string]string{"node.id": "0", "log.dirs": t.TempDir(), "listeners": "PLAINTEXT://127.0.0.1:0"}
		for k, v := range props {
			all[k] = v
		}
		if _, err := broker.ConfigFromProperties(all, slog.New(slog.DiscardHandler)); err == nil {
			t.Errorf("%v: broker config accepted", props)
		}
	}
}
