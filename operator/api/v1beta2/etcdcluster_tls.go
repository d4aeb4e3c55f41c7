package v1beta2

import "errors"

// TLSPolicy is how a cluster's traffic is secured: coreos etcd-operator
// v0.9.4's types and field names, so its EtcdClusters and Secrets work as
// they are.
type TLSPolicy struct {
	// Static: certificates and keys made by the user and put in Secrets.
	// +optional
	Static *StaticTLS `json:"static,omitempty"`
}

// StaticTLS names the Secrets of a cluster's certificates. Client TLS needs
// both member.serverSecret and operatorSecret (the operator must reach the
// members as a client); peer TLS needs member.peerSecret alone.
// +kubebuilder:validation:XValidation:rule="(has(self.operatorSecret) && self.operatorSecret.size() > 0) == (has(self.member) && has(self.member.serverSecret) && self.member.serverSecret.size() > 0)",message="spec.TLS.static.operatorSecret and spec.TLS.static.member.serverSecret go together: members that require client certificates (serverSecret) can only be managed with a client certificate for the operator (operatorSecret), and operatorSecret is only used with serverSecret"
type StaticTLS struct {
	// Member holds the Secrets every member pod mounts.
	// +optional
	Member *MemberSecret `json:"member,omitempty"`
	// OperatorSecret is the Secret with the operator's client certificate
	// (keys etcd-client.crt, etcd-client.key and etcd-client-ca.crt, the CA
	// that signed the members' server certificates). The operator reads it
	// with a GET on each pass; it is never mounted into member pods.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$`
	// +optional
	OperatorSecret string `json:"operatorSecret,omitempty"`
}

// MemberSecret names the Secrets mounted into every member pod.
type MemberSecret struct {
	// PeerSecret holds peer.crt, peer.key and peer-ca.crt, for the traffic
	// between members (mounted at /etc/etcdtls/member/peer-tls). The
	// certificate must name *.<cluster>.<namespace>.svc.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$`
	// +optional
	PeerSecret string `json:"peerSecret,omitempty"`
	// ServerSecret holds server.crt, server.key and server-ca.crt (the CA
	// that signed the clients' certificates), for the client port (mounted at
	// /etc/etcdtls/member/server-tls). The certificate must name
	// *.<cluster>.<namespace>.svc; clients of the client Service also need
	// <cluster>-client.<namespace>.svc.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$`
	// +optional
	ServerSecret string `json:"serverSecret,omitempty"`
}

// Validate is the CRD's rule on StaticTLS, for API servers that do not
// enforce CEL rules (before Kubernetes 1.25) and so store any combination.
func (tp *TLSPolicy) Validate() error {
	if tp == nil || tp.Static == nil {
		return nil
	}
	operator := tp.Static.OperatorSecret != ""
	server := tp.Static.Member != nil && tp.Static.Member.ServerSecret != ""
	switch {
	case operator && !server:
		return errors.New("spec.TLS.static.operatorSecret is set but member.serverSecret is not")
	case server && !operator:
		return errors.New("spec.TLS.static.member.serverSecret is set but operatorSecret is not: the operator needs a client certificate to manage members that require one")
	}
	return nil
}

// IsSecureClient reports whether members serve clients over TLS only, with
// client certificates: member.serverSecret and operatorSecret are set.
func (tp *TLSPolicy) IsSecureClient() bool {
	return tp != nil && tp.Static != nil && tp.Static.OperatorSecret != "" &&
		tp.Static.Member != nil && tp.Static.Member.ServerSecret != ""
}

// IsSecurePeer reports whether members talk to each other over TLS.
func (tp *TLSPolicy) IsSecurePeer() bool {
	return tp != nil && tp.Static != nil && tp.Static.Member != nil && tp.Static.Member.PeerSecret != ""
}
