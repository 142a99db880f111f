package configprovider

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/fjordhq/fjord/broker/config"
)

// Provider is a config provider (Kafka's ConfigProvider): it answers the
// values of keys at a path. A key missing from the answer is not there.
type Provider interface {
	// Get returns the values of keys at path (all of them when keys is
	// empty).
	Get(path string, keys []string) (map[string]string, error)
}

// Kafka's provider class names and the short names Fjord also accepts.
const (
	FileClass = "org.apache.kafka.common.config.provider.FileConfigProvider"
	EnvClass  = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"
	DirClass  = "org.apache.kafka.common.config.provider.DirectoryConfigProvider"
)

// New returns the provider of a class configured with params (the
// config.providers.<name>.param.* properties, prefix removed).
func New(class string, params map[string]string) (Provider, error) {
	allowed, err := parseAllowedPaths(params["allowed.paths"])
	if err != nil {
		return nil, err
	}
	switch strings.TrimSpace(class) {
	case FileClass, "FileConfigProvider", "file":
		return &FileProvider{Allowed: allowed}, nil
	case DirClass, "DirectoryConfigProvider", "dir", "directory":
		return &DirProvider{Allowed: allowed}, nil
	case EnvClass, "EnvVarConfigProvider", "env":
		p := &EnvProvider{}
		if pat, ok := params["allowlist.pattern"]; ok {
			re, err := regexp.Compile("^(?:" + pat + ")$")
			if err != nil {
				return nil, fmt.Errorf("Invalid value %s for configuration allowlist.pattern: %v", pat, err)
			}
			p.Allow = re
		}
		return p, nil
	}
	return nil, fmt.Errorf("config provider class %q is not available: use %s, %s or %s (or their short names file, env, dir)", class, FileClass, EnvClass, DirClass)
}

// allowedPaths is KIP-993's allowed.paths: absolute directories or
// files; a path is allowed when it is one of them or inside one. Nil
// allows every path (Kafka's default).
type allowedPaths []string

func parseAllowedPaths(v string) (allowedPaths, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var out allowedPaths
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("Invalid value %s for configuration allowed.paths: path %s is not absolute", v, p)
		}
		out = append(out, filepath.Clean(p))
	}
	return out, nil
}

// check returns the cleaned path when it is allowed. Like Kafka it
// normalises the path first, so "/allowed/../etc/passwd" is not inside
// /allowed; symbolic links are resolved too, so a link inside an allowed
// directory cannot point outside it.
func (a allowedPaths) check(path string) (string, error) {
	clean := filepath.Clean(path)
	if a == nil {
		return clean, nil
	}
	real := clean
	if r, err := filepath.EvalSymlinks(clean); err == nil {
		real = r
	}
	for _, p := range a {
		base := p
		if r, err := filepath.EvalSymlinks(p); err == nil {
			base = r
		}
		if real == base || strings.HasPrefix(real, base+string(filepath.Separator)) {
			return clean, nil
		}
	}
	return "", fmt.Errorf("path %s is not allowed: it is outside the provider's allowed.paths (%s); move the file or add its directory to config.providers.<name>.param.allowed.paths", path, strings.Join(a, ","))
}

// FileProvider is Kafka's FileConfigProvider: path is a Java properties
// file and keys are its keys.
type FileProvider struct{ Allowed allowedPaths }

func (p *FileProvider) Get(path string, keys []string) (map[string]string, error) {
	if path == "" {
		return nil, fmt.Errorf("the file provider needs a path: ${file:/path/to/file.properties:key}")
	}
	clean, err := p.Allowed.check(path)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(clean)
	if err != nil {
		return nil, fmt.Errorf("could not read properties from file %s: %w", path, err)
	}
	defer f.Close()
	props, err := config.ParseProperties(f)
	if err != nil {
		return nil, fmt.Errorf("could not read properties from file %s: %w", path, err)
	}
	return pick(props, keys), nil
}

// DirProvider is Kafka's DirectoryConfigProvider: path is a directory,
// keys are names of regular files in it (not in subdirectories) and the
// values their contents — as Kubernetes mounts secrets.
type DirProvider struct{ Allowed allowedPaths }

func (p *DirProvider) Get(path string, keys []string) (map[string]string, error) {
	if path == "" {
		return nil, fmt.Errorf("the dir provider needs a directory: ${dir:/path/to/dir:file}")
	}
	dir, err := p.Allowed.check(path)
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("could not list directory %s: %w", path, err)
		}
		for _, e := range entries {
			keys = append(keys, e.Name())
		}
	}
	out := map[string]string{}
	for _, k := range keys {
		// A key names a file directly in the directory, never a path out
		// of it.
		if k == "" || k != filepath.Base(k) || k == "." || k == ".." {
			continue
		}
		name := filepath.Join(dir, k)
		fi, err := os.Stat(name)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("could not read file %s: %w", name, err)
		}
		out[k] = string(b)
	}
	return out, nil
}

// EnvProvider is Kafka's EnvVarConfigProvider: keys are environment
// variables; the path must be empty (${env:VAR}). Allow (Kafka's
// allowlist.pattern) limits which variables can be read.
type EnvProvider struct{ Allow *regexp.Regexp }

func (p *EnvProvider) Get(path string, keys []string) (map[string]string, error) {
	if path != "" {
		return nil, fmt.Errorf("the env provider takes no path (got %q): write ${env:VARIABLE}", path)
	}
	for _, k := range keys {
		if p.Allow != nil && !p.Allow.MatchString(k) {
			return nil, fmt.Errorf("environment variable %s does not match the env provider's allowlist.pattern %s; widen config.providers.<name>.param.allowlist.pattern to read it", k, p.Allow)
		}
	}
	env := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if p.Allow == nil || p.Allow.MatchString(k) {
			env[k] = v
		}
	}
	return pick(env, keys), nil
}

func pick(all map[string]string, keys []string) map[string]string {
	if len(keys) == 0 {
		return all
	}
	out := map[string]string{}
	for _, k := range slices.Compact(slices.Sorted(slices.Values(keys))) {
		if v, ok := all[k]; ok {
			out[k] = v
		}
	}
	return out
}
