package desired

import (
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/seed"
)

// withTLS is sample() with a static TLS policy naming the given Secrets.
func withTLS(peer, server, operator string) *etcdv1beta2.EtcdCluster {
	c := sample()
	c.Spec.TLS = &etcdv1beta2.TLSPolicy{Static: &etcdv1beta2.StaticTLS{
		Member:         &etcdv1beta2.MemberSecret{PeerSecret: peer, ServerSecret: server},
		OperatorSecret: operator,
	}}
	return c
}

// flagsWith returns the command's arguments that start with one of prefixes.
func flagsWith(cmd []string, prefixes ...string) []string {
	var out []string
	for _, arg := range cmd {
		if slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(arg, p) }) {
			out = append(out, arg)
		}
	}
	return out
}

var (
	peerFlags = []string{
		"--peer-client-cert-auth=true",
		"--peer-trusted-ca-file=/etc/etcdtls/member/peer-tls/peer-ca.crt",
		"--peer-cert-file=/etc/etcdtls/member/peer-tls/peer.crt",
		"--peer-key-file=/etc/etcdtls/member/peer-tls/peer.key",
	}
	clientFlags = []string{
		"--client-cert-auth=true",
		"--trusted-ca-file=/etc/etcdtls/member/server-tls/server-ca.crt",
		"--cert-file=/etc/etcdtls/member/server-tls/server.crt",
		"--key-file=/etc/etcdtls/member/server-tls/server.key",
	}
)

func tlsFlagsOf(cmd []string) []string {
	return flagsWith(cmd, "--peer-", "--client-cert", "--trusted-ca", "--cert-file", "--key-file")
}

// TestMemberPodWithTLS: with coreos' spec.TLS.static a member mounts the
// peer and server Secrets where coreos did, runs etcd with coreos' flags and
// file names, and uses https for the traffic each Secret secures; the
// probes' listener stays plain HTTP, and the operatorSecret is not mounted.
func TestMemberPodWithTLS(t *testing.T) {
	tests := []struct {
		name                     string
		c                        *etcdv1beta2.EtcdCluster
		peerScheme, clientScheme string
		flags                    []string
		secrets                  map[string]string // volume → Secret
	}{
		{"none", sample(), "http", "http", nil, map[string]string{}},
		{"empty policy", withTLS("", "", ""), "http", "http", nil, map[string]string{}},
		{"peer only", withTLS("etcd-peer-tls", "", ""), "https", "http", peerFlags,
			map[string]string{PeerTLSVolume: "etcd-peer-tls"}},
		{"client only", withTLS("", "etcd-server-tls", "etcd-client-tls"), "http", "https", clientFlags,
			map[string]string{ServerTLSVolume: "etcd-server-tls"}},
		{"both", withTLS("etcd-peer-tls", "etcd-server-tls", "etcd-client-tls"), "https", "https", slices.Concat(peerFlags, clientFlags),
			map[string]string{PeerTLSVolume: "etcd-peer-tls", ServerTLSVolume: "etcd-server-tls"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			initial := map[string]string{"example-a": PeerURL(tt.c, "example-a")}
			pod := MemberPod(tt.c, Member{Name: "example-a", Version: "3.5.21", InitialCluster: initial, NewCluster: true, Token: "t"}, Unsafe{})
			etcd := pod.Spec.Containers[0]
			wantURLs := []string{
				"--listen-client-urls=" + tt.clientScheme + "://0.0.0.0:2379",
				"--listen-peer-urls=" + tt.peerScheme + "://0.0.0.0:2380",
				"--listen-metrics-urls=http://0.0.0.0:2381",
				"--advertise-client-urls=" + tt.clientScheme + "://example-a.example.ns1.svc:2379",
				"--initial-advertise-peer-urls=" + tt.peerScheme + "://example-a.example.ns1.svc:2380",
				"--initial-cluster=example-a=" + tt.peerScheme + "://example-a.example.ns1.svc:2380",
			}
			if got := flagsWith(etcd.Command, "--listen-", "--advertise-", "--initial-advertise-", "--initial-cluster="); !slices.Equal(got, wantURLs) {
				t.Errorf("URL flags %q, want %q", got, wantURLs)
			}
			if got := tlsFlagsOf(etcd.Command); !slices.Equal(got, tt.flags) {
				t.Errorf("TLS flags %q, want %q", got, tt.flags)
			}
			secrets := map[string]string{}
			for _, v := range pod.Spec.Volumes {
				if v.Secret != nil {
					secrets[v.Name] = v.Secret.SecretName
				}
			}
			if !maps.Equal(secrets, tt.secrets) {
				t.Errorf("Secret volumes %v, want %v", secrets, tt.secrets)
			}
			dirs := map[string]string{PeerTLSVolume: PeerTLSDir, ServerTLSVolume: ServerTLSDir}
			if len(etcd.VolumeMounts) != 1+len(tt.secrets) {
				t.Errorf("mounts %+v, want the data volume and %d Secrets", etcd.VolumeMounts, len(tt.secrets))
			}
			for _, m := range etcd.VolumeMounts[1:] {
				if _, ok := tt.secrets[m.Name]; !ok || m.MountPath != dirs[m.Name] || !m.ReadOnly {
					t.Errorf("mount %+v, want a read-only mount of a Secret volume at coreos' path", m)
				}
			}
			for name, p := range map[string]*corev1.Probe{"startup": etcd.StartupProbe, "liveness": etcd.LivenessProbe, "readiness": etcd.ReadinessProbe} {
				if get := p.HTTPGet; get == nil || get.Port.IntValue() != MetricsPort || get.Scheme != corev1.URISchemeHTTP {
					t.Errorf("%s probe %+v, want a plain HTTP GET on the metrics port", name, p.ProbeHandler)
				}
			}
		})
	}
}

