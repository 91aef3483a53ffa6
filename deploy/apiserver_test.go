package deploy

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// The manifests are sent to a real kube-apiserver (with its own etcd), each document as a
// server-side dry-run create with strict field validation: the server decodes, defaults,
// validates and admits the object as it would for kubectl apply --dry-run=server
// --validate=strict, and refuses an unknown or duplicate field instead of dropping it.
// The agent-sandbox documents are checked against that project's CRDs, installed from
// AGENT_SANDBOX_CRDS. kube-apiserver and etcd are built from the module proxy by
// deploy/kube/build.sh (12 to 35 minutes on 2 cores), which is why this test is skipped
// where they are missing; see docs/fleet.md.

const kubeVersion = "v1.36.3"

// kubeBinDir is where kube-apiserver and etcd are looked for: BORIS_KUBE_BIN, or the
// directory deploy/kube/build.sh builds into.
func kubeBinDir() string {
	if d := os.Getenv("BORIS_KUBE_BIN"); d != "" {
		return d
	}
	cache := os.Getenv("BORIS_KUBE_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		cache = filepath.Join(home, ".cache", "boris-kube")
	}
	return filepath.Join(cache, kubeVersion)
}

// kubeServer is a kube-apiserver on loopback, backed by an etcd of its own.
type kubeServer struct {
	t      *testing.T
	base   string
	token  string
	client *http.Client
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// startProcess starts a command in a process group of its own, its output in a log file;
// exited is closed when the process has ended.
func startProcess(t *testing.T, logFile string, name string, args ...string) (exited <-chan struct{}) {
	t.Helper()
	log, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = log, log
	// Killed with its group when the test ends, and by the kernel if the test binary
	// dies first (a timeout's panic runs no cleanup).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(done)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	return done
}

// logTail returns the end of a log file, for a failure message.
func logTail(file string) string {
	data, _ := os.ReadFile(file)
	if len(data) > 4000 {
		data = data[len(data)-4000:]
	}
	return string(data)
}

// writePEM writes one PEM block to a file readable only by its owner.
func writePEM(t *testing.T, file, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// startKubeServer starts etcd and kube-apiserver from bin in a temporary directory and
// waits until the server is ready.
func startKubeServer(t *testing.T, bin string) *kubeServer {
	t.Helper()
	dir := t.TempDir()

	ports := freePorts(t, 3)
	clientURL := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	port := ports[2]
	etcdLog := filepath.Join(dir, "etcd.log")
	etcdExited := startProcess(t, etcdLog, filepath.Join(bin, "etcd"),
		"--name=boris-check",
		"--data-dir="+filepath.Join(dir, "etcd"),
		"--listen-client-urls="+clientURL, "--advertise-client-urls="+clientURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=boris-check="+peerURL,
		"--unsafe-no-fsync")

	// The service-account keys, and the one token the test authenticates with.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, filepath.Join(dir, "sa.key"), "EC PRIVATE KEY", der)
	if der, err = x509.MarshalPKIXPublicKey(&key.PublicKey); err != nil {
		t.Fatal(err)
	}
	writePEM(t, filepath.Join(dir, "sa.pub"), "PUBLIC KEY", der)
	secret := make([]byte, 16)
	_, _ = rand.Read(secret)
	token := hex.EncodeToString(secret)
	if err := os.WriteFile(filepath.Join(dir, "tokens.csv"), []byte(token+",admin,admin,system:masters\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	certDir := filepath.Join(dir, "certs")
	apiLog := filepath.Join(dir, "kube-apiserver.log")
	apiExited := startProcess(t, apiLog, filepath.Join(bin, "kube-apiserver"),
		"--etcd-servers="+clientURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		// A self-signed serving certificate for 127.0.0.1 is made in certDir.
		"--cert-dir="+certDir,
		"--token-auth-file="+filepath.Join(dir, "tokens.csv"),
		"--anonymous-auth=false",
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+filepath.Join(dir, "sa.pub"),
		"--service-account-signing-key-file="+filepath.Join(dir, "sa.key"),
		"--service-cluster-ip-range=10.96.0.0/16",
		// No endpoints for the kubernetes Service: its address would be loopback,
		// which an Endpoints object may not hold.
		"--endpoint-reconciler-type=none",
		"--profiling=false")

	s := &kubeServer{t: t, base: fmt.Sprintf("https://127.0.0.1:%d", port), token: token}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Wait for the serving certificate, then trust only it.
	certFile := filepath.Join(certDir, "apiserver.crt")
	var pool *x509.CertPool
	for backoff := 50 * time.Millisecond; pool == nil; backoff = min(2*backoff, time.Second) {
		if pem, err := os.ReadFile(certFile); err == nil {
			if p := x509.NewCertPool(); p.AppendCertsFromPEM(pem) {
				pool = p
				break
			}
		}
		if err := s.waitOrFail(ctx, backoff, etcdExited, etcdLog, apiExited, apiLog); err != nil {
			t.Fatalf("no serving certificate in %s: %v", certDir, err)
		}
	}
	s.client = &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
	}
	t.Cleanup(s.client.CloseIdleConnections)
	for backoff := 50 * time.Millisecond; ; backoff = min(2*backoff, 2*time.Second) {
		code, body, _, err := s.do("GET", "/readyz", nil)
		if err == nil && code == http.StatusOK {
			break
		}
		if err := s.waitOrFail(ctx, backoff, etcdExited, etcdLog, apiExited, apiLog); err != nil {
			t.Fatalf("kube-apiserver not ready (last answer %d %s): %v", code, body, err)
		}
	}
	return s
}

// waitOrFail waits for d, and says why not if a process ended or ctx is done first.
func (s *kubeServer) waitOrFail(ctx context.Context, d time.Duration, etcdExited <-chan struct{}, etcdLog string, apiExited <-chan struct{}, apiLog string) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-etcdExited:
		return fmt.Errorf("etcd exited:\n%s", logTail(etcdLog))
	case <-apiExited:
		return fmt.Errorf("kube-apiserver exited:\n%s", logTail(apiLog))
	case <-ctx.Done():
		return fmt.Errorf("%v; kube-apiserver's log:\n%s", ctx.Err(), logTail(apiLog))
	}
}

// do sends one request and returns the status, the body and the warnings the server gave.
func (s *kubeServer) do(method, path string, body []byte) (int, []byte, []string, error) {
	req, err := http.NewRequest(method, s.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, resp.Header.Values("Warning"), err
}

// create creates an object for real, failing the test unless the server accepts it
// without a warning.
func (s *kubeServer) create(path string, obj any) {
	s.t.Helper()
	js, err := json.Marshal(obj)
	if err != nil {
		s.t.Fatal(err)
	}
	code, body, warnings, err := s.do("POST", path+"?fieldValidation=Strict", js)
	if err != nil || code != http.StatusCreated || len(warnings) > 0 {
		s.t.Fatalf("create %s: %d %s %q %v", path, code, body, warnings, err)
	}
}

// apiResource is one entry of a discovery document.
type apiResource struct {
	Name       string `json:"name"`
	Namespaced bool   `json:"namespaced"`
	Kind       string `json:"kind"`
}

// resources returns the resources the server serves in one group version, by kind, or
// nil if it serves none.
func (s *kubeServer) resources(apiVersion string) map[string]apiResource {
	s.t.Helper()
	path := "/apis/" + apiVersion
	if !strings.Contains(apiVersion, "/") {
		path = "/api/" + apiVersion
	}
	code, body, _, err := s.do("GET", path, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	if code == http.StatusNotFound {
		return nil
	}
	if code != http.StatusOK {
		s.t.Fatalf("GET %s: %d %s", path, code, body)
	}
	var list struct{ Resources []apiResource }
	if err := json.Unmarshal(body, &list); err != nil {
		s.t.Fatal(err)
	}
	out := map[string]apiResource{}
	for _, r := range list.Resources {
		if !strings.Contains(r.Name, "/") {
			out[r.Kind] = r
		}
	}
	return out
}

// dryRunCreate sends obj as a server-side dry-run create with strict field validation
// and returns what the server refused or warned about, or "" if it took the object as it
// is; served is false if the server serves no such kind.
func (s *kubeServer) dryRunCreate(obj map[string]any, namespace string) (problem string, served bool) {
	s.t.Helper()
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	r, ok := s.resources(apiVersion)[kind]
	if !ok {
		return "", false
	}
	prefix := "/apis/" + apiVersion
	if !strings.Contains(apiVersion, "/") {
		prefix = "/api/" + apiVersion
	}
	path := prefix + "/" + r.Name
	if r.Namespaced {
		path = prefix + "/namespaces/" + url.PathEscape(namespace) + "/" + r.Name
	}
	js, err := json.Marshal(obj)
	if err != nil {
		s.t.Fatal(err)
	}
	code, body, warnings, err := s.do("POST", path+"?dryRun=All&fieldValidation=Strict", js)
	if err != nil {
		s.t.Fatal(err)
	}
	var problems []string
	if code != http.StatusCreated && code != http.StatusOK {
		var status struct{ Message string }
		if json.Unmarshal(body, &status) != nil || status.Message == "" {
			status.Message = string(body)
		}
		problems = append(problems, fmt.Sprintf("refused (%d): %s", code, status.Message))
	}
	for _, w := range warnings {
		problems = append(problems, "warning: "+w)
	}
	return strings.Join(problems, "; "), true
}

// installCRDs creates every CRD in dir and waits until each is established and its
// kinds are served.
func (s *kubeServer) installCRDs(dir string) (kinds []string) {
	s.t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		s.t.Fatalf("AGENT_SANDBOX_CRDS=%s holds no CRD files: %v", dir, err)
	}
	type crdObject struct {
		Metadata struct{ Name string } `json:"metadata"`
		Spec     struct {
			Group    string
			Names    struct{ Kind string }
			Versions []struct {
				Name   string
				Served bool
			}
		} `json:"spec"`
	}
	var crds []crdObject
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			s.t.Fatal(err)
		}
		js, err := yaml.YAMLToJSON(data)
		if err != nil {
			s.t.Fatalf("%s: %v", f, err)
		}
		var obj map[string]any
		var c crdObject
		if err := json.Unmarshal(js, &obj); err != nil {
			s.t.Fatalf("%s: %v", f, err)
		}
		if err := json.Unmarshal(js, &c); err != nil {
			s.t.Fatalf("%s: %v", f, err)
		}
		if obj["kind"] != "CustomResourceDefinition" {
			continue
		}
		s.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", obj)
		crds = append(crds, c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, c := range crds {
		for backoff := 20 * time.Millisecond; ; backoff = min(2*backoff, time.Second) {
			if s.established(c.Metadata.Name) && s.servesAll(c.Spec.Group, c.Spec.Names.Kind, c.Spec.Versions) {
				break
			}
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				s.t.Fatalf("CRD %s not established and served: %v", c.Metadata.Name, ctx.Err())
			}
		}
		kinds = append(kinds, c.Spec.Group+"/"+c.Spec.Names.Kind)
	}
	return kinds
}

func (s *kubeServer) established(name string) bool {
	code, body, _, err := s.do("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+name, nil)
	if err != nil || code != http.StatusOK {
		return false
	}
	var crd struct {
		Status struct {
			Conditions []struct{ Type, Status string }
		}
	}
	_ = json.Unmarshal(body, &crd)
	return slices.ContainsFunc(crd.Status.Conditions, func(c struct{ Type, Status string }) bool {
		return c.Type == "Established" && c.Status == "True"
	})
}

func (s *kubeServer) servesAll(group, kind string, versions []struct {
	Name   string
	Served bool
}) bool {
	for _, v := range versions {
		if _, ok := s.resources(group + "/" + v.Name)[kind]; v.Served && !ok {
			return false
		}
	}
	return true
}

// manifestDoc is one document of the manifests, as a JSON value.
type manifestDoc struct {
	name string // file, document number and kind
	obj  map[string]any
}

func manifestDocs(t *testing.T) []manifestDoc {
	t.Helper()
	var docs []manifestDoc
	for _, d := range yamlDocs(t) {
		var obj map[string]any
		if err := json.Unmarshal(d.json, &obj); err != nil {
			t.Fatalf("%s document %d: %v", d.file, d.n, err)
		}
		docs = append(docs, manifestDoc{fmt.Sprintf("%s document %d (%s %s)", d.file, d.n, obj["apiVersion"], obj["kind"]), obj})
	}
	return docs
}

// sandboxPod returns the Pod agent-sandbox's controller makes from a Sandbox or a
// SandboxTemplate (spec.podTemplate, with a PersistentVolumeClaim volume for each of
// spec.volumeClaimTemplates, named as the template), or nil for another kind.
func sandboxPod(obj map[string]any) map[string]any {
	if !strings.HasSuffix(strings.Split(fmt.Sprint(obj["apiVersion"]), "/")[0], "agents.x-k8s.io") {
		return nil
	}
	spec, _ := obj["spec"].(map[string]any)
	tmpl, _ := spec["podTemplate"].(map[string]any)
	if tmpl == nil {
		return nil
	}
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	podSpec := map[string]any{}
	if ps, _ := tmpl["spec"].(map[string]any); ps != nil {
		podSpec = maps.Clone(ps)
	}
	volumes, _ := podSpec["volumes"].([]any)
	volumes = slices.Clone(volumes)
	claims, _ := spec["volumeClaimTemplates"].([]any)
	for _, c := range claims {
		cm, _ := c.(map[string]any)
		cmeta, _ := cm["metadata"].(map[string]any)
		claim, _ := cmeta["name"].(string)
		volumes = slices.DeleteFunc(volumes, func(v any) bool {
			vm, _ := v.(map[string]any)
			return vm["name"] == claim
		})
		volumes = append(volumes, map[string]any{
			"name":                  claim,
			"persistentVolumeClaim": map[string]any{"claimName": claim + "-" + name},
		})
	}
	if len(volumes) > 0 {
		podSpec["volumes"] = volumes
	}
	podMeta := map[string]any{"name": name}
	if tm, _ := tmpl["metadata"].(map[string]any); tm != nil {
		for _, k := range []string{"labels", "annotations"} {
			if v, ok := tm[k]; ok {
				podMeta[k] = v
			}
		}
	}
	return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": podMeta, "spec": podSpec}
}

// podNamespace is where the pods made from the agent-sandbox documents are sent.
const podNamespace = "boris-check-pods"

// checkNamespace is where namespaced documents without a namespace of their own are sent.
const checkNamespace = "boris-check"

// TestManifestsOnAPIServer sends every document of the manifests to a real kube-apiserver
// as a server-side dry-run create with strict field validation, the agent-sandbox ones
// after installing that project's CRDs from AGENT_SANDBOX_CRDS, and fails on anything the
// server refuses or warns about. Documents whose kind the server does not serve (the
// agent-sandbox ones without AGENT_SANDBOX_CRDS) are listed as not checked.
func TestManifestsOnAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and kube-apiserver")
	}
	bin := kubeBinDir()
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(bin, name)); err != nil {
			msg := fmt.Sprintf("no %s in %s: build kube-apiserver %s and etcd with deploy/kube/build.sh (12 to 35 minutes on 2 cores), or set BORIS_KUBE_BIN to where they are; docs/fleet.md says what was checked where they were", name, bin, kubeVersion)
			if os.Getenv("BORIS_KUBE_REQUIRED") != "" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	s := startKubeServer(t, bin)

	crdDir := os.Getenv("AGENT_SANDBOX_CRDS")
	if crdDir != "" {
		t.Logf("installed CRDs from %s: %v", crdDir, s.installCRDs(crdDir))
	} else {
		t.Log("AGENT_SANDBOX_CRDS is not set: the agent-sandbox documents cannot be checked")
	}

	docs := manifestDocs(t)
	namespaces := map[string]bool{checkNamespace: true}
	for _, d := range docs {
		if meta, _ := d.obj["metadata"].(map[string]any); meta != nil {
			if ns, _ := meta["namespace"].(string); ns != "" {
				namespaces[ns] = true
			}
		}
	}
	for ns := range namespaces {
		// Pod templates in workload resources are checked against the restricted Pod
		// Security Standard: the server warns about what a pod would break.
		s.create("/api/v1/namespaces", map[string]any{
			"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{
				"name":   ns,
				"labels": map[string]any{"pod-security.kubernetes.io/warn": "restricted"},
			},
		})
	}

	// The pods agent-sandbox's controller makes from a Sandbox or a SandboxTemplate go to a
	// namespace of their own that enforces the restricted Pod Security Standard, with the
	// service account the server looks up for them.
	s.create("/api/v1/namespaces", map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{
			"name":   podNamespace,
			"labels": map[string]any{"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/warn": "restricted"},
		},
	})
	s.create("/api/v1/namespaces/"+podNamespace+"/serviceaccounts", map[string]any{
		"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": "default"},
	})

	// The server refuses what it should, so that a manifest it takes is not merely
	// unchecked: an unknown field, an invalid value, and (with the CRDs installed) a field
	// agent-sandbox's schema does not declare; and a pod the restricted standard refuses.
	for _, bad := range []struct {
		obj  string
		want string
	}{
		{`{"apiVersion":"v1","kind":"Service","metadata":{"name":"x"},"spec":{"ports":[{"port":80}],"selectr":{"a":"b"}}}`, `unknown field "spec.selectr"`},
		{`{"apiVersion":"v1","kind":"Service","metadata":{"name":"x"},"spec":{"ports":[{"port":800000}]}}`, "spec.ports[0].port"},
		{`{"apiVersion":"extensions.agents.x-k8s.io/v1beta1","kind":"SandboxClaim","metadata":{"name":"x"},"spec":{"warmPoolRef":{"name":"p"},"warmPool":"p"}}`, `unknown field "spec.warmPool"`},
		{`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x","namespace":"` + podNamespace + `"},"spec":{"containers":[{"name":"c","image":"i"}]}}`, "violates PodSecurity"},
	} {
		if strings.Contains(bad.obj, "agents.x-k8s.io") && crdDir == "" {
			continue
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(bad.obj), &obj); err != nil {
			t.Fatal(err)
		}
		ns := checkNamespace
		if strings.Contains(bad.obj, podNamespace) {
			ns = podNamespace
		}
		if problem, _ := s.dryRunCreate(obj, ns); !strings.Contains(problem, bad.want) {
			t.Fatalf("the server took %s with %q, want it refused for %q", bad.obj, problem, bad.want)
		}
	}

	var checked, unchecked []string
	for _, d := range docs {
		ns := checkNamespace
		if meta, _ := d.obj["metadata"].(map[string]any); meta != nil {
			if n, _ := meta["namespace"].(string); n != "" {
				ns = n
			}
		}
		problem, served := s.dryRunCreate(d.obj, ns)
		switch {
		case !served && crdDir == "" && strings.HasSuffix(strings.Split(fmt.Sprint(d.obj["apiVersion"]), "/")[0], "agents.x-k8s.io"):
			unchecked = append(unchecked, d.name)
		case !served:
			t.Errorf("%s: the server does not serve this kind", d.name)
		case problem != "":
			t.Errorf("%s: %s", d.name, problem)
		default:
			checked = append(checked, d.name)
		}
		if !served {
			continue
		}
		if pod := sandboxPod(d.obj); pod != nil {
			name := d.name + ": the pod made from its podTemplate"
			if problem, _ := s.dryRunCreate(pod, podNamespace); problem != "" {
				t.Errorf("%s: %s", name, problem)
			} else {
				checked = append(checked, name)
			}
		}
	}
	t.Logf("kube-apiserver %s took %d objects (dry run, strict field validation) without error or warning:\n  %s", kubeVersion, len(checked), strings.Join(checked, "\n  "))
	if len(unchecked) > 0 {
		t.Logf("NOT CHECKED (their CRDs are not installed; set AGENT_SANDBOX_CRDS):\n  %s", strings.Join(unchecked, "\n  "))
	}
}
