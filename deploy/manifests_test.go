// Package deploy checks the Kubernetes manifests in kubernetes/: every document decodes
// strictly (no unknown or misspelt field) into the API type its kind names, and the
// pieces that have to agree do. The agent-sandbox resources are checked against that
// project's CRD schemas in crd_test.go; here they are decoded into the fields of its API
// types (sandbox.go) to check what has to agree.
package deploy

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/yaml"
)

// types maps apiVersion/kind to a fresh value of its API type.
var types = map[string]func() any{
	"apps/v1/Deployment":                 func() any { return new(appsv1.Deployment) },
	"batch/v1/Job":                       func() any { return new(batchv1.Job) },
	"v1/Service":                         func() any { return new(corev1.Service) },
	"v1/PersistentVolumeClaim":           func() any { return new(corev1.PersistentVolumeClaim) },
	"networking.k8s.io/v1/Ingress":       func() any { return new(networkingv1.Ingress) },
	"v1/Secret":                          func() any { return new(corev1.Secret) },
	"networking.k8s.io/v1/NetworkPolicy": func() any { return new(networkingv1.NetworkPolicy) },
	"agents.x-k8s.io/v1beta1/Sandbox":    func() any { return new(Sandbox) },
	"extensions.agents.x-k8s.io/v1beta1/SandboxTemplate": func() any { return new(SandboxTemplate) },
	"extensions.agents.x-k8s.io/v1beta1/SandboxWarmPool": func() any { return new(SandboxWarmPool) },
	"extensions.agents.x-k8s.io/v1beta1/SandboxClaim":    func() any { return new(SandboxClaim) },
}

var docSep = regexp.MustCompile(`(?m)^---\s*$`)

// yamlDoc is one document of the manifests, as JSON.
type yamlDoc struct {
	file string
	n    int // its place in the file, from 1
	json []byte
}

// yamlDocs returns every document of the manifests, as JSON, in order.
func yamlDocs(t *testing.T) []yamlDoc {
	t.Helper()
	files, err := filepath.Glob("kubernetes/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests found: %v", err)
	}
	var docs []yamlDoc
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range docSep.Split(string(data), -1) {
			if strings.TrimSpace(stripComments(doc)) == "" {
				continue
			}
			js, err := yaml.YAMLToJSON([]byte(doc))
			if err != nil {
				t.Fatalf("%s document %d: %v", f, i+1, err)
			}
			docs = append(docs, yamlDoc{f, i + 1, js})
		}
	}
	return docs
}

// decode returns every object in the manifests, strictly decoded.
func decode(t *testing.T) map[string][]any {
	t.Helper()
	objs := make(map[string][]any)
	for _, d := range yamlDocs(t) {
		var head struct{ APIVersion, Kind string }
		if err := json.Unmarshal(d.json, &head); err != nil {
			t.Fatalf("%s document %d: %v", d.file, d.n, err)
		}
		key := head.APIVersion + "/" + head.Kind
		newObj, ok := types[key]
		if !ok {
			t.Fatalf("%s document %d: unexpected kind %q", d.file, d.n, key)
		}
		obj := newObj()
		dec := json.NewDecoder(bytes.NewReader(d.json))
		dec.DisallowUnknownFields()
		if err := dec.Decode(obj); err != nil {
			t.Errorf("%s document %d (%s): %v", d.file, d.n, key, err)
			continue
		}
		objs[filepath.Base(d.file)] = append(objs[filepath.Base(d.file)], obj)
	}
	return objs
}

func stripComments(doc string) string {
	var b strings.Builder
	for line := range strings.Lines(doc) {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line)
		}
	}
	return b.String()
}

func TestManifestsDecodeStrictly(t *testing.T) {
	objs := decode(t)
	for _, want := range []string{"boris.yaml", "sandbox-job.yaml", "ingress-sticky.yaml", "stateless.yaml", "agent-sandbox.yaml"} {
		if len(objs[want]) == 0 {
			t.Errorf("kubernetes/%s has no objects", want)
		}
	}
}

// TestPodsAreSafeAndProbed checks what every Boris container must have: the token from a
// Secret, resource limits, a probe on /health, and no privilege escalation.
func TestPodsAreSafeAndProbed(t *testing.T) {
	for file, list := range decode(t) {
		for _, obj := range list {
			spec, tokenFromClaim := podSpec(obj)
			if spec == nil {
				continue
			}
			for _, c := range spec.Containers {
				if c.Name != "boris" {
					continue
				}
				name := file + ": container " + c.Name
				if !tokenFromClaim && !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool {
					return strings.HasPrefix(e.Name, "BORIS_TOKEN") && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil
				}) && !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return strings.Contains(m.Name, "token") }) {
					t.Errorf("%s: the token does not come from a Secret", name)
				}
				if c.Resources.Limits.Memory().IsZero() || c.Resources.Limits.Cpu().IsZero() {
					t.Errorf("%s: no cpu and memory limits", name)
				}
				if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/health" {
					t.Errorf("%s: no readiness probe on /health", name)
				}
				if sc := c.SecurityContext; sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
					t.Errorf("%s: privilege escalation is not turned off", name)
				}
			}
		}
	}
}

