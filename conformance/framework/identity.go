package framework

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RunAgentPrefix starts the marker every run puts in its client's user
// agent: "etcdproof-run/<random>".
const RunAgentPrefix = "etcdproof-run/"

func newRunAgent() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return RunAgentPrefix + hex.EncodeToString(b)
}

// RunUser asks the API server which user the run's kubeconfig
// authenticates as (a SelfSubjectReview, served since Kubernetes 1.28).
// It returns "" where that is not served: the audit log then names the
// user of the requests that carry RunAgent.
func (e *Env) RunUser(ctx context.Context) (string, error) {
	r, err := e.Kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return r.Status.UserInfo.Username, nil
}
