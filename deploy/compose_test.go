package deploy

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const composeFile = "deploy/compose/compose.yaml"

// compose is the parsed compose.yaml (anchors and merge keys resolved).
type compose struct {
	t        *testing.T
	doc      map[string]any
	services map[string]any
}

func loadCompose(t *testing.T) *compose {
	t.Helper()
	docs := yamlDocs(t, composeFile)
	if len(docs) != 1 {
		t.Fatalf("%s: %d documents, want 1", composeFile, len(docs))
	}
	services, _ := docs[0]["services"].(map[string]any)
	if len(services) == 0 {
		t.Fatalf("%s: no services", composeFile)
	}
	return &compose{t: t, doc: docs[0], services: services}
}

func (c *compose) service(name string) map[string]any {
	c.t.Helper()
	s, ok := c.services[name].(map[string]any)
	if !ok {
		c.t.Fatalf("%s: no service %s", composeFile, name)
	}
	return s
}

// hostFile maps a path inside a service's container to the repository
// file mounted there (a bind mount of compose's short syntax), requiring
// the mount to be read-only.
func (c *compose) hostFile(service, inContainer string) string {
	c.t.Helper()
	for _, v := range strs(c.service(service), "volumes") {
		parts := strings.Split(v, ":")
		if len(parts) < 2 || !strings.HasPrefix(parts[0], ".") {
			continue // a named volume
		}
		rel, err := filepath.Rel(parts[1], inContainer)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		if len(parts) < 3 || parts[2] != "ro" {
			c.t.Errorf("%s: mount %s is writable; config is mounted read-only", service, v)
		}
		return filepath.ToSlash(filepath.Join("deploy/compose", parts[0], rel))
	}
	c.t.Fatalf("%s: nothing of the repository is mounted at %s", service, inContainer)
	return ""
}

// namedVolumeAt is the named volume mounted at (or above) a container
// path, "" if none.
func (c *compose) namedVolumeAt(service, inContainer string) string {
	for _, v := range strs(c.service(service), "volumes") {
		parts := strings.Split(v, ":")
		if len(parts) < 2 || strings.HasPrefix(parts[0], ".") || strings.HasPrefix(parts[0], "/") {
			continue
		}
		if rel, err := filepath.Rel(parts[1], inContainer); err == nil && !strings.HasPrefix(rel, "..") {
			return parts[0]
		}
	}
	return ""
}

// healthcheckURL is the URL a service's healthcheck probes with the
// image's own binary (`fjord healthcheck URL`).
func (c *compose) healthcheckURL(service string) *url.URL {
	c.t.Helper()
	test := strs(c.service(service), "healthcheck", "test")
	if len(test) != 4 || test[0] != "CMD" || test[1] != dockerEntrypoint(c.t) || test[2] != "healthcheck" {
		c.t.Fatalf("%s: healthcheck %q; want [CMD %s healthcheck URL] (the image has no shell)", service, test, dockerEntrypoint(c.t))
	}
	u, err := url.Parse(test[3])
	if err != nil {
		c.t.Fatalf("%s: healthcheck URL %q: %v", service, test[3], err)
	}
	return u
}

// publishedContainerPorts are the container ports of a service's ports.
func (c *compose) publishedContainerPorts(service string) []string {
	var out []string
	for _, p := range strs(c.service(service), "ports") {
		parts := strings.Split(p, ":")
		out = append(out, parts[len(parts)-1])
	}
	return out
}

func port(addr string) string {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	return p
}

var brokerServices = []string{"fjord-1", "fjord-2", "fjord-3"}
var connectServices = []string{"connect-1", "connect-2"}

