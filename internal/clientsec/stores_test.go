package clientsec

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
)

// The stores are internal/keystore's test fixtures (made by keytool,
// ../keystore/testdata/gen.sh); that package tests the reading itself.
const stores = "../keystore/testdata/"

// JKS and PKCS12 stores work as Kafka users configure them (types left at their JKS
// default) against Fjord's SSL listener with client authentication.
func TestJavaStoresOnFjordBroker(t *testing.T) {
	b := testkit.StartBroker(t, map[string]string{
		"listeners": "SSL://127.0.0.1:0", "inter.broker.listener.name": "SSL",
		"ssl.keystore.type": "PEM", "ssl.keystore.location": stores + "server.pem",
		"ssl.client.auth": "required", "ssl.truststore.type": "PEM", "ssl.truststore.location": stores + "ca.pem",
	})
	try := func(props map[string]string) error {
		props["security.protocol"] = "SSL"
		opts, problems := Options(props)
		if len(problems) > 0 {
			t.Fatalf("%v", problems)
		}
		cl, err := kgo.NewClient(append(opts, kgo.SeedBrokers(b.Addr), kgo.RequestRetries(0), kgo.RetryTimeout(2*time.Second))...)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err = kadm.NewClient(cl).ListTopics(ctx)
		return err
	}
	if err := try(map[string]string{"ssl.truststore.location": stores + "truststore.jks", "ssl.truststore.password": "trustpass",
		"ssl.keystore.location": stores + "keystore.jks", "ssl.keystore.password": "storepass", "ssl.key.password": "keypass"}); err != nil {
		t.Fatalf("JKS trust and key stores: %v", err)
	}
	if err := try(map[string]string{"ssl.truststore.type": "PKCS12", "ssl.truststore.location": stores + "truststore.p12", "ssl.truststore.password": "trustpass",
		"ssl.keystore.type": "PKCS12", "ssl.keystore.location": stores + "keystore.p12", "ssl.keystore.password": "storepass"}); err != nil {
		t.Fatalf("PKCS12 trust and key stores: %v", err)
	}
	if err := try(map[string]string{"ssl.truststore.location": stores + "truststore.jks"}); err == nil {
		t.Fatal("no client certificate: got in")
	}
}
