package main

import (
	"context"
	"fmt"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
	"github.com/etcdproof/etcdproof/operator/internal/crdinstall"
	"github.com/etcdproof/etcdproof/operator/internal/kubecompat"
)

// grant is how the operator fits the credentials it was given, asked once at
// start: its own Roles allow everything below, coreos' documented Role
// (etcdclusters, core pods, services, endpoints, claims, events) does not.
type grant struct {
	// watched is the namespace whose clusters are managed, "" for all.
	watched     string
	leaderElect bool
	// leaseLock is the leader-election lock where the manager's own cannot
	// serve (nil: the manager builds it).
	leaseLock resourcelock.Interface
	// statusWithObject: etcdclusters/status may not be written, status goes
	// with the object (and --create-crd leaves the status subresource out).
	statusWithObject bool
	events           kubecompat.EventsAPI
	// eventsWhy says why events.k8s.io/v1 is not used ("" when it is).
	eventsWhy string
	// noDisruptionBudget says why clusters get no PodDisruptionBudget.
	noDisruptionBudget string
	// noEviction says why member pods are deleted rather than evicted.
	noEviction string
	// noRestores and noBackups say why EtcdRestores and EtcdBackups are not
	// served ("" when they are): their CRD is not installed, or the grant
	// does not let the operator read them.
	noRestores, noBackups string
	// backupStatusWithObject, restoreStatusWithObject: etcdbackups/status or
	// etcdrestores/status may not be written; status goes with the object.
	backupStatusWithObject, restoreStatusWithObject bool
}

// fitGrant decides the grant-dependent behaviour and logs each fallback once.
func fitGrant(ctx context.Context, restCfg *rest.Config, access *kubecompat.Access, o options, log logger) (grant, error) {
	g := grant{leaderElect: o.leaderElect, watched: o.namespace}
	if o.clusterWide {
		g.watched = ""
	}
	if g.leaderElect {
		ok, err := access.LeasesAllowed(ctx, o.leaderElectionNamespace)
		if err != nil {
			return g, err
		}
		if !ok {
			g.leaderElect = false
			log.Info("leader election off: the operator may not get, create and update Leases (coordination.k8s.io) "+
				"in its namespace; coreos' Role grants none, and client-go no longer has the Endpoints lock coreos used. "+
				"Run one replica, or grant Leases", "namespace", o.leaderElectionNamespace)
		}
	}
	if g.leaderElect {
		lock, why, err := access.LeaseLockFor(restCfg, o.leaderElectionNamespace, leaderElectionID)
		if err != nil {
			return g, err
		}
		switch {
		case why != "":
			g.leaderElect = false
			log.Info("leader election off: "+why+". Run one replica", "namespace", o.leaderElectionNamespace)
		case lock != nil:
			g.leaseLock = lock
			log.Info("electing the leader with a coordination.k8s.io/v1beta1 Lease: the API server serves no v1 Leases (Kubernetes before 1.14)")
		}
	}

	var err error
	if g.events, g.eventsWhy, err = access.ChooseEvents(ctx, g.watched); err != nil {
		return g, err
	}
	switch g.events {
	case kubecompat.CoreEvents:
		log.Info("recording Events through core/v1", "why", g.eventsWhy)
	case kubecompat.NoEvents:
		log.Info("recording no Events: the Authorized condition of each cluster says so", "why", g.eventsWhy)
	}

	statusAllowed, _, err := access.Allowed(ctx, etcdv1beta2.GroupVersion.Group, "etcdclusters/status", g.watched, "update")
	if err != nil {
		return g, err
	}
	g.statusWithObject = !statusAllowed
	if g.statusWithObject {
		log.Info("writing status with the EtcdCluster object: update on etcdclusters/status is not allowed")
	}

	ok, verb, err := access.Allowed(ctx, policyv1.GroupName, "poddisruptionbudgets", g.watched, "get", "list", "watch", "create", "update")
	if err != nil {
		return g, err
	}
	if !ok {
		g.noDisruptionBudget = verb + " on poddisruptionbudgets (policy) is not allowed"
		log.Info("clusters get no PodDisruptionBudget", "why", g.noDisruptionBudget)
	}

	if ok, _, err = access.Allowed(ctx, "", "pods/eviction", g.watched, "create"); err != nil {
		return g, err
	}
	if !ok {
		g.noEviction = "create on pods/eviction is not allowed"
		log.Info("member pods are stopped with a plain delete, not evicted: a drain at the same time is not held back by the operator's own stops, nor they by it",
			"why", g.noEviction)
	}
	return g, nil
}

