package deploy

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The agent-sandbox resources (github.com/kubernetes-sigs/agent-sandbox, v1beta1, served by
// v1.0.x), with the fields its API types declare, so that the tests can read the example
// manifests: the project's Go module is not on the public module proxy. Status fields are
// left out: a manifest does not set them. These structs only help the tests find things;
// the manifests' form is checked against the project's own CRD schemas (crd_test.go).

// Sandbox is agents.x-k8s.io/v1beta1 Sandbox.
type Sandbox struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              SandboxSpec `json:"spec"`
}

// SandboxSpec is a Sandbox's spec: a blueprint, a lifecycle and an operating mode.
type SandboxSpec struct {
	PodTemplate          SandboxPodTemplate   `json:"podTemplate"`
	VolumeClaimTemplates []SandboxVolumeClaim `json:"volumeClaimTemplates,omitempty"`
	Service              *bool                `json:"service,omitempty"`
	ShutdownTime         *metav1.Time         `json:"shutdownTime,omitempty"`
	ShutdownPolicy       string               `json:"shutdownPolicy,omitempty"`
	OperatingMode        string               `json:"operatingMode,omitempty"` // Running or Suspended
}

// SandboxPodTemplate is the pod a sandbox runs.
type SandboxPodTemplate struct {
	Metadata SandboxPodMetadata `json:"metadata,omitempty"`
	Spec     corev1.PodSpec     `json:"spec"`
}

// SandboxPodMetadata is the metadata a sandbox's pod gets.
type SandboxPodMetadata struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// SandboxVolumeClaim is a PersistentVolumeClaim template.
type SandboxVolumeClaim struct {
	Metadata struct {
		Name        string            `json:"name,omitempty"`
		Labels      map[string]string `json:"labels,omitempty"`
		Annotations map[string]string `json:"annotations,omitempty"`
	} `json:"metadata,omitempty"`
	Spec corev1.PersistentVolumeClaimSpec `json:"spec"`
}

// SandboxTemplate is extensions.agents.x-k8s.io/v1beta1 SandboxTemplate.
type SandboxTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              SandboxTemplateSpec `json:"spec"`
}

// SandboxTemplateSpec is a SandboxTemplate's spec.
type SandboxTemplateSpec struct {
	PodTemplate                SandboxPodTemplate    `json:"podTemplate"`
	VolumeClaimTemplates       []SandboxVolumeClaim  `json:"volumeClaimTemplates,omitempty"`
	Service                    *bool                 `json:"service,omitempty"`
	NetworkPolicy              *SandboxNetworkPolicy `json:"networkPolicy,omitempty"`
	NetworkPolicyManagement    string                `json:"networkPolicyManagement,omitempty"`
	EnvVarsInjectionPolicy     string                `json:"envVarsInjectionPolicy,omitempty"`
	VolumeClaimTemplatesPolicy string                `json:"volumeClaimTemplatesPolicy,omitempty"`
}

// SandboxNetworkPolicy is the subset of a NetworkPolicy's spec a template sets.
type SandboxNetworkPolicy struct {
	Ingress []networkingv1.NetworkPolicyIngressRule `json:"ingress,omitempty"`
	Egress  []networkingv1.NetworkPolicyEgressRule  `json:"egress,omitempty"`
}

// SandboxWarmPool is extensions.agents.x-k8s.io/v1beta1 SandboxWarmPool.
type SandboxWarmPool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Replicas           *int32 `json:"replicas,omitempty"`
		SandboxTemplateRef struct {
			Name string `json:"name"`
		} `json:"sandboxTemplateRef"`
		UpdateStrategy *struct {
			Type string `json:"type,omitempty"`
		} `json:"updateStrategy,omitempty"`
	} `json:"spec"`
}

// SandboxClaim is extensions.agents.x-k8s.io/v1beta1 SandboxClaim.
type SandboxClaim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              SandboxClaimSpec `json:"spec"`
}

// SandboxClaimSpec is a SandboxClaim's spec.
type SandboxClaimSpec struct {
	WarmPoolRef struct {
		Name string `json:"name"`
	} `json:"warmPoolRef"`
	Lifecycle *struct {
		ShutdownTime            *metav1.Time `json:"shutdownTime,omitempty"`
		TTLSecondsAfterFinished *int32       `json:"ttlSecondsAfterFinished,omitempty"`
		ShutdownPolicy          string       `json:"shutdownPolicy,omitempty"`
	} `json:"lifecycle,omitempty"`
	AdditionalPodMetadata *SandboxPodMetadata  `json:"additionalPodMetadata,omitempty"`
	Env                   []SandboxEnvVar      `json:"env,omitempty"`
	VolumeClaimTemplates  []SandboxVolumeClaim `json:"volumeClaimTemplates,omitempty"`
}

// SandboxEnvVar is a variable a claim injects into its sandbox's container.
type SandboxEnvVar struct {
	Name          string `json:"name"`
	Value         string `json:"value"`
	ContainerName string `json:"containerName,omitempty"`
}
