package desired

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
)

func sample() *etcdv1beta2.EtcdCluster {
	return &etcdv1beta2.EtcdCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "example", Namespace: "ns1", UID: "uid-1"},
		Spec:       etcdv1beta2.EtcdClusterSpec{Size: 3, Version: "3.5.21"},
	}
}

func TestNamesAndURLs(t *testing.T) {
	tests := []struct{ got, want string }{
		{PeerServiceName("example"), "example"},
		{ClientServiceName("example"), "example-client"},
		{PeerURL(sample(), "example-abc"), "http://example-abc.example.ns1.svc:2380"},
		{ClientURL(sample(), "example-abc"), "http://example-abc.example.ns1.svc:2379"},
		{MemberNameFromPeerURL("http://example-abc.example.ns1.svc:2380"), "example-abc"},
		{MemberNameFromPeerURL("http://127.0.0.1:2380"), "127"},
		{Image(sample(), "3.5.21"), "quay.io/coreos/etcd:v3.5.21"},
		{ImageOf("registry.local/etcd", "3.6.5"), "registry.local/etcd:v3.6.5"},
		{InitialClusterFlag(map[string]string{"b": "http://b:2380", "a": "http://a:2380"}), "a=http://a:2380,b=http://b:2380"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

func TestServices(t *testing.T) {
	c := sample()
	peer, client := PeerService(c), ClientService(c)
	if peer.Name != "example" || peer.Spec.ClusterIP != corev1.ClusterIPNone || !peer.Spec.PublishNotReadyAddresses {
		t.Errorf("peer Service must be headless and publish not-ready addresses: %+v", peer.Spec)
	}
	if len(peer.Spec.Ports) != 2 || peer.Spec.Ports[0].Port != 2379 || peer.Spec.Ports[1].Port != 2380 {
		t.Errorf("peer Service ports: %+v", peer.Spec.Ports)
	}
	if client.Name != "example-client" || len(client.Spec.Ports) != 1 || client.Spec.Ports[0].Port != 2379 {
		t.Errorf("client Service: %+v", client)
	}
	for _, svc := range []*corev1.Service{peer, client} {
		if svc.Spec.Selector["app"] != "etcd" || svc.Spec.Selector["etcd_cluster"] != "example" {
			t.Errorf("%s selector: %v", svc.Name, svc.Spec.Selector)
		}
		if len(svc.OwnerReferences) != 1 || svc.OwnerReferences[0].UID != "uid-1" || !*svc.OwnerReferences[0].Controller {
			t.Errorf("%s owner references: %+v", svc.Name, svc.OwnerReferences)
		}
	}
}

func TestMemberPod(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(*etcdv1beta2.EtcdCluster)
		member Member
		check  func(t *testing.T, p *corev1.Pod)
	}{
		{"bootstrap member", nil,
			Member{Name: "example-a", Version: "3.5.21", NewCluster: true, Token: "uid-1",
				InitialCluster: map[string]string{"example-a": "http://example-a.example.ns1.svc:2380", "example-b": "http://example-b.example.ns1.svc:2380"}},
			func(t *testing.T, p *corev1.Pod) {
				cmd := strings.Join(p.Spec.Containers[0].Command, " ")
				for _, want := range []string{
					"/usr/local/bin/etcd", "--name=example-a", "--initial-cluster-state=new", "--initial-cluster-token=uid-1",
					"--initial-advertise-peer-urls=http://example-a.example.ns1.svc:2380",
					"--initial-cluster=example-a=http://example-a.example.ns1.svc:2380,example-b=http://example-b.example.ns1.svc:2380",
				} {
					if !strings.Contains(cmd, want) {
						t.Errorf("command %q lacks %q", cmd, want)
					}
				}
				// The plan stops members by deleting their pods: etcd needs time
				// to drain client calls and hand over leadership after SIGTERM.
				if g := p.Spec.TerminationGracePeriodSeconds; g == nil || *g < 30 {
					t.Errorf("terminationGracePeriodSeconds %v: etcd may be killed before it stops gracefully", g)
				}
				if p.Spec.Hostname != "example-a" || p.Spec.Subdomain != "example" {
					t.Errorf("hostname/subdomain %q/%q", p.Spec.Hostname, p.Spec.Subdomain)
				}
				if p.Labels["app"] != "etcd" || p.Labels["etcd_cluster"] != "example" || p.Annotations["etcd.version"] != "3.5.21" {
					t.Errorf("labels %v annotations %v", p.Labels, p.Annotations)
				}
				if p.Spec.Containers[0].Image != "quay.io/coreos/etcd:v3.5.21" || p.Spec.Volumes[0].EmptyDir == nil {
					t.Errorf("image %q volume %+v", p.Spec.Containers[0].Image, p.Spec.Volumes[0])
				}
				psc, csc := p.Spec.SecurityContext, p.Spec.Containers[0].SecurityContext
				if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.SeccompProfile == nil ||
					csc == nil || *csc.AllowPrivilegeEscalation || len(csc.Capabilities.Drop) != 1 {
					t.Errorf("member pod does not meet the restricted Pod Security Standard by default: %+v %+v", psc, csc)
				}
			}},
		{"joining member has no token and state existing", nil,
			Member{Name: "example-c", Version: "3.6.5", InitialCluster: map[string]string{"example-c": "u"}},
			func(t *testing.T, p *corev1.Pod) {
				cmd := p.Spec.Containers[0].Command
				if !slices.Contains(cmd, "--initial-cluster-state=existing") || strings.Contains(strings.Join(cmd, " "), "token") {
					t.Errorf("command %v", cmd)
				}
			}},
		{"a member brought back after a failed pull records the image", nil,
			Member{Name: "example-c", Version: "3.5.21", ImageNotPulled: "quay.io/coreos/etcd:v3.6.99"},
			func(t *testing.T, p *corev1.Pod) {
				if got := p.Annotations[AnnotationImageNotPulled]; got != "quay.io/coreos/etcd:v3.6.99" || p.Spec.Containers[0].Image != "quay.io/coreos/etcd:v3.5.21" {
					t.Errorf("annotation %q, image %q", got, p.Spec.Containers[0].Image)
				}
			}},
		{"a member brought back after it crashed on a release records the image", nil,
			Member{Name: "example-c", Version: "3.5.33", ImageUnhealthy: "quay.io/coreos/etcd:v3.5.36"},
			func(t *testing.T, p *corev1.Pod) {
				if got := p.Annotations[AnnotationImageUnhealthy]; got != "quay.io/coreos/etcd:v3.5.36" || p.Spec.Containers[0].Image != "quay.io/coreos/etcd:v3.5.33" {
					t.Errorf("annotation %q, image %q", got, p.Spec.Containers[0].Image)
				}
			}},
		{"pod policy is applied and cannot override selector labels",
			func(c *etcdv1beta2.EtcdCluster) {
				c.Spec.Repository = "registry.local/etcd"
				c.Spec.Pod = &etcdv1beta2.PodPolicy{
					Labels:       map[string]string{"team": "a", "app": "other"},
					NodeSelector: map[string]string{"disk": "ssd"},
					AntiAffinity: true,
					EtcdEnv:      []corev1.EnvVar{{Name: "ETCD_QUOTA_BACKEND_BYTES", Value: "1"}},
					Resources:    corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}},
				}
			},
			Member{Name: "example-a", Version: "3.5.21"},
			func(t *testing.T, p *corev1.Pod) {
				if p.Labels["team"] != "a" || p.Labels["app"] != "etcd" || p.Spec.NodeSelector["disk"] != "ssd" {
					t.Errorf("labels %v nodeSelector %v", p.Labels, p.Spec.NodeSelector)
				}
				if a := p.Spec.Affinity; a == nil || a.PodAntiAffinity == nil || len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 1 {
					t.Errorf("antiAffinity not applied as one member per node: %+v", a)
				}
				if p.Spec.Containers[0].Image != "registry.local/etcd:v3.5.21" || len(p.Spec.Containers[0].Env) != 1 {
					t.Errorf("image %q env %v", p.Spec.Containers[0].Image, p.Spec.Containers[0].Env)
				}
			}},
		{"with no affinity asked for, members prefer nodes without another member",
			nil,
			Member{Name: "example-a", Version: "3.5.21"},
			func(t *testing.T, p *corev1.Pod) {
				a := p.Spec.Affinity
				if a == nil || a.PodAntiAffinity == nil || len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 0 ||
					len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 {
					t.Fatalf("affinity %+v, want only a preferred anti-affinity", a)
				}
				term := a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm
				if term.TopologyKey != corev1.LabelHostname || term.LabelSelector.MatchLabels["etcd_cluster"] != "example" {
					t.Errorf("term %+v, want the cluster's members spread by host name", term)
				}
			}},
		{"a user's affinity replaces the spreading",
			func(c *etcdv1beta2.EtcdCluster) {
				c.Spec.Pod = &etcdv1beta2.PodPolicy{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}}
			},
			Member{Name: "example-a", Version: "3.5.21"},
			func(t *testing.T, p *corev1.Pod) {
				if a := p.Spec.Affinity; a == nil || a.NodeAffinity == nil || a.PodAntiAffinity != nil {
					t.Errorf("affinity %+v, want the user's", a)
				}
			}},
		{"pvc spec gives the member a claim named after it",
			func(c *etcdv1beta2.EtcdCluster) {
				c.Spec.Pod = &etcdv1beta2.PodPolicy{PersistentVolumeClaimSpec: &corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				}}
			},
			Member{Name: "example-a", Version: "3.5.21"},
			func(t *testing.T, p *corev1.Pod) {
				v := p.Spec.Volumes[0]
				if v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "example-a" {
					t.Errorf("volume %+v", v)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := sample()
			if tt.edit != nil {
				tt.edit(c)
			}
			p := MemberPod(c, tt.member, Unsafe{})
			if p.Name != tt.member.Name || p.Namespace != "ns1" || len(p.OwnerReferences) != 1 {
				t.Fatalf("pod identity: %s/%s owners %v", p.Namespace, p.Name, p.OwnerReferences)
			}
			tt.check(t, p)
		})
	}
}

