package framework

import (
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	. "github.com/onsi/ginkgo/v2" //nolint:revive // GinkgoWriter, as in the rest of the framework
)

// Operator Lifecycle Manager v0's objects the suite acts on.
var (
	installPlans = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "installplans"}
	csvs         = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "clusterserviceversions"}
)

// approveInstallPlanTimeout bounds an approval step: OLM resolving the
// Subscription, unpacking the bundle, then the new operator becoming ready.
const approveInstallPlanTimeout = 10 * time.Minute

// approveInstallPlan is the approveInstallPlan step: a Subscription with
// installPlanApproval Manual stops at an InstallPlan until someone approves
// it, as a cluster admin does before an operator upgrade. It waits for the
// InstallPlan of namespace ns that installs csv, approves it, and waits until
// OLM reports that ClusterServiceVersion Succeeded: the operator it installs
// is running. A CSV that fails says why.
func (e *Env) approveInstallPlan(ctx context.Context, ns, csv string, timeout time.Duration) error {
	defer startProgress(GinkgoWriter, progressEvery, fmt.Sprintf("OLM to install %s/%s", ns, csv), timeout)()
	// last is how far OLM got; lastErr the last API error, retried.
	last := "no answer from the API server yet"
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		// API errors are retried until the timeout, which reports the last.
		plan, err := e.installPlanFor(ctx, ns, csv)
		switch {
		case err != nil:
			lastErr = err
			return false, nil
		case plan == nil:
			last = fmt.Sprintf("no InstallPlan in %s installs %s yet", ns, csv)
			return false, nil
		}
		if approved, _, _ := unstructured.NestedBool(plan.Object, "spec", "approved"); !approved {
			patch := []byte(`{"spec":{"approved":true}}`)
			if _, err := e.Dynamic.Resource(installPlans).Namespace(ns).Patch(ctx, plan.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				lastErr = fmt.Errorf("approving InstallPlan %s: %w", plan.GetName(), err)
				return false, nil
			}
			fmt.Fprintf(GinkgoWriter, "approved InstallPlan %s/%s (%s)\n", ns, plan.GetName(), csv)
		}
		obj, err := e.Dynamic.Resource(csvs).Namespace(ns).Get(ctx, csv, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			last = fmt.Sprintf("InstallPlan %s approved; ClusterServiceVersion %s not created yet", plan.GetName(), csv)
			return false, nil
		case err != nil:
			lastErr = err
			return false, nil
		}
		phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
		message, _, _ := unstructured.NestedString(obj.Object, "status", "message")
		last = fmt.Sprintf("ClusterServiceVersion %s is %q: %s", csv, phase, message)
		switch phase {
		case "Succeeded":
			return true, nil
		case "Failed":
			return false, fmt.Errorf("OLM could not install %s/%s: %s", ns, csv, message)
		}
		return false, nil
	})
	if wait.Interrupted(err) && ctx.Err() == nil {
		if lastErr != nil {
			last += fmt.Sprintf(" (last API error: %v)", lastErr)
		}
		return fmt.Errorf("OLM did not install %s/%s within %s: %s", ns, csv, timeout, last)
	}
	return err
}

// installPlanFor is the InstallPlan of ns whose CSVs include csv, nil if none.
func (e *Env) installPlanFor(ctx context.Context, ns, csv string) (*unstructured.Unstructured, error) {
	list, err := e.Dynamic.Resource(installPlans).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing InstallPlans in %s: %w", ns, err)
	}
	for i := range list.Items {
		names, _, _ := unstructured.NestedStringSlice(list.Items[i].Object, "spec", "clusterServiceVersionNames")
		if slices.Contains(names, csv) {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}
