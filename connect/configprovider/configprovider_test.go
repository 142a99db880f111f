package configprovider

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestResolveFileEnvDir(t *testing.T) {
	dir := t.TempDir()
	props := filepath.Join(dir, "db.properties")
	write(t, props, "# secrets\nuser=app\npassword = s3cr3t\\=x\n")
	secrets := filepath.Join(dir, "secrets")
	os.Mkdir(secrets, 0o700)
	write(t, filepath.Join(secrets, "token"), "tok-123")
	t.Setenv("FJORD_CP_TEST", "from-env")

	ps, err := FromProps(map[string]string{
		"config.providers":                             "file, env,dir",
		"config.providers.file.class":                  FileClass,
		"config.providers.file.param.allowed.paths":    dir,
		"config.providers.env.class":                   "EnvVarConfigProvider",
		"config.providers.env.param.allowlist.pattern": "FJORD_.*",
		"config.providers.dir.class":                   "dir",
	})
	if err != nil {
		t.Fatal(err)
	}
	got, secretsUsed, err := ps.ResolveSecrets(map[string]string{
		"connection.url": "postgres://${file:" + props + ":user}:${file:" + props + ":password}@db/x",
		"token":          "${dir:" + secrets + ":token}",
		"env":            "${env:FJORD_CP_TEST}",
		"plain":          "no variables; ${topic} is not one",
		"topic.format":   "${topic}-${timestamp}",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"connection.url": "postgres://app:s3cr3t=x@db/x",
		"token":          "tok-123",
		"env":            "from-env",
		"plain":          "no variables; ${topic} is not one",
		"topic.format":   "${topic}-${timestamp}",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	joined := strings.Join(secretsUsed, "|")
	for _, s := range []string{"s3cr3t=x", "tok-123", "from-env", "app"} {
		if !strings.Contains(joined, s) {
			t.Errorf("secrets %q lack %q", joined, s)
		}
	}
}

func TestResolveErrorsNameTheVariableNotTheSecret(t *testing.T) {
	dir := t.TempDir()
	props := filepath.Join(dir, "a.properties")
	write(t, props, "password=topsecret\n")
	other := t.TempDir()
	outside := filepath.Join(other, "b.properties")
	write(t, outside, "password=elsewhere\n")
	ps, err := FromProps(map[string]string{
		"config.providers":                             "file,env",
		"config.providers.file.class":                  FileClass,
		"config.providers.file.param.allowed.paths":    dir,
		"config.providers.env.class":                   EnvClass,
		"config.providers.env.param.allowlist.pattern": "FJORD_.*",
	})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		value, want string
	}{
		{"${vault:secret/db:password}", "config provider vault is not configured"},
		{"${file:" + props + ":nope}", "found no key nope at " + props},
		{"${file:" + dir + "/missing.properties:k}", "could not read properties from file"},
		{"${file:" + outside + ":password}", "is not allowed"},
		{"${file:" + dir + "/../" + filepath.Base(other) + "/b.properties:password}", "is not allowed"},
		{"${env:HOME}", "does not match the env provider's allowlist.pattern"},
		{"${env:FJORD_CP_UNSET_VARIABLE}", "has no value for FJORD_CP_UNSET_VARIABLE"},
		{"${env:/x:FJORD_A}", "takes no path"},
	}
	for _, c := range cases {
		_, err := ps.Resolve(map[string]string{"password": "x" + c.value + "y", "other": "${file:" + props + ":password}"})
		var re ResolveErrors
		if !errors.As(err, &re) || len(re) != 1 {
			t.Errorf("%s: err %v, want one ResolveError", c.value, err)
			continue
		}
		if re[0].Key != "password" || re[0].Variable != c.value || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want key password, the variable and %q", c.value, err, c.want)
		}
		if strings.Contains(err.Error(), "topsecret") || strings.Contains(err.Error(), "elsewhere") {
			t.Errorf("error leaks a secret: %v", err)
		}
	}
}

func TestFromPropsErrors(t *testing.T) {
	for props, want := range map[*map[string]string]string{
		{"config.providers": "file"}: "config.providers.file.class is not set",
		{"config.providers": "x", "config.providers.x.class": "com.example.Vault"}:                                         "is not available",
		{"config.providers": "f", "config.providers.f.class": "file", "config.providers.f.param.allowed.paths": "rel/dir"}: "is not absolute",
		{"config.providers": "e", "config.providers.e.class": "env", "config.providers.e.param.allowlist.pattern": "("}:    "allowlist.pattern",
	} {
		if _, err := FromProps(*props); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: err %v, want %q", *props, err, want)
		}
	}
	ps, err := FromProps(map[string]string{})
	if err != nil || len(ps) != 0 {
		t.Fatalf("no providers: %v %v", ps, err)
	}
}

func TestDirProviderStaysInTheDirectory(t *testing.T) {
	root := t.TempDir()
	d := filepath.Join(root, "d")
	os.Mkdir(d, 0o700)
	os.Mkdir(filepath.Join(d, "sub"), 0o700)
	write(t, filepath.Join(root, "outside"), "no")
	write(t, filepath.Join(d, "sub", "inner"), "no")
	write(t, filepath.Join(d, "ok"), "yes")
	got, err := (&DirProvider{}).Get(d, []string{"ok", "../outside", "sub", "sub/inner"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["ok"] != "yes" {
		t.Fatalf("got %v, want only ok", got)
	}
	// A symbolic link out of an allowed directory is not allowed.
	if err := os.Symlink(root, filepath.Join(d, "link")); err != nil {
		t.Fatal(err)
	}
	p := &FileProvider{Allowed: allowedPaths{d}}
	write(t, filepath.Join(root, "x.properties"), "k=v\n")
	if _, err := p.Get(filepath.Join(d, "link", "x.properties"), []string{"k"}); err == nil || !strings.Contains(err.Error(), "not allowed") {
		t.Fatalf("symlink escape: %v", err)
	}
}

func TestRestore(t *testing.T) {
	raw := map[string]string{"file": "${env:F}", "topics": "t"}
	task := map[string]string{"file": "/secret/path", "topics": "t", "task.class": "X"}
	got := Restore(raw, task)
	if got["file"] != "${env:F}" || got["topics"] != "t" || got["task.class"] != "X" {
		t.Fatalf("%v", got)
	}
}