// TestComposeBrokers: each broker service runs `fjord broker` with the
// mounted server.properties and its overrides, which Fjord accepts key by
// key; its node id, advertised name, the quorum, its data volume, HTTP
// port and healthcheck agree with each other and with the image.
func TestComposeBrokers(t *testing.T) {
	c := loadCompose(t)
	voters := map[int32]string{}
	for i, name := range brokerServices {
		voters[int32(i+1)] = name + ":9093"
	}
	for i, name := range brokerServices {
		svc := c.service(name)
		if img := str(svc, "image"); img != "${FJORD_IMAGE:-fjord:latest}" {
			t.Errorf("%s: image %q, want the Dockerfile's image ${FJORD_IMAGE:-fjord:latest}", name, img)
		}
		if str(svc, "build", "context") != "../.." {
			t.Errorf("%s: build context %q, want the repository root (../..)", name, str(svc, "build", "context"))
		}
		args := parseBrokerArgs(t, name, strs(svc, "command"))
		props := withOverrides(t, readProps(t, c.hostFile(name, args.config)), args.overrides)
		cfg, problems := brokerProblems(props)
		for _, p := range problems {
			t.Errorf("%s: %s", name, p)
		}
		if len(problems) > 0 {
			continue
		}
		if cfg.NodeID != int32(i+1) {
			t.Errorf("%s: node.id %d, want %d", name, cfg.NodeID, i+1)
		}
		if cfg.AdvertisedHost != name || cfg.AdvertisedPort != 9092 {
			t.Errorf("%s: advertises %s:%d, want %s:9092 (its name on the compose network)", name, cfg.AdvertisedHost, cfg.AdvertisedPort, name)
		}
		if port(cfg.ListenAddr) != "9092" || port(cfg.Cluster.ControllerListenAddr) != "9093" {
			t.Errorf("%s: listens on %s and %s, want :9092 and :9093", name, cfg.ListenAddr, cfg.Cluster.ControllerListenAddr)
		}
		if fmt.Sprint(cfg.Cluster.Voters) != fmt.Sprint(voters) {
			t.Errorf("%s: voters %v, want the three broker services %v", name, cfg.Cluster.Voters, voters)
		}
		for _, dir := range cfg.LogManager.Dirs {
			if vol := c.namedVolumeAt(name, dir); vol == "" || !hasKey(c.doc["volumes"], vol) {
				t.Errorf("%s: log dir %s is not on a declared named volume (data would die with the container)", name, dir)
			}
		}
		// The HTTP address, the healthcheck and the published port agree.
		u := c.healthcheckURL(name)
		if u.Path != "/readyz" || u.Port() != port(args.httpAddr) || u.Hostname() != "127.0.0.1" {
			t.Errorf("%s: healthcheck %s; want http://127.0.0.1:%s/readyz (--http-addr %s)", name, u, port(args.httpAddr), args.httpAddr)
		}
		if ports := c.publishedContainerPorts(name); len(ports) != 1 || ports[0] != port(args.httpAddr) {
			t.Errorf("%s: publishes %v, want only the HTTP port %s (Kafka clients run on the compose network)", name, ports, port(args.httpAddr))
		}
		requireExposed(t, name, "9092", "9093", port(args.httpAddr))
	}
}

// TestComposeConnectWorkers: the workers run `fjord connect` with the
// mounted worker file, bootstrap from the three broker services, wait for
// them, and are probed on their REST listener's Kafka Connect /health.
func TestComposeConnectWorkers(t *testing.T) {
	c := loadCompose(t)
	for _, name := range connectServices {
		svc := c.service(name)
		cmd := strs(svc, "command")
		if len(cmd) != 2 || cmd[0] != "connect" {
			t.Fatalf("%s: command %q, want [connect <worker.properties>]", name, cmd)
		}
		wc, problems := workerProblems(readProps(t, c.hostFile(name, cmd[1])))
		for _, p := range problems {
			t.Errorf("%s: %s", name, p)
		}
		if len(problems) > 0 {
			continue
		}
		var want []string
		for _, b := range brokerServices {
			want = append(want, b+":9092")
		}
		if !slices.Equal(wc.BootstrapServers, want) {
			t.Errorf("%s: bootstrap.servers %v, want the broker services %v", name, wc.BootstrapServers, want)
		}
		for _, b := range brokerServices {
			if str(svc, "depends_on", b, "condition") != "service_healthy" {
				t.Errorf("%s: does not wait for %s to be healthy", name, b)
			}
		}
		// Other workers forward requests to this one's advertised URL: its
		// host name (rest.advertised.host.name unset) must be its name.
		if h := str(svc, "hostname"); h != name || wc.RestAdvertisedHostName != "" {
			t.Errorf("%s: hostname %q, rest.advertised.host.name %q; want hostname %s and no advertised name", name, h, wc.RestAdvertisedHostName, name)
		}
		u := c.healthcheckURL(name)
		listenPort := port(strings.TrimPrefix(wc.Listeners[0], "http://"))
		if u.Path != "/health" || u.Port() != listenPort {
			t.Errorf("%s: healthcheck %s; want Kafka Connect's /health on the listener's port %s", name, u, listenPort)
		}
		if ports := c.publishedContainerPorts(name); len(ports) != 1 || ports[0] != listenPort {
			t.Errorf("%s: publishes %v, want the REST port %s", name, ports, listenPort)
		}
		requireExposed(t, name, listenPort)
	}
}

