package deploy

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The agent-sandbox resources (github.com/kubernetes-sigs/agent-sandbox, v1alpha1), as its
// API reference (docs/api.md) lists their fields, for checking the example manifests'
// form: the project's Go module is not on the public module proxy. Status fields are left
// out: a manifest does not set them.

// Sandbox is agents.x-k8s.io/v1alpha1 Sandbox.
type Sandbox struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              SandboxSpec `json:"spec"`
}

// SandboxSpec is a Sandbox's spec.
type SandboxSpec struct {
	PodTemplate          SandboxPodTemplate   `json:"podTemplate"`
	VolumeClaimTemplates []SandboxVolumeClaim `json:"volumeClaimTemplates,omitempty"`
	ShutdownTime         *metav1.Time         `json:"shutdownTime,omitempty"`
	ShutdownPolicy       string               `json:"shutdownPolicy,omitempty"`
	Replicas             *int32               `json:"replicas,omitempty"`
	Service              *bool                `json:"service,omitempty"`
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

// SandboxTemplate is extensions.agents.x-k8s.io/v1alpha1 SandboxTemplate.
type SandboxTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              SandboxTemplateSpec `json:"spec"`
}

// SandboxTemplateSpec is a SandboxTemplate's spec.
type SandboxTemplateSpec struct {
	PodTemplate             SandboxPodTemplate    `json:"podTemplate"`
	VolumeClaimTemplates    []SandboxVolumeClaim  `json:"volumeClaimTemplates,omitempty"`
	NetworkPolicy           *SandboxNetworkPolicy `json:"networkPolicy,omitempty"`
	NetworkPolicyManagement string                `json:"networkPolicyManagement,omitempty"`
	EnvVarsInjectionPolicy  string                `json:"envVarsInjectionPolicy,omitempty"`
	Service                 *bool                 `json:"service,omitempty"`
}

// SandboxNetworkPolicy is the subset of a NetworkPolicy's spec a template sets.
type SandboxNetworkPolicy struct {
	Ingress []networkingv1.NetworkPolicyIngressRule `json:"ingress,omitempty"`
	Egress  []networkingv1.NetworkPolicyEgressRule  `json:"egress,omitempty"`
}

// SandboxClaim is extensions.agents.x-k8s.io/v1alpha1 SandboxClaim.
type SandboxClaim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              SandboxClaimSpec `json:"spec"`
}

// SandboxClaimSpec is a SandboxClaim's spec.
type SandboxClaimSpec struct {
	TTLSecondsAfterCreated *int32 `json:"ttlSecondsAfterCreated,omitempty"`
	SandboxTemplateRef     struct {
		Name string `json:"name"`
	} `json:"sandboxTemplateRef"`
	Lifecycle *struct {
		ShutdownTime            *metav1.Time `json:"shutdownTime,omitempty"`
		TTLSecondsAfterFinished *int32       `json:"ttlSecondsAfterFinished,omitempty"`
		ShutdownPolicy          string       `json:"shutdownPolicy,omitempty"`
	} `json:"lifecycle,omitempty"`
	WarmPool              string              `json:"warmpool,omitempty"`
	AdditionalPodMetadata *SandboxPodMetadata `json:"additionalPodMetadata,omitempty"`
	Env                   []SandboxEnvVar     `json:"env,omitempty"`
}

// SandboxEnvVar is a variable a claim injects into its sandbox's container.
type SandboxEnvVar struct {
	Name          string `json:"name"`
	Value         string `json:"value"`
	ContainerName string `json:"containerName,omitempty"`
}
