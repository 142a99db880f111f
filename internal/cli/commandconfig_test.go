package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/api/httpsec/httpsectest"
	"github.com/fjordhq/fjord/internal/testkit"
)

// --command-config with Kafka's client security keys reaches a SASL_SSL
// Fjord broker, as kafka-topics.sh --command-config client.properties
// does; a wrong password or a missing trust store does not get in.
func TestCommandConfigOnSASLSSLBroker(t *testing.T) {
	dir := t.TempDir()
	pki := httpsectest.New(t, dir)
	b := testkit.StartBroker(t, map[string]string{
		"listeners": "SASL_SSL://127.0.0.1:0", "inter.broker.listener.name": "SASL_SSL",
		"sasl.enabled.mechanisms":                       "PLAIN",
		"listener.name.sasl_ssl.plain.sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required user_ops="ops-secret";`,
		"ssl.keystore.type":                             "PEM", "ssl.keystore.location": pki.ServerFile,
	})
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("client.properties", "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n"+
		`sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="ops" password="ops-secret";`+"\n"+
		"ssl.truststore.type=PEM\nssl.truststore.location="+pki.CAFile+"\nclient.id=ops-cli\n")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o := &ClientOptions{Bootstrap: b.Addr, CommandConfig: good, Timeout: 5 * time.Second}
	c, err := o.Connect(ctx)
	if err != nil {
		t.Fatalf("connect with %s: %v", good, err)
	}
	if _, err := c.Admin.CreateTopic(ctx, 1, 1, nil, "cli-secured"); err != nil {
		t.Fatalf("create a topic over SASL_SSL: %v", err)
	}
	topics, err := c.Admin.ListTopics(ctx)
	c.Close()
	if err != nil || !topics.Has("cli-secured") {
		t.Fatalf("list topics: %v %v", topics.Names(), err)
	}

	for name, body := range map[string]string{
		"wrong-password.properties": strings.Replace(mustRead(t, good), "ops-secret", "nope", 1),
		"no-truststore.properties":  strings.Replace(mustRead(t, good), "ssl.truststore.location="+pki.CAFile, "", 1),
		"plaintext.properties":      "client.id=x\n",
	} {
		o := &ClientOptions{Bootstrap: b.Addr, CommandConfig: write(name, body), Timeout: 3 * time.Second}
		c, err := o.Connect(ctx)
		if err == nil {
			_, err = c.Admin.ListTopics(ctx)
			c.Close()
		}
		if err == nil {
			t.Errorf("%s: got in", name)
		} else if strings.Contains(err.Error(), "ops-secret") {
			t.Errorf("%s: the error quotes the password: %v", name, err)
		}
	}

	// The password may come from a config provider, as with Kafka's tools.
	secret := write("secret.properties", "pw=ops-secret\n")
	viaProvider := write("provider.properties", strings.Replace(mustRead(t, good), `password="ops-secret"`, `password="${file:`+secret+`:pw}"`, 1)+
		"config.providers=file\nconfig.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider\n")
	if strings.Contains(mustRead(t, viaProvider), "ops-secret") {
		t.Fatal("the provider test's client.properties still holds the password")
	}
	c, err = (&ClientOptions{Bootstrap: b.Addr, CommandConfig: viaProvider, Timeout: 5 * time.Second}).Connect(ctx)
	if err != nil {
		t.Fatalf("password from a config provider: %v", err)
	}
	c.Close()

	// Settings that cannot work are refused before connecting.
	bad := write("bad.properties", "security.protocol=SASL_SSL\nsasl.mechanism=GSSAPI\nsasl.jaas.config=x required;\n")
	if _, err := (&ClientOptions{Bootstrap: b.Addr, CommandConfig: bad}).Connect(ctx); err == nil ||
		!strings.Contains(err.Error(), "--command-config "+bad) || !strings.Contains(err.Error(), "GSSAPI is not supported") {
		t.Errorf("GSSAPI: %v", err)
	}
}

func mustRead(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
