package httpsec

import (
	"fmt"
	"os"
	"strings"

	"github.com/fjordhq/fjord/internal/jaas"
)

// Kafka's basic authentication REST extension and its login module.
const (
	BasicAuthExtension = "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
	propertyFileModule = "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule"
	jaasSection        = "KafkaConnect"
)

// jaasCredentialsFile is the file option of the KafkaConnect section's
// PropertyFileLoginModule in the JAAS file at path.
func jaasCredentialsFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("JAAS file for %s: %w", BasicAuthExtension, err)
	}
	sections, err := jaas.ParseFile(string(b))
	if err != nil {
		return "", fmt.Errorf("%s: JAAS file: %w", path, err)
	}
	mods, ok := sections[jaasSection]
	if !ok {
		return "", fmt.Errorf("JAAS file %s has no %s section; add: %s { %s required file=\"/path/credentials.properties\"; };", path, jaasSection, jaasSection, propertyFileModule)
	}
	for _, m := range mods {
		if m.Class == propertyFileModule {
			if strings.TrimSpace(m.Options["file"]) == "" {
				return "", fmt.Errorf("JAAS file %s: %s needs file=\"/path/credentials.properties\"", path, propertyFileModule)
			}
			return m.Options["file"], nil
		}
	}
	return "", fmt.Errorf("JAAS file %s: the %s section must use %s (the only login module Fjord reads)", path, jaasSection, propertyFileModule)
}

// jaasPathFromOpts finds -Djava.security.auth.login.config=path in a
// JVM options string (KAFKA_OPTS).
func jaasPathFromOpts(opts string) string {
	for _, f := range strings.Fields(opts) {
		if v, ok := strings.CutPrefix(f, "-Djava.security.auth.login.config="); ok {
			return strings.Trim(v, `"'`)
		}
	}
	return ""
}
