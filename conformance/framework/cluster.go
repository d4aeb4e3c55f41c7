package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/etcdproof/etcdproof/conformance/profile"
)

// EtcdCluster is one cluster CR created by a spec.
type EtcdCluster struct {
	env       *Env
	Name      string
	Namespace string
	// SpecNamespace is the namespace the suite created for this cluster
	// and deletes with it; empty when the profile pins the namespace.
	SpecNamespace string
	// ExtraObjects counts the profile's extra objects created for it;
	// ExtraUIDs are their UIDs (the run's objects, not the operator's).
	ExtraObjects int
	ExtraUIDs    []string
	// tls is what the suite made for a profile with cluster.tls; nil
	// without.
	tls *clusterTLS
	// data is what the CR was rendered from (CreateAgain renders it again).
	data profile.TemplateData
	// membership, when set, records changes of the member list and leader
	// that ground truths see (RecordMembershipChanges).
	membership *membershipWatch
	// forward, when set, stands in for a port-forward to a member pod's
	// client port (tests reach members on loopback).
	forward func(pod string) (localPort int, stop func(), err error)
}

// Claims is what the operator says about the cluster in the CR status.
type Claims struct {
	Phase          string
	ReadyMembers   int
	CurrentVersion string
	// Unfilled names the status fields the profile names that were missing
	// or zero when read ("readyMembers (status.members.ready)"): a claim
	// the operator never makes cannot agree with etcd.
	Unfilled []string `json:"unfilled,omitempty"`
}

func (e *Env) crResource() dynamic.NamespaceableResourceInterface {
	group, resource := "", e.Profile.Cluster.Resource
	if i := strings.Index(resource, "."); i >= 0 {
		group, resource = resource[i+1:], resource[:i]
	}
	version := e.Profile.Cluster.APIVersion[strings.LastIndex(e.Profile.Cluster.APIVersion, "/")+1:]
	return e.Dynamic.Resource(schema.GroupVersionResource{Group: group, Version: version, Resource: resource})
}

// ClusterSpec is what the suite asks of a cluster it creates.
type ClusterSpec struct {
	Namespace, Name string
	Size            int
	Version         string
	// Durable asks the profile's template for members whose data survives
	// their pods (profile.TemplateData.Durable).
	Durable bool
	// QuotaBackendBytes asks the profile's template for this backend quota
	// (profile.TemplateData.QuotaBackendBytes); 0 leaves etcd's default.
	QuotaBackendBytes int64
}

// CreateCluster renders the profile's extra objects and CR and creates them;
// with cluster.tls, the cluster's TLS Secrets come first.
func (e *Env) CreateCluster(ctx context.Context, spec ClusterSpec) (*EtcdCluster, error) {
	namespace, name := spec.Namespace, spec.Name
	data := profile.TemplateData{Name: name, Namespace: namespace, Size: spec.Size, Version: spec.Version, Durable: spec.Durable, QuotaBackendBytes: spec.QuotaBackendBytes,
		Repository: e.Profile.Etcd.Repository, ServedAPI: e.Served}
	c := &EtcdCluster{env: e, Name: name, Namespace: namespace, data: data}
	if e.Profile.Cluster.TLS != nil {
		var err error
		if c.tls, err = e.createTLSSecrets(ctx, name, namespace); err != nil {
			return nil, err
		}
	}
	var extra []string
	for i, tpl := range e.Profile.Cluster.ExtraObjects {
		uid, err := e.createRendered(ctx, tpl, data)
		if err != nil {
			return nil, fmt.Errorf("extra object %d: %w", i, err)
		}
		if uid != "" {
			extra = append(extra, uid)
		}
	}
	if _, err := e.createRendered(ctx, e.Profile.Cluster.Template, data); err != nil {
		return nil, fmt.Errorf("cluster CR: %w", err)
	}
	c.ExtraObjects, c.ExtraUIDs = len(extra), extra
	return c, nil
}

// RunCreatedUIDs are the UIDs of what the run created in the cluster's
// namespace for it (extra objects, TLS Secrets): the cleanup check does
// not count them as the operator's leftovers.
func (c *EtcdCluster) RunCreatedUIDs() []string {
	uids := slices.Clone(c.ExtraUIDs)
	if c.tls != nil {
		uids = append(uids, c.tls.uids...)
	}
	return uids
}

// createRendered creates the object a template renders to and returns its
// UID; one that renders to nothing (its condition is false on this
// cluster) is not created ("").
func (e *Env) createRendered(ctx context.Context, tpl string, data profile.TemplateData) (string, error) {
	text, err := profile.Render(tpl, data)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(text) == "" {
		return "", nil
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(text), &obj.Object); err != nil {
		return "", fmt.Errorf("rendered object is not YAML: %w", err)
	}
	gv, err := schema.ParseGroupVersion(obj.GetAPIVersion())
	if err != nil {
		return "", err
	}
	mapping, err := e.restMapping(ctx, gv.WithKind(obj.GetKind()))
	if err != nil {
		return "", err
	}
	created, err := e.Dynamic.Resource(mapping).Namespace(obj.GetNamespace()).Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return string(created.GetUID()), nil
}

// restMapping maps a kind to the resource that serves it (mapKind).
func (e *Env) restMapping(ctx context.Context, gvk schema.GroupVersionKind) (schema.GroupVersionResource, error) {
	mapping, err := e.mapKind(ctx, gvk)
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	return mapping.Resource, nil
}

