// Package apiservertest starts a real kube-apiserver (envtest, from
// KUBEBUILDER_ASSETS) for integration tests and writes a kubeconfig for it,
// as the suite's CLI and kubectl consume one.
package apiservertest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Start runs kube-apiserver and etcd until the test ends and returns the
// path of an admin kubeconfig and the assets folder (it also holds kubectl).
// The test is skipped when KUBEBUILDER_ASSETS is not set.
func Start(t *testing.T) (kubeconfig, assets string) {
	t.Helper()
	assets = os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		t.Skip("KUBEBUILDER_ASSETS is not set (make test sets it)")
	}
	// Tests that start API servers run side by side (internal/testparallel):
	// a minute for one to come up on a busy machine, not envtest's 20 s.
	te := &envtest.Environment{ControlPlaneStartTimeout: time.Minute}
	cfg, err := te.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = te.Stop() })

	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	kc.CurrentContext = "envtest"
	kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, kubeconfig); err != nil {
		t.Fatal(err)
	}
	return kubeconfig, assets
}
