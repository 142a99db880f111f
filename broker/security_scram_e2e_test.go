package broker_test

// Credentials created through AlterUserScramCredentials (kadm, salting
// client-side as every Kafka client does) authenticate real SCRAM clients
// (franz-go, and librdkafka through kcat) on a SASL listener that reads
// the broker's metadata image — proof that the stored keys are RFC 5802's.

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/fjordhq/fjord/broker"
	"github.com/fjordhq/fjord/broker/auth"
	"github.com/fjordhq/fjord/internal/testkit"
)

// lateStore reads the credentials of a broker that does not exist yet
// when its config is built.
type lateStore struct{ srv *broker.Server }

func (l *lateStore) ScramCredential(user string, m auth.ScramMechanism) (auth.ScramCredential, bool) {
	return l.srv.ScramStore().ScramCredential(user, m)
}

func TestSCRAMCredentialsAuthenticateClients(t *testing.T) {
	plainAddr, saslAddr := testkit.FreeAddr(t), testkit.FreeAddr(t)
	store := &lateStore{}
	store.srv = startSecureBroker(t, map[string]string{
		"listeners":                      "PLAINTEXT://" + plainAddr + ",SASL_PLAINTEXT://" + saslAddr,
		"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT",
		"inter.broker.listener.name":     "PLAINTEXT",
		"sasl.enabled.mechanisms":        "SCRAM-SHA-256,SCRAM-SHA-512",
	}, store)
	ctx := testkit.Context(t, 30*time.Second)

	adm := testkit.Admin(t, plainAddr)
	res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{
		{User: "alice", Mechanism: kadm.ScramSha256, Iterations: 8192, Password: "alice-secret"},
		{User: "bob", Mechanism: kadm.ScramSha512, Iterations: 4096, Password: "bob-secret"},
	})
	if err != nil || res.Error() != nil {
		t.Fatalf("upsert: %v %v", err, res)
	}

	ping := func(m kgo.Opt) error {
		cl, err := kgo.NewClient(kgo.SeedBrokers(saslAddr), m, kgo.RetryTimeout(2*time.Second))
		if err != nil {
			return err
		}
		defer cl.Close()
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		return cl.Ping(pctx)
	}
	if err := ping(kgo.SASL(scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism())); err != nil {
		t.Fatalf("alice SCRAM-SHA-256: %v", err)
	}
	if err := ping(kgo.SASL(scram.Auth{User: "bob", Pass: "bob-secret"}.AsSha512Mechanism())); err != nil {
		t.Fatalf("bob SCRAM-SHA-512: %v", err)
	}
	for name, m := range map[string]kgo.Opt{
		"wrong password":  kgo.SASL(scram.Auth{User: "alice", Pass: "nope"}.AsSha256Mechanism()),
		"wrong mechanism": kgo.SASL(scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha512Mechanism()),
		"unknown user":    kgo.SASL(scram.Auth{User: "carol", Pass: "x"}.AsSha256Mechanism()),
	} {
		if err := ping(m); !errors.Is(err, kerr.SaslAuthenticationFailed) {
			t.Errorf("%s: %v, want SASL_AUTHENTICATION_FAILED", name, err)
		}
	}

	// librdkafka computes the salted password itself.
	if _, err := exec.LookPath("kcat"); err == nil {
		out, err := exec.CommandContext(ctx, "kcat", "-b", saslAddr, "-L", "-m", "10",
			"-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=SCRAM-SHA-512",
			"-X", "sasl.username=bob", "-X", "sasl.password=bob-secret").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "broker") {
			t.Errorf("kcat as bob: %v\n%s", err, out)
		}
	} else {
		t.Errorf("kcat is not installed (run `make deps`)")
	}

	// Deleting the credential locks the user out at once.
	if res, err := adm.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: "alice", Mechanism: kadm.ScramSha256}}, nil); err != nil || res.Error() != nil {
		t.Fatalf("delete: %v %v", err, res)
	}
	if err := ping(kgo.SASL(scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism())); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Errorf("alice after deletion: %v, want SASL_AUTHENTICATION_FAILED", err)
	}
}
