package broker_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
)

// kcatArgs are librdkafka's settings for the case.
func (lc listenerCase) kcatArgs(pki *testPKI, user, pass string) []string {
	args := []string{"-X", "security.protocol=" + lc.protocol}
	if lc.tls() {
		args = append(args, "-X", "ssl.ca.location="+pki.CA)
		if lc.clientCert {
			args = append(args, "-X", "ssl.certificate.location="+pki.ClientCert, "-X", "ssl.key.location="+pki.ClientKey)
		}
	}
	if lc.mechanism != "" {
		args = append(args, "-X", "sasl.mechanisms="+lc.mechanism, "-X", "sasl.username="+user, "-X", "sasl.password="+pass)
	}
	return args
}

// librdkafkaConfig is the kcat settings as a confluent-kafka config.
func (lc listenerCase) librdkafkaConfig(pki *testPKI, addr, user, pass string) string {
	c := map[string]string{"bootstrap.servers": addr}
	args := lc.kcatArgs(pki, user, pass)
	for i := 1; i < len(args); i += 2 {
		k, v, _ := strings.Cut(args[i], "=")
		c[k] = v
	}
	b, _ := json.Marshal(c)
	return string(b)
}

// confluentRoundTrip produces five records and reads them back with
// confluent-kafka; a failure prints the error.
const confluentRoundTrip = `
import json, sys
from confluent_kafka import Producer, Consumer, KafkaException
cfg = json.loads(sys.argv[1]); topic = sys.argv[2]
errs = []
def on_error(e): errs.append(str(e))
p = Producer(dict(cfg, **{"error_cb": on_error, "message.timeout.ms": 10000}))
for i in range(5):
    p.produce(topic, b"ck%d" % i)
left = p.flush(15)
if left or errs:
    print(json.dumps({"error": "produce", "message": "; ".join(errs[:3]) or "%d not delivered" % left})); sys.exit(0)
c = Consumer(dict(cfg, **{"group.id": "ck", "auto.offset.reset": "earliest", "error_cb": on_error}))
c.subscribe([topic])
got = 0
import time
deadline = time.time() + 20
while got < 5 and time.time() < deadline:
    m = c.poll(1)
    if m is not None and not m.error():
        got += 1
c.close()
print(json.dumps({"consumed": got, "error": "; ".join(errs[:3]) if got < 5 else ""}))
`

// pythonConfig is kafka-python's settings for the case.
func (lc listenerCase) pythonConfig(pki *testPKI, addr, user, pass string) string {
	c := map[string]any{"bootstrap_servers": addr, "security_protocol": lc.protocol}
	if lc.tls() {
		c["ssl_cafile"] = pki.CA
		if lc.clientCert {
			c["ssl_certfile"], c["ssl_keyfile"] = pki.ClientCert, pki.ClientKey
		}
	}
	if lc.mechanism != "" {
		c["sasl_mechanism"] = lc.mechanism
		c["sasl_plain_username"], c["sasl_plain_password"] = user, pass
	}
	b, _ := json.Marshal(c)
	return string(b)
}

// pythonRoundTrip produces five records and reads them back; with a wrong
// password it prints the error's class and message instead.
const pythonRoundTrip = `
import json, logging, sys
from kafka import KafkaProducer, KafkaConsumer
class Keep(logging.Handler):
    msgs = []
    def emit(self, r): self.msgs.append(r.getMessage())
logging.getLogger("kafka").addHandler(Keep()); logging.getLogger("kafka").setLevel(logging.DEBUG)
cfg = json.loads(sys.argv[1]); topic = sys.argv[2]
try:
    p = KafkaProducer(request_timeout_ms=10000, max_block_ms=10000, **cfg)
    for i in range(5):
        p.send(topic, b"py%d" % i).get(timeout=10)
    p.flush(); p.close()
    c = KafkaConsumer(topic, auto_offset_reset="earliest", consumer_timeout_ms=10000, **cfg)
    got = [m.value for m in c]
    c.close()
    print(json.dumps({"consumed": len(got)}))
except Exception as e:
    auth = [m for m in Keep.msgs if "SASL" in m or "uth" in m][-6:]
    print(json.dumps({"error": type(e).__name__, "message": str(e), "auth_log": auth}))
`

