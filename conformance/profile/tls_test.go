package profile

import (
	"slices"
	"strings"
	"testing"
)

// reference-tls.yaml loads, names its Secrets per cluster, and claims the
// book's checks and, of the fault checks, backup-restore only (the others
// have not been run with TLS on).
func TestReferenceTLSProfile(t *testing.T) {
	p, err := Load("../profiles/reference-tls.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p.Cluster.TLS == nil || p.Cluster.TLS.Format != TLSCoreosStatic {
		t.Fatalf("cluster.tls = %+v, want format %s", p.Cluster.TLS, TLSCoreosStatic)
	}
	got, err := p.TLSSecrets("create-1", "ns")
	if want := (TLSSecrets{Peer: "create-1-peer-tls", Server: "create-1-server-tls", Client: "create-1-client-tls"}); err != nil || got != want {
		t.Errorf("TLSSecrets = %+v, %v; want %+v", got, err, want)
	}
	cr, err := Render(p.Cluster.Template, TemplateData{Name: "create-1", Namespace: "ns", Size: 3, Version: "3.6.16", Repository: p.Etcd.Repository})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"peerSecret: create-1-peer-tls", "serverSecret: create-1-server-tls", "operatorSecret: create-1-client-tls"} {
		if !strings.Contains(cr, want) {
			t.Errorf("the cluster template lacks %q:\n%s", want, cr)
		}
	}
	for _, check := range CheckLabels {
		_, claimed := p.Capabilities.capabilityOf(check)
		if want := slices.Contains(BookChecks, check) || check == "backup-restore" || check == "bad-restore" || check == "space"; claimed != want {
			t.Errorf("check %s: claimed = %v, want %v (the book's checks, backup-restore, bad-restore and space)", check, claimed, want)
		}
	}
}

// A profile without cluster.tls has no TLS Secrets to name.
func TestTLSSecretsNeedTheSection(t *testing.T) {
	if _, err := (&Profile{Name: "plain"}).TLSSecrets("c", "ns"); err == nil || !strings.Contains(err.Error(), "no cluster.tls") {
		t.Errorf("error = %v", err)
	}
}

// Each mistake in cluster.tls is named by its field, at load time.
func TestBadTLSSectionNamesEveryProblem(t *testing.T) {
	template := "kind: EtcdCluster\nspec: {TLS: {static: {member: {peerSecret: '{{ .Name }}-peer', serverSecret: '{{ .Name }}-server'}, operatorSecret: '{{ .Name }}-client'}}}\n"
	for _, tc := range []struct {
		name string
		tls  TLS
		want []string // "": valid
	}{
		{name: "valid", tls: TLS{Format: TLSCoreosStatic, PeerSecret: "{{ .Name }}-peer", ServerSecret: "{{ .Name }}-server", ClientSecret: "{{ .Name }}-client"}},
		{name: "no format, no names", tls: TLS{}, want: []string{
			`cluster.tls.format: required: "coreos-static"`,
			"cluster.tls.peerSecret: required",
			"cluster.tls.serverSecret: required",
			"cluster.tls.clientSecret: required",
		}},
		{name: "unknown format", tls: TLS{Format: "cert-manager", PeerSecret: "{{ .Name }}-peer", ServerSecret: "{{ .Name }}-server", ClientSecret: "{{ .Name }}-client"}, want: []string{
			`cluster.tls.format: "cert-manager" is not "coreos-static"`,
		}},
		{name: "a bad template, a bad name", tls: TLS{Format: TLSCoreosStatic, PeerSecret: "{{ .Nme }}", ServerSecret: "{{ .Name }}_Server", ClientSecret: "{{ .Name }}-server"}, want: []string{
			"cluster.tls.peerSecret: template:",
			`cluster.tls.serverSecret: "sample_Server" (for cluster sample) is not a Secret name`,
		}},
		{name: "the same name twice", tls: TLS{Format: TLSCoreosStatic, PeerSecret: "{{ .Name }}-peer", ServerSecret: "{{ .Name }}-server", ClientSecret: "{{ .Name }}-peer"}, want: []string{
			`cluster.tls.clientSecret: "sample-peer" is also cluster.tls.peerSecret`,
		}},
		{name: "a name the template does not use", tls: TLS{Format: TLSCoreosStatic, PeerSecret: "{{ .Name }}-peer", ServerSecret: "{{ .Name }}-server", ClientSecret: "{{ .Name }}-operator"}, want: []string{
			`cluster.tls.clientSecret: the cluster template does not name "sample-operator"`,
		}},
	} {
		p := &Profile{Cluster: Cluster{Template: template, TLS: &tc.tls}}
		errs := p.validateTLS()
		expectErrors(t, tc.name, errs, tc.want)
	}
}

// cluster.tls is checked when a profile loads, with the rest.
func TestTLSIsValidatedOnLoad(t *testing.T) {
	_, err := Load(write(t, `
name: x
operator: {namespace: ops, serviceAccount: sa}
install: [{apply: x}]
uninstall: [{delete: x}]
cluster:
  template: "kind: EtcdCluster"
  resource: etcdclusters.etcd.database.coreos.com
  apiVersion: etcd.database.coreos.com/v1beta2
  kind: EtcdCluster
  sizePath: spec.size
  versionPath: spec.version
  memberSelector: app=etcd
  clientService: "{{ .Name }}-client"
  clientPort: 2379
  tls: {format: coreos-static, peerSecret: p, serverSecret: s}
etcd: {repository: r, initial: 3.6.16}
`))
	if err == nil || !strings.Contains(err.Error(), "cluster.tls.clientSecret: required") || !strings.Contains(err.Error(), `the cluster template does not name "p"`) {
		t.Errorf("error = %v", err)
	}
}

// expectErrors fails unless errs are exactly one error per want, each
// mentioned by some error, or none when nothing is wanted.
func expectErrors(t *testing.T, name string, errs []error, want []string) {
	t.Helper()
	msg := ""
	for _, err := range errs {
		msg += err.Error() + "\n"
	}
	if len(want) == 0 && len(errs) > 0 {
		t.Errorf("%s: %s", name, msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("%s: errors do not mention %q:\n%s", name, w, msg)
		}
	}
	if len(want) > 0 && len(errs) != len(want) {
		t.Errorf("%s: %d errors, want %d:\n%s", name, len(errs), len(want), msg)
	}
}
