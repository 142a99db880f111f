package deploy

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const k8sDir = "deploy/kubernetes"

// k8s is every manifest of deploy/kubernetes, by kind and name.
type k8s struct {
	t       *testing.T
	objects map[string]map[string]any // "Kind/name"
	files   map[string]string         // "Kind/name" -> file
}

func loadK8s(t *testing.T) *k8s {
	t.Helper()
	k := &k8s{t: t, objects: map[string]map[string]any{}, files: map[string]string{}}
	entries, err := os.ReadDir(repoPath(k8sDir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".yaml") || e.Name() == "kustomization.yaml" {
			continue
		}
		rel := k8sDir + "/" + e.Name()
		for _, doc := range yamlDocs(t, rel) {
			id := str(doc, "kind") + "/" + str(doc, "metadata", "name")
			if _, dup := k.objects[id]; dup {
				t.Fatalf("%s: %s defined twice", rel, id)
			}
			k.objects[id] = doc
			k.files[id] = e.Name()
		}
	}
	return k
}

func (k *k8s) get(kind, name string) map[string]any {
	k.t.Helper()
	o, ok := k.objects[kind+"/"+name]
	if !ok {
		k.t.Fatalf("%s: no %s %s", k8sDir, kind, name)
	}
	return o
}

// TestKubernetesManifests: every manifest's fields are Kubernetes's
// (k8sfields_test.go), and kustomization.yaml lists every manifest but
// the Secret template, each file existing.
func TestKubernetesManifests(t *testing.T) {
	k := loadK8s(t)
	for _, id := range slices.Sorted(maps.Keys(k.objects)) {
		for _, p := range k8sFieldProblems(k.objects[id]) {
			t.Errorf("%s (%s): %s", id, k.files[id], p)
		}
		if ns := str(k.objects[id], "metadata", "namespace"); ns != "" {
			t.Errorf("%s: namespace %q; the manifests are namespace-less (kubectl -n / kustomize namespace)", id, ns)
		}
	}
	kust := yamlDocs(t, k8sDir+"/kustomization.yaml")[0]
	resources := strs(kust, "resources")
	for _, r := range resources {
		if _, err := os.Stat(repoPath(k8sDir + "/" + r)); err != nil {
			t.Errorf("kustomization.yaml: resource %s: %v", r, err)
		}
	}
	for _, f := range slices.Sorted(maps.Values(k.files)) {
		listed := slices.Contains(resources, f)
		if f == "secret-example.yaml" && listed {
			t.Errorf("kustomization.yaml applies secret-example.yaml: its placeholder credentials would be deployed")
		} else if f != "secret-example.yaml" && !listed {
			t.Errorf("kustomization.yaml does not list %s", f)
		}
	}
	// Every container image is the one kustomization's images rewrites,
	// or a pinned helper image.
	imgs := map[string]bool{}
	for _, im := range list(kust, "images") {
		imgs[str(im, "name")] = true
	}
	for id, o := range k.objects {
		for _, c := range podContainers(o) {
			img := str(c, "image")
			if !imgs[img] && !regexp.MustCompile(`^[a-z0-9./-]+:[0-9][0-9.]*$`).MatchString(img) {
				t.Errorf("%s: container %s image %q is neither the fjord image (kustomize images) nor pinned to a version", id, str(c, "name"), img)
			}
		}
	}
}

// podContainers are the init and regular containers of a workload.
func podContainers(o map[string]any) []any {
	return append(list(o, "spec", "template", "spec", "initContainers"), list(o, "spec", "template", "spec", "containers")...)
}

func container(t *testing.T, o map[string]any, name string) map[string]any {
	t.Helper()
	for _, c := range podContainers(o) {
		if str(c, "name") == name {
			return c.(map[string]any)
		}
	}
	t.Fatalf("%s: no container %s", str(o, "metadata", "name"), name)
	return nil
}

