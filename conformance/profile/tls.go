package profile

import "fmt"

// TLS says the profile's clusters speak TLS, and how they get their
// certificates. The suite then makes a CA of its own and, before each
// cluster, the cluster's certificates in Secrets in its namespace; its
// probes and traffic present the client certificate and trust only that CA.
type TLS struct {
	// Format is how the operator takes the certificates; TLSCoreosStatic
	// is the only one so far.
	Format TLSFormat `json:"format"`
	// PeerSecret, ServerSecret and ClientSecret are templates of the
	// Secrets' names (like clientService); the cluster template must name
	// them where the operator looks for them. ClientSecret holds the
	// client certificate of the operator and of the suite.
	PeerSecret   string `json:"peerSecret"`
	ServerSecret string `json:"serverSecret"`
	ClientSecret string `json:"clientSecret"`
}

// TLSFormat is a way of handing certificates to an operator.
type TLSFormat string

// TLSCoreosStatic is coreos etcd-operator v0.9.4's spec.TLS.static: three
// Secrets with its key names (member.peerSecret: peer.crt, peer.key,
// peer-ca.crt; member.serverSecret: server.crt, server.key, server-ca.crt;
// operatorSecret: etcd-client.crt, etcd-client.key, etcd-client-ca.crt).
const TLSCoreosStatic TLSFormat = "coreos-static"

// TLSSecrets are the names of one cluster's TLS Secrets.
type TLSSecrets struct {
	Peer, Server, Client string
}

// TLSSecrets renders the names of a cluster's TLS Secrets; the profile
// must have cluster.tls.
func (p *Profile) TLSSecrets(cluster, namespace string) (TLSSecrets, error) {
	t := p.Cluster.TLS
	if t == nil {
		return TLSSecrets{}, fmt.Errorf("profile %s has no cluster.tls", p.Name)
	}
	data := TemplateData{Name: cluster, Namespace: namespace}
	var s TLSSecrets
	for _, f := range []struct {
		field string
		tpl   string
		out   *string
	}{
		{"cluster.tls.peerSecret", t.PeerSecret, &s.Peer},
		{"cluster.tls.serverSecret", t.ServerSecret, &s.Server},
		{"cluster.tls.clientSecret", t.ClientSecret, &s.Client},
	} {
		name, err := Render(f.tpl, data)
		if err != nil {
			return TLSSecrets{}, fmt.Errorf("%s: %w", f.field, err)
		}
		*f.out = name
	}
	return s, nil
}