// TestServicesSelectPods checks that each Service and Ingress points at something defined.
func TestServicesSelectPods(t *testing.T) {
	objs := decode(t)
	labels := map[string]map[string]string{}
	services := map[string]bool{}
	for _, list := range objs {
		for _, obj := range list {
			switch o := obj.(type) {
			case *appsv1.Deployment:
				labels[o.Name] = o.Spec.Template.Labels
				if !selects(o.Spec.Selector.MatchLabels, o.Spec.Template.Labels) {
					t.Errorf("deployment %s: selector does not match its pod labels", o.Name)
				}
			case *corev1.Service:
				services[o.Name] = true
			}
		}
	}
	for _, list := range objs {
		for _, obj := range list {
			switch o := obj.(type) {
			case *corev1.Service:
				if !slices.ContainsFunc(mapsValues(labels), func(l map[string]string) bool { return selects(o.Spec.Selector, l) }) {
					t.Errorf("service %s selects no pod template", o.Name)
				}
			case *networkingv1.Ingress:
				for _, r := range o.Spec.Rules {
					for _, p := range r.HTTP.Paths {
						if !services[p.Backend.Service.Name] {
							t.Errorf("ingress %s: backend service %s is not defined", o.Name, p.Backend.Service.Name)
						}
					}
				}
			}
		}
	}
}

func selects(selector, podLabels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if podLabels[k] != v {
			return false
		}
	}
	return true
}

func mapsValues(m map[string]map[string]string) []map[string]string {
	var out []map[string]string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// podSpec returns the pod an object runs, if any, and whether the token comes from each
// claim on it rather than from the pod itself.
func podSpec(obj any) (*corev1.PodSpec, bool) {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return &o.Spec.Template.Spec, false
	case *batchv1.Job:
		return &o.Spec.Template.Spec, false
	case *Sandbox:
		return &o.Spec.PodTemplate.Spec, false
	case *SandboxTemplate:
		return &o.Spec.PodTemplate.Spec, true
	}
	return nil, false
}

// TestImagesPinned: every Boris image names one release, the same everywhere, never latest.
func TestImagesPinned(t *testing.T) {
	tags := map[string]bool{}
	for file, list := range decode(t) {
		for _, obj := range list {
			spec, _ := podSpec(obj)
			if spec == nil {
				continue
			}
			for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
				repo, tag, ok := strings.Cut(c.Image, ":")
				if repo != "ghcr.io/mjkoo/boris" {
					continue
				}
				if !ok || tag == "" || tag == "latest" {
					t.Errorf("%s: container %s: image %q is not pinned to a release", file, c.Name, c.Image)
				}
				tags[tag] = true
			}
		}
	}
	if len(tags) != 1 {
		t.Errorf("the manifests name %d Boris releases (%v), want one", len(tags), tags)
	}
}

// TestSandboxTokensOwn: each sandbox has its own token: a Job's or a Sandbox's Secret is
// named for it, and a pod of a SandboxTemplate takes its token from POST /init after it is
// claimed, so that claims set nothing in the pod and every claim can take a warm one.
func TestSandboxTokensOwn(t *testing.T) {
	objs := decode(t)
	templates := map[string]bool{}
	pools := map[string]string{}
	for _, obj := range objs["agent-sandbox.yaml"] {
		switch o := obj.(type) {
		case *SandboxTemplate:
			templates[o.Name] = true
		case *SandboxWarmPool:
			pools[o.Name] = o.Spec.SandboxTemplateRef.Name
		}
	}
	for _, obj := range slices.Concat(objs["sandbox-job.yaml"], objs["agent-sandbox.yaml"]) {
		var name string
		var spec *corev1.PodSpec
		switch o := obj.(type) {
		case *batchv1.Job:
			name, spec = o.Name, &o.Spec.Template.Spec
		case *Sandbox:
			name, spec = o.Name, &o.Spec.PodTemplate.Spec
		case *SandboxTemplate:
			if o.Spec.EnvVarsInjectionPolicy != "Disallowed" || o.Spec.VolumeClaimTemplatesPolicy != "Disallowed" {
				t.Errorf("sandbox template %s: claims may set env or volumes, which keeps them from warm pods", o.Name)
			}
			for _, c := range o.Spec.PodTemplate.Spec.Containers {
				if c.Name == "boris" && (!slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--init-token-file=") }) ||
					!slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--state-dir=") })) {
					t.Errorf("sandbox template %s: Boris takes no token from /init or keeps no state: %v", o.Name, c.Args)
				}
			}
			continue
		case *SandboxWarmPool:
			if !templates[o.Spec.SandboxTemplateRef.Name] {
				t.Errorf("warm pool %s: template %q is not defined", o.Name, o.Spec.SandboxTemplateRef.Name)
			}
			continue
		case *SandboxClaim:
			if _, ok := pools[o.Spec.WarmPoolRef.Name]; !ok {
				t.Errorf("sandbox claim %s: warm pool %q is not defined", o.Name, o.Spec.WarmPoolRef.Name)
			}
			if len(o.Spec.Env) > 0 || len(o.Spec.VolumeClaimTemplates) > 0 {
				t.Errorf("sandbox claim %s: sets env or volumes, which forces a cold start", o.Name)
			}
			continue
		default:
			continue
		}
		for _, c := range spec.Containers {
			for _, e := range c.Env {
				if e.Name == "BORIS_TOKEN" && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || !strings.HasPrefix(e.ValueFrom.SecretKeyRef.Name, name)) {
					t.Errorf("%s: the token's Secret is not named for the sandbox", name)
				}
			}
		}
	}
}