// TestSeededMembersOfATLSCluster: a member seeded from a survivor or a
// backup runs the same etcd container as any member of a new one-member
// cluster (TLS flags, mounts and https URLs included); its init container
// never mounts the member's certificates, a survivor's seed reaches it with
// the operatorSecret's certificate, and a restored member's data records
// an https peer URL.
func TestSeededMembersOfATLSCluster(t *testing.T) {
	c := withTLS("etcd-peer-tls", "etcd-server-tls", "etcd-client-tls")
	m := Member{Name: "example-new", Version: "3.5.21"}
	plain := m
	plain.InitialCluster = map[string]string{m.Name: PeerURL(c, m.Name)}
	plain.NewCluster, plain.Token = true, SeedToken(m.Name)
	want := MemberPod(c, plain, Unsafe{})

	restore := &etcdv1beta2.EtcdRestore{Spec: etcdv1beta2.RestoreSpec{BackupStorageType: etcdv1beta2.BackupStorageTypeS3,
		RestoreSource: etcdv1beta2.RestoreSource{S3: &etcdv1beta2.S3RestoreSource{Path: "bucket/key", AWSSecret: "aws"}}}}
	restore.UID = "restore-uid"
	for name, pod := range map[string]*corev1.Pod{
		"survivor": SeedPod(c, m, Seed{Image: "op", From: "example-old", FromURL: "https://10.0.0.7:2379"}, Unsafe{}),
		"backup":   RestoreSeedPod(c, m, "op", restore, Unsafe{}),
	} {
		if !equality.Semantic.DeepEqual(pod.Spec.Containers, want.Spec.Containers) {
			t.Errorf("%s: etcd container %+v, want a member's %+v", name, pod.Spec.Containers, want.Spec.Containers)
		}
		for _, v := range want.Spec.Volumes {
			if !slices.ContainsFunc(pod.Spec.Volumes, func(got corev1.Volume) bool { return equality.Semantic.DeepEqual(got, v) }) {
				t.Errorf("%s: volumes %+v lack %+v", name, pod.Spec.Volumes, v)
			}
		}
		for _, mount := range pod.Spec.InitContainers[0].VolumeMounts {
			if mount.Name == PeerTLSVolume || mount.Name == ServerTLSVolume {
				t.Errorf("%s: the init container mounts the member's certificates: %+v", name, mount)
			}
		}
	}

	// The survivor requires a client certificate: the seed container
	// reaches it with the operator's, and checks it against ServerName.
	survivor := SeedPod(c, m, Seed{Image: "op", From: "example-old", FromURL: "https://10.0.0.7:2379"}, Unsafe{})
	init := survivor.Spec.InitContainers[0]
	cfg, err := seed.ParseFlags(init.Command[2:])
	if err != nil {
		t.Fatal(err)
	}
	if cfg.From != "https://10.0.0.7:2379" || cfg.EtcdTLSDir != OperatorTLSDir || cfg.EtcdServerName != ServerName(c) {
		t.Errorf("seed %+v, want it to reach the survivor with the certificate in %s, checked against %s", cfg, OperatorTLSDir, ServerName(c))
	}
	wantMount := corev1.VolumeMount{Name: OperatorTLSVolume, MountPath: OperatorTLSDir, ReadOnly: true}
	hasMount := func(mounts []corev1.VolumeMount) bool {
		return slices.ContainsFunc(mounts, func(m corev1.VolumeMount) bool { return equality.Semantic.DeepEqual(m, wantMount) })
	}
	if !hasMount(init.VolumeMounts) || !slices.ContainsFunc(survivor.Spec.Volumes, func(v corev1.Volume) bool {
		return v.Name == OperatorTLSVolume && v.Secret != nil && v.Secret.SecretName == "etcd-client-tls"
	}) {
		t.Errorf("seed container mounts %+v, volumes %+v: want the operatorSecret at %s", init.VolumeMounts, survivor.Spec.Volumes, OperatorTLSDir)
	}
	if hasMount(survivor.Spec.Containers[0].VolumeMounts) {
		t.Error("etcd mounts the operatorSecret; only the seed container needs it")
	}
	plainSeed := SeedPod(sample(), m, Seed{Image: "op", From: "example-old", FromURL: "http://10.0.0.7:2379"}, Unsafe{})
	if got := flagsWith(plainSeed.Spec.InitContainers[0].Command, "--etcd-"); len(got) > 0 || len(plainSeed.Spec.Volumes) != 1 {
		t.Errorf("seed of a cluster without TLS: flags %q, volumes %+v", got, plainSeed.Spec.Volumes)
	}
	if cmd := RestoreSeedCommand(c, m.Name, restore.Spec); !slices.Contains(cmd, "--initial-advertise-peer-urls=https://example-new.example.ns1.svc:2380") {
		t.Errorf("restore seed command %q does not restore the member with its https peer URL", cmd)
	}
}