type pyResult struct {
	Consumed int
	Error    string
	Message  string
	AuthLog  []string `json:"auth_log"`
}

func TestSecureListenersKcatAndPython(t *testing.T) {
	pki := newTestPKI(t)
	for _, lc := range listenerCases() {
		t.Run(lc.name, func(t *testing.T) {
			addr := lc.start(t, pki)
			ctx := testkit.Context(t, 120*time.Second)
			cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, lc.franzOpts(t, pki, "admin", "admin-secret")...)...)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "kcat"); err != nil {
				t.Fatal(err)
			}
			if _, err := kadm.NewClient(cl).CreateTopics(ctx, 1, 1, nil, "python", "confluent"); err != nil {
				t.Fatal(err)
			}

			// kcat (librdkafka): produce three lines and read them back.
			base := append([]string{"-b", addr}, lc.kcatArgs(pki, "alice", "alice-secret")...)
			if _, se, err := testkit.Kcat(t, 30*time.Second, "a\nb\nc\n", append(base, "-P", "-t", "kcat")...); err != nil {
				t.Fatalf("kcat produce: %v\n%s", err, se)
			}
			out, se, err := testkit.Kcat(t, 30*time.Second, "", append(base, "-C", "-t", "kcat", "-o", "beginning", "-e", "-q")...)
			if err != nil || strings.Fields(out) == nil || strings.Join(strings.Fields(out), ",") != "a,b,c" {
				t.Fatalf("kcat consume: got %q, err %v\n%s", out, err, se)
			}
			if lc.mechanism != "" {
				bad := append([]string{"-b", addr, "-m", "10"}, lc.kcatArgs(pki, "alice", "wrong")...)
				_, se, err := testkit.Kcat(t, 30*time.Second, "", append(bad, "-L")...)
				if err == nil || !strings.Contains(se, "Authentication failed") {
					t.Fatalf("kcat with a wrong password: want an authentication failure, got err %v\n%s", err, se)
				}
			}

			// confluent-kafka (librdkafka from Python).
			var ck pyResult
			lastJSON(t, testkit.Python(t, 60*time.Second, confluentRoundTrip, lc.librdkafkaConfig(pki, addr, "alice", "alice-secret"), "confluent"), &ck)
			if ck.Error != "" || ck.Consumed != 5 {
				t.Fatalf("confluent-kafka: %+v", ck)
			}
			if lc.mechanism != "" {
				ck = pyResult{}
				lastJSON(t, testkit.Python(t, 60*time.Second, confluentRoundTrip, lc.librdkafkaConfig(pki, addr, "alice", "wrong"), "confluent"), &ck)
				if !strings.Contains(ck.Message, "Authentication failed") {
					t.Fatalf("confluent-kafka with a wrong password: want an authentication failure, got %+v", ck)
				}
			}

			// kafka-python.
			var res pyResult
			lastJSON(t, testkit.Python(t, 90*time.Second, pythonRoundTrip, lc.pythonConfig(pki, addr, "alice", "alice-secret"), "python"), &res)
			if res.Error != "" || res.Consumed != 5 {
				t.Fatalf("kafka-python: %+v", res)
			}
			if lc.mechanism != "" {
				res = pyResult{}
				lastJSON(t, testkit.Python(t, 90*time.Second, pythonRoundTrip, lc.pythonConfig(pki, addr, "alice", "wrong"), "python"), &res)
				// kafka-python 2.0.2 authenticates with SaslHandshake v0
				// and bare tokens, where Kafka has no way to send an error
				// and closes the connection: the client sees it closed
				// while authenticating and finds no broker.
				closedAuthenticating := false
				for _, m := range res.AuthLog {
					closedAuthenticating = closedAuthenticating || strings.Contains(m, "<authenticating>") && strings.Contains(m, "Closing connection")
				}
				if res.Error == "" || !closedAuthenticating {
					t.Fatalf("kafka-python with a wrong password: want the connection closed while authenticating, got %+v", res)
				}
			}
		})
	}
}