// mapKind maps a kind to its resource and scope, with the run's
// discovery-backed REST mapper. Its discovery is cached, so a kind it does
// not know is looked up once more after a reset: install steps add kinds
// (CRDs) after the first lookup. The error of a kind not served still
// satisfies meta.IsNoMatchError.
func (e *Env) mapKind(ctx context.Context, gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	mapping, err := e.mapper.RESTMappingWithContext(ctx, gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		e.mapper.ResetWithContext(ctx)
		mapping, err = e.mapper.RESTMappingWithContext(ctx, gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("the API server does not serve kind %s: %w", gvk, err)
	}
	return mapping, nil
}

// Get returns the CR.
func (c *EtcdCluster) Get(ctx context.Context) (*unstructured.Unstructured, error) {
	return c.env.crResource().Namespace(c.Namespace).Get(ctx, c.Name, metav1.GetOptions{})
}

// SetSize writes spec size at the profile's field path.
func (c *EtcdCluster) SetSize(ctx context.Context, size int) error {
	if err := c.patch(ctx, c.env.Profile.Cluster.SizePath, size); err != nil {
		return err
	}
	c.data.Size = size
	return nil
}

// Size is the size the suite last asked of the cluster.
func (c *EtcdCluster) Size() int { return c.data.Size }

// SetVersion writes the etcd version at the profile's field path.
func (c *EtcdCluster) SetVersion(ctx context.Context, version string) error {
	value, err := c.env.Profile.VersionValue(version)
	if err != nil {
		return fmt.Errorf("cluster.versionValue: %w", err)
	}
	return c.patch(ctx, c.env.Profile.Cluster.VersionPath, value)
}

func (c *EtcdCluster) patch(ctx context.Context, path string, value any) error {
	parts := strings.Split(path, ".")
	var doc any = value
	for i := len(parts) - 1; i >= 0; i-- {
		doc = map[string]any{parts[i]: doc}
	}
	body, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	_, err = c.env.crResource().Namespace(c.Namespace).Patch(ctx, c.Name, types.MergePatchType, body, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("set %s=%v on %s/%s: %w", path, value, c.Namespace, c.Name, err)
	}
	return nil
}

// Delete deletes the CR; a missing CR is not an error.
func (c *EtcdCluster) Delete(ctx context.Context) error {
	err := c.env.crResource().Namespace(c.Namespace).Delete(ctx, c.Name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// Gone reports whether the CR no longer exists.
func (c *EtcdCluster) Gone(ctx context.Context) (bool, error) {
	_, err := c.Get(ctx)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}

// Claims reads the status fields the profile names.
func (c *EtcdCluster) Claims(ctx context.Context) (Claims, error) {
	st := c.env.Profile.Cluster.Status
	if st == (profile.StatusPaths{}) {
		// Nothing to read, and maybe no CR to read it from (a floor cluster).
		return Claims{}, nil
	}
	obj, err := c.Get(ctx)
	if err != nil {
		return Claims{}, err
	}
	var cl Claims
	if st.Phase != "" {
		cl.Phase, _, _ = unstructured.NestedString(obj.Object, strings.Split(st.Phase, ".")...)
		if cl.Phase == "" {
			cl.Unfilled = append(cl.Unfilled, "phase ("+st.Phase+")")
		}
	}
	if st.CurrentVersion != "" {
		cl.CurrentVersion, _, _ = unstructured.NestedString(obj.Object, strings.Split(st.CurrentVersion, ".")...)
		if cl.CurrentVersion == "" {
			cl.Unfilled = append(cl.Unfilled, "currentVersion ("+st.CurrentVersion+")")
		}
	}
	if st.ReadyMembers != "" {
		v, _, _ := unstructured.NestedFieldNoCopy(obj.Object, strings.Split(st.ReadyMembers, ".")...)
		switch x := v.(type) {
		case []any:
			cl.ReadyMembers = len(x)
		case int64:
			cl.ReadyMembers = int(x)
		case float64:
			cl.ReadyMembers = int(x)
		}
		if cl.ReadyMembers == 0 {
			cl.Unfilled = append(cl.Unfilled, "readyMembers ("+st.ReadyMembers+")")
		}
	}
	return cl, nil
}

// MemberPods lists the pods the profile's selector finds.
func (c *EtcdCluster) MemberPods(ctx context.Context) ([]corev1.Pod, error) {
	sel, err := profile.Render(c.env.Profile.Cluster.MemberSelector, profile.TemplateData{Name: c.Name, Namespace: c.Namespace})
	if err != nil {
		return nil, err
	}
	list, err := c.env.Kube.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// ClientEndpoint is the in-cluster URL of the client Service: https for a
// TLS cluster (clientv3 dials an http:// URL in plain text whatever its TLS
// configuration).
func (c *EtcdCluster) ClientEndpoint() string {
	svc, _ := profile.Render(c.env.Profile.Cluster.ClientService, profile.TemplateData{Name: c.Name, Namespace: c.Namespace})
	scheme := "http"
	if c.tls != nil {
		scheme = "https"
	}
	return fmt.Sprintf("%s://%s.%s.svc:%d", scheme, svc, c.Namespace, c.env.Profile.Cluster.ClientPort)
}

func podReady(p corev1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
