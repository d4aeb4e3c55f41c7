package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

const (
	// watchNamespaceEnv carries the namespaces OLM chose for the operator to
	// watch (operator/cmd/etcd-operator reads it).
	watchNamespaceEnv = "WATCH_NAMESPACE"
	// targetNamespacesField is where OLM writes the OperatorGroup's target
	// namespaces on the pod template: one namespace in OwnNamespace and
	// SingleNamespace mode, a comma-separated list in MultiNamespace, ""
	// in AllNamespaces.
	targetNamespacesField = "metadata.annotations['olm.targetNamespaces']"
	// relatedImageEnvPrefix marks the variables of the operator container
	// that name an image the operator runs (Operator SDK's convention).
	relatedImageEnvPrefix = "RELATED_IMAGE_"
)

// olmDeployment is the install's Deployment as OLM should run it, with the
// operator's container, named container, running image. Under OLM the
// namespaces to watch are the OperatorGroup's targets, which the operator
// reads from $WATCH_NAMESPACE, OLM's convention: one namespace, or "" for
// all (see installModes). olmArgs are added to the container's arguments.
//
// POD_NAMESPACE stays the pod's own namespace: leader election keeps its
// Lease there, where OLM grants it.
func olmDeployment(d appsv1.Deployment, image, container string, olmArgs []string) (appsv1.Deployment, error) {
	d = *d.DeepCopy()
	d.Namespace = ""
	spec := &d.Spec.Template.Spec
	i := slices.IndexFunc(spec.Containers, func(c corev1.Container) bool { return c.Name == container })
	if i < 0 {
		return d, fmt.Errorf("deployment %s has no container %q", d.Name, container)
	}
	c := &spec.Containers[i]
	for _, a := range c.Args {
		if a == "--cluster-wide" || strings.HasPrefix(a, "--namespace") || slices.ContainsFunc(olmArgs, sameFlag(a)) {
			return d, fmt.Errorf("container %s already sets %s; the bundle sets the watched namespace and %v itself", c.Name, a, olmArgs)
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
	c.Args = append(c.Args, olmArgs...)
	return d, nil
}

// sameFlag tells whether an argument sets the flag that arg sets
// (--create-crd, --create-crd=false).
func sameFlag(arg string) func(string) bool {
	name, _, _ := strings.Cut(arg, "=")
	return func(other string) bool {
		otherName, _, _ := strings.Cut(other, "=")
		return otherName == name
	}
}

// relatedImages are the images a release runs, which a mirror for a
// disconnected cluster must copy: the operator's, under the name of its
// container, and each image its container names in a RELATED_IMAGE_<NAME>
// variable, under <name>.
func relatedImages(d appsv1.Deployment, container string) []v1alpha1.RelatedImage {
	var images []v1alpha1.RelatedImage
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name != container {
			continue
		}
		images = append(images, v1alpha1.RelatedImage{Name: c.Name, Image: c.Image})
		for _, e := range c.Env {
			if name, ok := strings.CutPrefix(e.Name, relatedImageEnvPrefix); ok && e.Value != "" {
				images = append(images, v1alpha1.RelatedImage{Name: strings.ToLower(name), Image: e.Value})
			}
		}
	}
	return images
}