// expand replaces $(VAR) as the kubelet does in command and args.
func expand(s string, env map[string]string) string {
	return regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`).ReplaceAllStringFunc(s, func(m string) string {
		if v, ok := env[m[2:len(m)-1]]; ok {
			return v
		}
		return m
	})
}

// fieldEnv maps each env var of a container to its value or, for
// downward API variables, its fieldPath in braces.
func fieldEnv(c map[string]any) map[string]string {
	out := map[string]string{}
	for _, e := range list(c, "env") {
		if fp := str(e, "valueFrom", "fieldRef", "fieldPath"); fp != "" {
			out[str(e, "name")] = "{" + fp + "}"
		} else {
			out[str(e, "name")] = str(e, "value")
		}
	}
	return out
}

// containerPort is the number of a named container port.
func containerPort(t *testing.T, c map[string]any, name string) string {
	t.Helper()
	for _, p := range list(c, "ports") {
		if str(p, "name") == name {
			return fmt.Sprint(get(p, "containerPort"))
		}
	}
	t.Fatalf("container %s: no port named %q", str(c, "name"), name)
	return ""
}

// probe is a container probe's path and port number.
func probe(t *testing.T, c map[string]any, kind string) (string, string) {
	t.Helper()
	p := get(c, kind)
	if p == nil {
		t.Fatalf("container %s: no %s", str(c, "name"), kind)
	}
	port := fmt.Sprint(get(p, "httpGet", "port"))
	if _, err := strconv.Atoi(port); err != nil {
		port = containerPort(t, c, port)
	}
	return str(p, "httpGet", "path"), port
}

// mountedFrom returns the volume mounted at (or above) a container path
// and the path inside that volume.
func mountedFrom(t *testing.T, o, c map[string]any, inContainer string) (map[string]any, string) {
	t.Helper()
	for _, m := range list(c, "volumeMounts") {
		rel, err := filepath.Rel(str(m, "mountPath"), inContainer)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		for _, v := range list(o, "spec", "template", "spec", "volumes") {
			if str(v, "name") == str(m, "name") {
				return v.(map[string]any), rel
			}
		}
		for _, v := range list(o, "spec", "volumeClaimTemplates") {
			if str(v, "metadata", "name") == str(m, "name") {
				return map[string]any{"persistentVolumeClaim": v}, rel
			}
		}
		t.Fatalf("container %s mounts volume %s, which the pod does not define", str(c, "name"), str(m, "name"))
	}
	t.Fatalf("container %s: nothing is mounted at %s", str(c, "name"), inContainer)
	return nil, ""
}

// selects reports whether a selector's labels all appear in labels.
func selects(selector, labels any) bool {
	sel, _ := selector.(map[string]any)
	lab, _ := labels.(map[string]any)
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if lab[k] != v {
			return false
		}
	}
	return true
}

// TestKubernetesBrokers: each of the StatefulSet's pods, with its index,
// name and namespace put into the args as the kubelet does, starts a
// broker Fjord accepts key by key, as the node the quorum expects, on the
// ports its Services, probes and the image use.
func TestKubernetesBrokers(t *testing.T) {
	k := loadK8s(t)
	sts := k.get("StatefulSet", "fjord")
	spec := get(sts, "spec")
	replicas := int(get(spec, "replicas").(float64))
	if replicas != 3 || str(spec, "podManagementPolicy") != "Parallel" {
		t.Errorf("replicas %d, podManagementPolicy %q; want 3 and Parallel (the nodes wait for each other's quorum)", replicas, str(spec, "podManagementPolicy"))
	}
	if !selects(get(spec, "selector", "matchLabels"), get(spec, "template", "metadata", "labels")) {
		t.Errorf("the selector does not select the pod template's labels")
	}
	headless := k.get("Service", str(spec, "serviceName"))
	if str(headless, "spec", "clusterIP") != "None" || get(headless, "spec", "publishNotReadyAddresses") != true {
		t.Errorf("Service %s: want clusterIP None and publishNotReadyAddresses (pods find each other before they are ready)", str(spec, "serviceName"))
	}
	c := container(t, sts, "fjord")
	env := fieldEnv(c)
	for name, want := range map[string]string{"POD_NAME": "{metadata.name}", "POD_NAMESPACE": "{metadata.namespace}",
		"POD_INDEX": "{metadata.labels['apps.kubernetes.io/pod-index']}"} {
		if env[name] != want {
			t.Errorf("env %s = %q, want the downward API's %s", name, env[name], want)
		}
	}
	args := strs(c, "args")
	b := parseBrokerArgs(t, "StatefulSet fjord", args)
	cm, key := mountedFrom(t, sts, c, b.config)
	cmName := str(cm, "configMap", "name")
	text := str(k.get("ConfigMap", cmName), "data", key)
	if text == "" {
		t.Fatalf("ConfigMap %s has no %s for --config %s", cmName, key, b.config)
	}
	props := parseProps(t, "ConfigMap "+cmName, text)

	const ns = "streaming" // any namespace: the names must follow it
	for i := range replicas {
		pod := fmt.Sprintf("fjord-%d", i)
		vars := map[string]string{"POD_NAME": pod, "POD_NAMESPACE": ns, "POD_INDEX": strconv.Itoa(i)}
		var overrides []string
		for _, o := range b.overrides {
			overrides = append(overrides, expand(o, vars))
		}
		cfg, problems := brokerProblems(withOverrides(t, props, overrides))
		for _, p := range problems {
			t.Errorf("%s: %s", pod, p)
		}
		if len(problems) > 0 {
			continue
		}
		if cfg.NodeID != int32(i) {
			t.Errorf("%s: node.id %d, want its index %d", pod, cfg.NodeID, i)
		}
		wantHost := fmt.Sprintf("%s.%s.%s.svc", pod, str(spec, "serviceName"), ns)
		if cfg.AdvertisedHost != wantHost || fmt.Sprint(cfg.AdvertisedPort) != containerPort(t, c, "kafka") {
			t.Errorf("%s: advertises %s:%d, want %s:%s (its stable name)", pod, cfg.AdvertisedHost, cfg.AdvertisedPort, wantHost, containerPort(t, c, "kafka"))
		}
		for id := range replicas {
			want := fmt.Sprintf("fjord-%d.%s:%s", id, str(spec, "serviceName"), containerPort(t, c, "controller"))
			if cfg.Cluster.Voters[int32(id)] != want {
				t.Errorf("%s: voter %d is %q, want pod fjord-%d's controller listener %s", pod, id, cfg.Cluster.Voters[int32(id)], id, want)
			}
		}
		if len(cfg.Cluster.Voters) != replicas {
			t.Errorf("%s: %d voters for %d replicas", pod, len(cfg.Cluster.Voters), replicas)
		}
		if port(cfg.ListenAddr) != containerPort(t, c, "kafka") || port(cfg.Cluster.ControllerListenAddr) != containerPort(t, c, "controller") {
			t.Errorf("%s: listens on %s and %s; the container ports are kafka %s, controller %s", pod, cfg.ListenAddr, cfg.Cluster.ControllerListenAddr, containerPort(t, c, "kafka"), containerPort(t, c, "controller"))
		}
		for _, dir := range cfg.LogManager.Dirs {
			if v, _ := mountedFrom(t, sts, c, dir); get(v, "persistentVolumeClaim") == nil {
				t.Errorf("%s: log dir %s is not on the volumeClaimTemplate's volume", pod, dir)
			}
		}
	}

	httpPort := containerPort(t, c, "http")
	if port(b.httpAddr) != httpPort {
		t.Errorf("--http-addr %s, container port http %s", b.httpAddr, httpPort)
	}
	for kind, want := range map[string]string{"startupProbe": "/healthz", "livenessProbe": "/healthz", "readinessProbe": "/readyz"} {
		if p, pt := probe(t, c, kind); p != want || pt != httpPort {
			t.Errorf("%s: %s on %s, want %s on the HTTP port %s", kind, p, pt, want, httpPort)
		}
	}
	requireExposed(t, "StatefulSet fjord", containerPort(t, c, "kafka"), containerPort(t, c, "controller"), httpPort)
	checkPodSecurity(t, "StatefulSet fjord", sts, c)
	if get(sts, "spec", "template", "spec", "securityContext", "fsGroup") != float64(nonrootUID) {
		t.Errorf("fsGroup is not %d: the PersistentVolume would not be writable for the nonroot user", nonrootUID)
	}
	checkMemory(t, "StatefulSet fjord", c)
	checkServices(t, k, sts, c)

	pdb := k.get("PodDisruptionBudget", "fjord")
	if get(pdb, "spec", "maxUnavailable") != float64(1) || !selects(get(pdb, "spec", "selector", "matchLabels"), get(spec, "template", "metadata", "labels")) {
		t.Errorf("PodDisruptionBudget fjord: want maxUnavailable 1 over the broker pods")
	}
}

// TestKubernetesConnect: the worker pods run `fjord connect` with the
// ConfigMap's file plus the init container's rest.advertised.host.name,
// which Fjord accepts key by key and which advertises the pod IP;
// bootstrap is the brokers' client Service; probes hit Kafka Connect's
// /health on the REST listener.
func TestKubernetesConnect(t *testing.T) {
	k := loadK8s(t)
	dep := k.get("Deployment", "fjord-connect")
	spec := get(dep, "spec")
	if get(spec, "replicas") != float64(2) {
		t.Errorf("replicas %v, want 2", get(spec, "replicas"))
	}
	if !selects(get(spec, "selector", "matchLabels"), get(spec, "template", "metadata", "labels")) {
		t.Errorf("the selector does not select the pod template's labels")
	}
	c := container(t, dep, "connect")
	args := strs(c, "args")
	if len(args) != 2 || args[0] != "connect" {
		t.Fatalf("args %q, want [connect <worker.properties>]", args)
	}
	// The init container writes args[1] from the ConfigMap: cat the
	// mounted file into the shared volume, then append the pod IP.
	initC := container(t, dep, "worker-config")
	if fieldEnv(initC)["POD_IP"] != "{status.podIP}" {
		t.Errorf("init container: POD_IP is not the downward API's status.podIP")
	}
	script := strings.Join(strs(initC, "command"), " ")
	m := regexp.MustCompile(`cat (\S+) > (\S+) && echo "rest\.advertised\.host\.name=\$\(POD_IP\)" >> (\S+)$`).FindStringSubmatch(script)
	if m == nil || m[2] != m[3] {
		t.Fatalf("init container command %q: want cat <ConfigMap file> > <file> && echo \"rest.advertised.host.name=$(POD_IP)\" >> <file>", script)
	}
	src, written := m[1], m[2]
	if written != args[1] {
		t.Errorf("init container writes %s, the worker reads %s", written, args[1])
	}
	wInit, _ := mountedFrom(t, dep, initC, written)
	wMain, _ := mountedFrom(t, dep, c, args[1])
	if get(wInit, "emptyDir") == nil || str(wInit, "name") != str(wMain, "name") {
		t.Errorf("the init container and the worker do not share an emptyDir for %s", args[1])
	}
	cm, key := mountedFrom(t, dep, initC, src)
	text := str(k.get("ConfigMap", str(cm, "configMap", "name")), "data", key)
	if strings.Contains(text, "rest.advertised.host.name") {
		t.Errorf("the ConfigMap sets rest.advertised.host.name; the init container adds it per pod")
	}
	const podIP = "10.244.1.7"
	wc, problems := workerProblems(parseProps(t, "worker config", text+"rest.advertised.host.name="+podIP+"\n"))
	for _, p := range problems {
		t.Errorf("worker config: %s", p)
	}
	if len(problems) > 0 {
		return
	}
	restPort := containerPort(t, c, "http")
	if got, want := wc.AdvertisedURL(""), "http://"+podIP+":"+restPort+"/"; got != want {
		t.Errorf("advertised URL %s, want %s (the pod IP and the REST port)", got, want)
	}
	client := k.get("Service", "fjord")
	kafkaPort := ""
	for _, p := range list(client, "spec", "ports") {
		if str(p, "name") == "kafka" {
			kafkaPort = fmt.Sprint(get(p, "port"))
		}
	}
	if !slices.Equal(wc.BootstrapServers, []string{"fjord:" + kafkaPort}) {
		t.Errorf("bootstrap.servers %v, want the brokers' client Service fjord:%s", wc.BootstrapServers, kafkaPort)
	}
	for _, kind := range []string{"startupProbe", "livenessProbe", "readinessProbe"} {
		if p, pt := probe(t, c, kind); p != "/health" || pt != restPort {
			t.Errorf("%s: %s on %s, want Kafka Connect's /health on the REST port %s", kind, p, pt, restPort)
		}
	}
	requireExposed(t, "Deployment fjord-connect", restPort)
	checkPodSecurity(t, "Deployment fjord-connect", dep, c)
	checkMemory(t, "Deployment fjord-connect", c)
	checkServices(t, k, dep, c)
	pdb := k.get("PodDisruptionBudget", "fjord-connect")
	if !selects(get(pdb, "spec", "selector", "matchLabels"), get(spec, "template", "metadata", "labels")) {
		t.Errorf("PodDisruptionBudget fjord-connect does not select the worker pods")
	}
}

// The distroless image's nonroot user.
const nonrootUID = 65532

// checkPodSecurity: non-root as the image's user, no privilege
// escalation, and with a read-only root filesystem a writable /tmp (the
// S3 sink spools there).
func checkPodSecurity(t *testing.T, who string, o, c map[string]any) {
	t.Helper()
	psc := get(o, "spec", "template", "spec", "securityContext")
	if get(psc, "runAsNonRoot") != true || get(psc, "runAsUser") != float64(nonrootUID) {
		t.Errorf("%s: want runAsNonRoot and runAsUser %d (distroless nonroot)", who, nonrootUID)
	}
	csc := get(c, "securityContext")
	if get(csc, "allowPrivilegeEscalation") != false {
		t.Errorf("%s: allowPrivilegeEscalation is not false", who)
	}
	if get(csc, "readOnlyRootFilesystem") == true {
		if v, _ := mountedFrom(t, o, c, "/tmp"); get(v, "emptyDir") == nil {
			t.Errorf("%s: read-only root filesystem without an emptyDir at /tmp", who)
		}
	}
}

// checkMemory: a memory request and limit, and GOMEMLIMIT below the
// limit (the Go runtime would otherwise size its heap from the node).
func checkMemory(t *testing.T, who string, c map[string]any) {
	t.Helper()
	lim, err := parseQuantity(str(c, "resources", "limits", "memory"))
	if err != nil {
		t.Errorf("%s: memory limit: %v", who, err)
		return
	}
	if _, err := parseQuantity(str(c, "resources", "requests", "memory")); err != nil {
		t.Errorf("%s: memory request: %v", who, err)
	}
	g := fieldEnv(c)["GOMEMLIMIT"]
	n, err := parseGoMemLimit(g)
	if err != nil || n <= 0 || n >= lim {
		t.Errorf("%s: GOMEMLIMIT %q (%d bytes, %v) must be set below the memory limit (%d bytes)", who, g, n, err, lim)
	}
}

// parseQuantity reads a Kubernetes memory quantity: an integer with an
// optional Ki/Mi/Gi/Ti or k/M/G/T suffix.
func parseQuantity(s string) (int64, error) {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}} {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseInt(n, 10, 64)
			return v * u.mult, err
		}
	}
	return strconv.ParseInt(s, 10, 64)
}

// parseGoMemLimit reads GOMEMLIMIT's syntax: a number of bytes with an
// optional B, KiB, MiB, GiB or TiB suffix.
func parseGoMemLimit(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}
	for _, u := range units {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseInt(n, 10, 64)
			return v * u.mult, err
		}
	}
	return strconv.ParseInt(s, 10, 64)
}

// checkServices: every Service selecting the workload's pods targets
// ports the container has.
func checkServices(t *testing.T, k *k8s, o, c map[string]any) {
	t.Helper()
	labels := get(o, "spec", "template", "metadata", "labels")
	found := false
	for _, svc := range k.objects {
		if str(svc, "kind") != "Service" || !selects(get(svc, "spec", "selector"), labels) {
			continue
		}
		found = true
		for _, p := range list(svc, "spec", "ports") {
			tp := fmt.Sprint(get(p, "targetPort"))
			if _, err := strconv.Atoi(tp); err != nil {
				containerPort(t, c, tp) // fails if missing
			}
		}
	}
	if !found {
		t.Errorf("%s: no Service selects its pods", str(o, "metadata", "name"))
	}
}

// TestMisspelledManifestFieldsAreCaught: the field schema rejects typos
// where Kubernetes would otherwise drop the field (a probe that never
// runs, a security setting that never applies).
func TestMisspelledManifestFieldsAreCaught(t *testing.T) {
	k := loadK8s(t)
	for _, c := range []struct{ path []string }{
		{[]string{"spec", "template", "spec", "containers", "0", "readinesProbe"}},
		{[]string{"spec", "template", "spec", "securityContext", "runAsNonroot"}},
		{[]string{"spec", "podManagmentPolicy"}},
		{[]string{"spec", "volumeClaimTemplates", "0", "spec", "accesModes"}},
	} {
		doc := deepCopy(k.get("StatefulSet", "fjord")).(map[string]any)
		var at any = doc
		for _, p := range c.path[:len(c.path)-1] {
			if i, err := strconv.Atoi(p); err == nil {
				at = at.([]any)[i]
			} else {
				at = at.(map[string]any)[p]
			}
		}
		at.(map[string]any)[c.path[len(c.path)-1]] = "x"
		if problems := k8sFieldProblems(doc); !mentions(problems, c.path[len(c.path)-1]) {
			t.Errorf("%s: problems %q do not name it", strings.Join(c.path, "."), problems)
		}
	}
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := map[string]any{}
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = deepCopy(e)
		}
		return l
	}
	return v
}
