package main

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

const (
	// operatorContainer is the container of manifests/manager/deployment.yaml
	// that runs the operator.
	operatorContainer = "etcd-operator"
	// watchNamespaceEnv carries the namespaces OLM chose for the operator to
	// watch (operator/cmd/etcd-operator reads it).
	watchNamespaceEnv = "WATCH_NAMESPACE"
	// targetNamespacesField is where OLM writes the OperatorGroup's target
	// namespaces on the pod template: one namespace in OwnNamespace and
	// SingleNamespace mode, a comma-separated list in MultiNamespace, ""
	// in AllNamespaces.
	targetNamespacesField = "metadata.annotations['olm.targetNamespaces']"
)

// olmDeployment is the install's Deployment as OLM should run it. Under OLM
// the namespaces to watch are the OperatorGroup's targets, which the
// operator reads from $WATCH_NAMESPACE, OLM's convention: one namespace, or
// "" for all (see installModes).
//
// POD_NAMESPACE stays the pod's own namespace: leader election keeps its
// Lease there, where OLM grants it.
func olmDeployment(d appsv1.Deployment, image string) (appsv1.Deployment, error) {
	d = *d.DeepCopy()
	d.Namespace = ""
	spec := &d.Spec.Template.Spec
	i := slices.IndexFunc(spec.Containers, func(c corev1.Container) bool { return c.Name == operatorContainer })
	if i < 0 {
		return d, fmt.Errorf("deployment %s has no container %q", d.Name, operatorContainer)
	}
	c := &spec.Containers[i]
	for _, a := range c.Args {
		if a == "--cluster-wide" || strings.HasPrefix(a, "--namespace") || strings.HasPrefix(a, "--create-crd") {
			return d, fmt.Errorf("container %s already sets %s; the bundle sets the watched namespace and CRD handling itself", c.Name, a)
		}
	}
	if slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == watchNamespaceEnv }) {
		return d, fmt.Errorf("container %s already sets %s", c.Name, watchNamespaceEnv)
	}
	c.Image = image
	c.Env = append(c.Env, corev1.EnvVar{
		Name:      watchNamespaceEnv,
		ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: targetNamespacesField}},
	})
	c.Args = append(c.Args,
		// OLM installs and upgrades the CRDs from the bundle; the operator
		// must not rewrite them (and is granted nothing on CRDs anyway).
		"--create-crd=false",
	)
	return d, nil
}

// operatorImage is the image the operator container of d runs.
func operatorImage(d appsv1.Deployment) string {
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == operatorContainer {
			return c.Image
		}
	}
	return ""
}
