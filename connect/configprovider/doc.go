// Package configprovider resolves Kafka's config variables —
// ${provider:path:key} and ${provider:key} — with Kafka's config
// providers (KIP-297, KIP-421): FileConfigProvider (${file:/a.properties:key},
// a key of a properties file), EnvVarConfigProvider (${env:VAR}, an
// environment variable, KIP-887) and DirectoryConfigProvider
// (${dir:/some/dir:name}, the contents of a file in a directory, KIP-632).
//
// A Connect worker configures them in its properties
// (config.providers=file,env,dir; config.providers.file.class=...;
// config.providers.file.param.allowed.paths=... — KIP-993's allowlist)
// and resolves connector configs with them when a connector or task
// starts, so the stored config keeps the placeholders and the secrets
// stay in the files and the environment.
//
// One deliberate difference from Kafka: Kafka leaves a variable it
// cannot resolve (unknown provider, missing key, path not allowed) in
// the value as it is, and the connector later fails on a literal
// "${file:...}" with an error that says nothing about providers. Here
// resolving fails instead, with an error naming the variable and what to
// change.
package configprovider