func TestMemberPVC(t *testing.T) {
	c := sample()
	if MemberPVC(c, "example-a") != nil {
		t.Fatal("emptyDir cluster got a claim")
	}
	c.Spec.Pod = &etcdv1beta2.PodPolicy{PersistentVolumeClaimSpec: &corev1.PersistentVolumeClaimSpec{}}
	pvc := MemberPVC(c, "example-a")
	if pvc == nil || pvc.Name != "example-a" || pvc.Labels["etcd_cluster"] != "example" || len(pvc.OwnerReferences) != 1 {
		t.Fatalf("claim %+v", pvc)
	}
}

func TestBootstrapClusterReadsBackTheCommand(t *testing.T) {
	c := sample()
	initial := map[string]string{"example-a": PeerURL(sample(), "example-a"), "example-b": PeerURL(sample(), "example-b")}
	boot := EtcdCommand(c, Member{Name: "example-a", Version: "3.5.21", InitialCluster: initial, NewCluster: true, Token: "uid-1"})
	got := BootstrapCluster(boot)
	if len(got) != 2 || got["example-b"] != initial["example-b"] || TokenOf(boot) != "uid-1" {
		t.Fatalf("read back %v token %q from %v", got, TokenOf(boot), boot)
	}
	join := EtcdCommand(c, Member{Name: "example-c", Version: "3.5.21", InitialCluster: initial})
	if BootstrapCluster(join) != nil {
		t.Fatalf("a joining member's command was read as a bootstrap")
	}
}
