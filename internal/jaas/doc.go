// Package jaas parses JAAS configuration as Kafka reads it: the one
// login module of a sasl.jaas.config value (Kafka's JaasConfig), and the
// named sections of a JAAS file (Java's ConfigFile, which Connect's
// BasicAuthSecurityRestExtension reads through
// java.security.auth.login.config).
//
// Both share one tokenizer and one login-module grammar:
//
//	<class> <flag> [key=value ...] ;
//
// where flag is required, requisite, sufficient or optional (any case),
// and a value is a bare word or a "double" or 'single' quoted string in
// which a backslash escapes the next character. Errors never quote option
// values: they hold passwords.
package jaas