// TestTLSPolicy: the helpers read coreos' fields with coreos' meaning, and
// Validate refuses what the CRD's rule refuses (for API servers without CEL).
func TestTLSPolicy(t *testing.T) {
	tests := []struct {
		name         string
		tls          *etcdv1beta2.TLSPolicy
		peer, client bool
		invalid      bool
	}{
		{"nil", nil, false, false, false},
		{"no static", &etcdv1beta2.TLSPolicy{}, false, false, false},
		{"peer", withTLS("p", "", "").Spec.TLS, true, false, false},
		{"client", withTLS("", "s", "o").Spec.TLS, false, true, false},
		{"both", withTLS("p", "s", "o").Spec.TLS, true, true, false},
		{"operator without server", withTLS("p", "", "o").Spec.TLS, true, false, true},
		{"server without operator", withTLS("", "s", "").Spec.TLS, false, false, true},
		{"operator without member", &etcdv1beta2.TLSPolicy{Static: &etcdv1beta2.StaticTLS{OperatorSecret: "o"}}, false, false, true},
	}
	for _, tt := range tests {
		if got := tt.tls.IsSecurePeer(); got != tt.peer {
			t.Errorf("%s: IsSecurePeer %v, want %v", tt.name, got, tt.peer)
		}
		if got := tt.tls.IsSecureClient(); got != tt.client {
			t.Errorf("%s: IsSecureClient %v, want %v", tt.name, got, tt.client)
		}
		if err := tt.tls.Validate(); (err != nil) != tt.invalid {
			t.Errorf("%s: Validate = %v, want invalid %v", tt.name, err, tt.invalid)
		}
	}
	if got := ServerName(sample()); got != "example.example.ns1.svc" {
		t.Errorf("ServerName %q, want a name under *.example.ns1.svc", got)
	}
}