// fitBackups decides whether EtcdBackups and EtcdRestores are served, once
// the CRDs are installed (--create-crd), and says once why not.
func (g *grant) fitBackups(ctx context.Context, access *kubecompat.Access, log logger) error {
	var err error
	if g.noRestores, err = whyNotServed(ctx, access, g.watched, "etcdrestores"); err != nil {
		return err
	}
	if g.noBackups, err = whyNotServed(ctx, access, g.watched, "etcdbackups"); err != nil {
		return err
	}
	if g.noRestores != "" {
		log.Info("EtcdRestores are not served", "why", g.noRestores)
	}
	if g.noBackups != "" {
		log.Info("EtcdBackups are not served", "why", g.noBackups)
	}
	if g.restoreStatusWithObject, err = statusWithObject(ctx, access, g.watched, "etcdrestores", g.noRestores, log); err != nil {
		return err
	}
	g.backupStatusWithObject, err = statusWithObject(ctx, access, g.watched, "etcdbackups", g.noBackups, log)
	return err
}

// statusWithObject says whether the status of resource's objects must be
// written with the object, as its status subresource may not be updated
// (coreos' Role grants etcdbackups and etcdrestores, not their status), and
// logs so once. Asking at start spares a refused request at every write.
func statusWithObject(ctx context.Context, access *kubecompat.Access, namespace, resource, notServed string, log logger) (bool, error) {
	if notServed != "" {
		return false, nil
	}
	ok, _, err := access.Allowed(ctx, etcdv1beta2.GroupVersion.Group, resource+"/status", namespace, "update")
	if err != nil || ok {
		return false, err
	}
	log.Info("writing status with the object: update on " + resource + "/status is not allowed")
	return true, nil
}

// whyNotServed says why the operator cannot serve resource (of its own API
// group): its CRD is not installed, or the grant does not allow reading it.
// "" means it can. Asked once at start: a CRD installed later needs a restart
// of the operator (--create-crd installs them all before this is asked).
func whyNotServed(ctx context.Context, access *kubecompat.Access, namespace, resource string) (string, error) {
	served, err := access.ServesResource(etcdv1beta2.GroupVersion.String(), resource)
	if err != nil || !served {
		return "the " + resource + " CRD is not installed", err
	}
	ok, verb, err := access.Allowed(ctx, etcdv1beta2.GroupVersion.Group, resource, namespace, "get", "list", "watch")
	if err != nil || ok {
		return "", err
	}
	return verb + " on " + resource + " is not allowed", nil
}

// installCRD registers the EtcdCluster CRD (--create-crd). Without a grant on
// CRDs it says so once and goes on: the CRD may have been installed already
// (this operator's own manifests do; they ask for no grant on CRDs). Where the
// operator may not write etcdclusters/status (coreos' Role) the CRD has no
// status subresource, so that status can be written with the object.
func installCRD(ctx context.Context, cfg *rest.Config, access *kubecompat.Access, g grant, log logger) error {
	ok, verb, err := access.Allowed(ctx, "apiextensions.k8s.io", "customresourcedefinitions", "", "create", "get", "update")
	if err != nil {
		return err
	}
	if !ok {
		log.Info("EtcdCluster CRD not registered: " + verb + " on customresourcedefinitions is not allowed; it must be installed already (or give --create-crd=false)")
		return nil
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	res, err := crdinstall.Install(ctx, c, access.Served, crdinstall.Options{WithoutStatusSubresource: g.statusWithObject})
	switch {
	case apierrors.IsForbidden(err):
		log.Info("EtcdCluster CRD not registered: not allowed (install it from manifests/, or give --create-crd=false)", "error", err.Error())
		return nil
	case err != nil:
		return fmt.Errorf("registering the EtcdCluster CRD: %w", err)
	}
	log.Info("EtcdCluster CRD registered", "apiVersion", res.APIVersion, "created", res.Created, "statusSubresource", !g.statusWithObject)
	return nil
}

// logger is the part of logr.Logger used here.
type logger interface {
	Info(msg string, keysAndValues ...any)
}