// TestComposeConnectorsMatchServices: the connection values the connector
// configs are written with (TestConnectorConfigs replaces them to run)
// are compose's services, ports, credentials, databases and bucket.
func TestComposeConnectorsMatchServices(t *testing.T) {
	c := loadCompose(t)
	pg := c.service("postgres")
	env := func(svc map[string]any, k string) string { return str(svc, "environment", k) }
	if str(pg, "image") != "postgres:15" {
		t.Errorf("postgres: image %q, want postgres:15 (what the connectors are tested against)", str(pg, "image"))
	}
	if cmd := strings.Join(strs(pg, "command"), " "); !strings.Contains(cmd, "wal_level=logical") {
		t.Errorf("postgres: command %q does not set wal_level=logical (the CDC source needs it)", cmd)
	}
	if !slices.Contains(strs(pg, "volumes"), "./initdb:/docker-entrypoint-initdb.d:ro") {
		t.Errorf("postgres: initdb scripts not mounted at /docker-entrypoint-initdb.d")
	}
	initSQL := string(readFile(t, "deploy/compose/initdb/01-inventory.sql"))

	cdc := readConnector(t, connectorFiles[0]).Config
	for k, want := range map[string]string{
		"database.hostname": "postgres", "database.port": "5432",
		"database.user": env(pg, "POSTGRES_USER"), "database.password": env(pg, "POSTGRES_PASSWORD"),
		"database.dbname": env(pg, "POSTGRES_DB"),
	} {
		if cdc[k] != want {
			t.Errorf("postgres-cdc.json: %s %q, want %q (compose's postgres service)", k, cdc[k], want)
		}
	}

	sink := readConnector(t, connectorFiles[2]).Config
	u, err := url.Parse(strings.TrimPrefix(sink["connection.url"], "jdbc:"))
	if err != nil {
		t.Fatal(err)
	}
	db := strings.TrimPrefix(u.Path, "/")
	if u.Host != "postgres:5432" || !regexp.MustCompile(`(?i)CREATE DATABASE `+regexp.QuoteMeta(db)+`\b`).MatchString(initSQL) {
		t.Errorf("postgres-sink.json: connection.url %s; want postgres:5432 and a database the init script creates", sink["connection.url"])
	}
	if sink["connection.user"] != env(pg, "POSTGRES_USER") || sink["connection.password"] != env(pg, "POSTGRES_PASSWORD") {
		t.Errorf("postgres-sink.json: credentials are not compose's postgres service's")
	}

	minio := c.service("minio")
	s3 := readConnector(t, connectorFiles[1]).Config
	if s3["store.url"] != "http://minio:9000" || !slices.Contains(c.publishedContainerPorts("minio"), "9000") {
		t.Errorf("s3-sink.json: store.url %q, want http://minio:9000 (compose's minio S3 port)", s3["store.url"])
	}
	if s3["aws.access.key.id"] != env(minio, "MINIO_ROOT_USER") || s3["aws.secret.access.key"] != env(minio, "MINIO_ROOT_PASSWORD") {
		t.Errorf("s3-sink.json: credentials are not compose's minio service's")
	}
	if len(env(minio, "MINIO_ROOT_PASSWORD")) < 8 {
		t.Errorf("minio: MINIO_ROOT_PASSWORD must have at least 8 characters or MinIO refuses to start")
	}
	initCmd := strings.Join(strs(c.service("minio-init"), "command"), " ")
	wantAlias := fmt.Sprintf("mc alias set local http://minio:9000 %s %s", env(minio, "MINIO_ROOT_USER"), env(minio, "MINIO_ROOT_PASSWORD"))
	if !strings.Contains(initCmd, wantAlias) || !strings.Contains(initCmd, "mc mb --ignore-existing local/"+s3["s3.bucket.name"]) {
		t.Errorf("minio-init: command %q does not create bucket %q with minio's credentials", initCmd, s3["s3.bucket.name"])
	}
	if str(c.service("minio-init"), "depends_on", "minio", "condition") != "service_healthy" {
		t.Errorf("minio-init: does not wait for minio to be healthy")
	}
}

// TestComposeVolumes: every named volume a service mounts is declared,
// and every declared one is used.
func TestComposeVolumes(t *testing.T) {
	c := loadCompose(t)
	declared, _ := c.doc["volumes"].(map[string]any)
	used := map[string]bool{}
	for name := range c.services {
		for _, v := range strs(c.service(name), "volumes") {
			src, _, _ := strings.Cut(v, ":")
			if strings.HasPrefix(src, ".") || strings.HasPrefix(src, "/") {
				continue
			}
			used[src] = true
			if _, ok := declared[src]; !ok {
				t.Errorf("%s: volume %s is not declared under volumes:", name, src)
			}
		}
	}
	for v := range declared {
		if !used[v] {
			t.Errorf("volume %s is declared but no service mounts it", v)
		}
	}
}

func hasKey(m any, k string) bool {
	mm, ok := m.(map[string]any)
	if !ok {
		return false
	}
	_, ok = mm[k]
	return ok
}

// requireExposed fails unless the Dockerfile EXPOSEs every port.
func requireExposed(t *testing.T, who string, ports ...string) {
	t.Helper()
	exposed := dockerfileExposed(t)
	for _, p := range ports {
		if _, err := strconv.Atoi(p); err != nil || !slices.Contains(exposed, p) {
			t.Errorf("%s: port %q is not EXPOSEd by the Dockerfile (%v)", who, p, exposed)
		}
	}
}
