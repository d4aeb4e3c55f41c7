package controller_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/conditions"
	"github.com/etcdproof/etcdproof/operator/internal/plan"
)

// TestGeneratedRoleIsEnough runs the operator, with leader election on, as a
// ServiceAccount bound to the generated Role (manifests/rbac/role.yaml) and
// the leader-election Role and nothing else: creating a cluster must work
// with exactly those verbs, and the generated Role (the ClusterRole's source)
// must not carry the Leases only the operator's own namespace needs. Of
// Secrets it may only get (a TLS cluster's operatorSecret, by name): list or
// watch would read every Secret in scope.
func TestGeneratedRoleIsEnough(t *testing.T) {
	needAPIServer(t)
	ctx := context.Background()
	ns := newNamespace(t)

	role := readRole(t, "role.yaml")
	for _, rule := range role.Rules {
		for _, verb := range rule.Verbs {
			if verb == "*" {
				t.Fatalf("generated Role grants *: %+v", rule)
			}
		}
		for _, res := range rule.Resources {
			if res == "*" || res == "leases" || (res == "secrets" && !slices.Equal(rule.Verbs, []string{"get"})) {
				t.Fatalf("generated Role grants %s: %+v", res, rule)
			}
		}
	}
	election := readRole(t, "leader_election_role.yaml")
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "etcd-operator", Namespace: ns}}
	objects := []client.Object{sa}
	for _, r := range []*rbacv1.Role{role, election} {
		r.Namespace = ns
		objects = append(objects, r, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: r.Name, Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: r.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: ns}},
		})
	}
	for _, obj := range objects {
		if err := k8s.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	asOperator := rest.CopyConfig(cfg)
	asOperator.Impersonate = rest.ImpersonationConfig{UserName: fmt.Sprintf("system:serviceaccount:%s:%s", ns, sa.Name)}
	startOperatorAs(t, asOperator, ns, nil, plan.Options{}, func(o *ctrl.Options) {
		o.LeaderElection = true
		o.LeaderElectionID = "etcd-operator.etcd.database.coreos.com"
		o.LeaderElectionNamespace = ns
		o.LeaderElectionReleaseOnCancel = true
	})

	c := newCluster(ns, "rbac", 3, "3.5.21")
	if err := k8s.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "leadership won; pods, Services and status made with the Roles' verbs only", func() error {
		pods, err := memberPods(ctx, ns, "rbac")
		if err != nil {
			return err
		}
		var svcs corev1.ServiceList
		if err := k8s.List(ctx, &svcs, client.InNamespace(ns)); err != nil {
			return err
		}
		var got etcdv1beta2.EtcdCluster
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(c), &got); err != nil {
			return err
		}
		if len(pods) != 3 || len(svcs.Items) != 2 || got.Status.Phase != etcdv1beta2.PhaseCreating {
			return fmt.Errorf("%d pods, %d Services, phase %q", len(pods), len(svcs.Items), got.Status.Phase)
		}
		return nil
	})
}

func readRole(t *testing.T, file string) *rbacv1.Role {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "manifests", "rbac", file))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.Role
	if err := yaml.UnmarshalStrict(raw, &role); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return &role
}

// TestStatusNotWrittenSaysWhy: run under a grant without the status
// subresource (the book's Role beside the reference's CRD), the operator
// still manages the cluster, and a Warning Event on the EtcdCluster says
// why it shows no status. Before, only the operator's log said so.
func TestStatusNotWrittenSaysWhy(t *testing.T) {
	needAPIServer(t)
	if !eventsRecorded(t) {
		return
	}
	ctx := context.Background()
	ns := newNamespace(t)
	withoutStatus := func(r *rbacv1.Role) {
		for i := range r.Rules {
			r.Rules[i].Resources = slices.DeleteFunc(slices.Clone(r.Rules[i].Resources), func(res string) bool { return res == "etcdclusters/status" })
		}
	}
	startOperatorAs(t, asGeneratedRole(t, ns, withoutStatus), ns, nil, plan.Options{})
	c := newCluster(ns, "unwritten", 3, "3.5.21")
	if err := k8s.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a Warning Event saying the status cannot be stored", func() error {
		var events corev1.EventList
		if err := k8s.List(ctx, &events, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.Reason == conditions.EventStatusNotWritten && e.Type == corev1.EventTypeWarning && e.InvolvedObject.Name == c.Name &&
				strings.Contains(e.Message, "etcdclusters/status") {
				return nil
			}
		}
		return fmt.Errorf("%d events, none about the status", len(events.Items))
	})
}
