// Package framework is the suite's only contact with a cluster: clients,
// install/uninstall (the profile's steps), the cluster CR, member pods, ground
// truth probes, in-cluster traffic and artifact dumps. Waits take their
// intervals from the suite config.
package framework

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/template"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/etcdproof/etcdproof/conformance/internal/tlsgen"
	"github.com/etcdproof/etcdproof/conformance/profile"
)

// Options are the cluster-facing settings of a run (from flags).
type Options struct {
	Kubeconfig string
	Context    string
	// Kubectl is the kubectl binary that run steps get as {{.Kubectl}};
	// nothing else uses it (apply and delete steps, and the operator's log
	// in failure artifacts, go through the API).
	Kubectl string
	// AuditLog is the API-server audit log readable from this host. The
	// rbac check and cleanup's attribution read it; without it they are
	// INCOMPLETE, never passed.
	AuditLog string
	// TrafficImage runs `etcdproof traffic` inside the cluster.
	TrafficImage string
	ReportDir    string
	// SkipCleanup leaves namespaces and the operator in place for debugging.
	SkipCleanup bool
}

// Env is everything a spec needs.
type Env struct {
	Opts    Options
	Profile *profile.Profile
	Config  *profile.Config
	REST    *rest.Config
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
	Disc    discovery.DiscoveryInterface
	// ServerVersion is the API server's version, read when the run starts.
	ServerVersion string
	// RunAgent is in the user agent of every request of this run's client,
	// so the audit log tells them from another run's (RunAgentPrefix).
	RunAgent string
	// mapper maps the kinds of rendered objects to resources (restMapping),
	// over a memory-cached copy of Disc.
	mapper *restmapper.DeferredDiscoveryRESTMapper
	// ca signs the certificates of the run's TLS clusters (tlsCA).
	caMu sync.Mutex
	ca   *tlsgen.CA
}

// NewEnv builds clients and checks that the API server answers.
func NewEnv(ctx context.Context, opts Options, p *profile.Profile, c *profile.Config) (*Env, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if opts.Kubeconfig != "" {
		rules.ExplicitPath = opts.Kubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: opts.Context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	// Discovery lists deprecated APIs on purpose; their warnings are noise here.
	cfg.WarningHandler = rest.NoWarnings{}
	runAgent := newRunAgent()
	cfg.UserAgent = rest.DefaultKubernetesUserAgent() + " " + runAgent
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	v, err := kube.Discovery().ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("the API server does not answer (context %q): %w", opts.Context, err)
	}
	fitListsTo(v.GitVersion)
	return &Env{Opts: opts, Profile: p, Config: c, REST: cfg, Kube: kube, Dynamic: dyn, Disc: kube.Discovery(), ServerVersion: v.GitVersion, RunAgent: runAgent,
		mapper: newMapper(kube.Discovery())}, nil
}

// newMapper is a REST mapper that reads discovery once and again after
// each Reset.
func newMapper(disc discovery.DiscoveryInterface) *restmapper.DeferredDiscoveryRESTMapper {
	return restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
}

// RunSteps executes install or uninstall steps of the profile: apply and
// delete steps through the API (applyManifests, deleteManifests: no
// kubectl), run steps as commands. The arguments of every run step are
// rendered first (stepArgs), so a template the profile got wrong stops the
// steps before the first one runs.
func (e *Env) RunSteps(ctx context.Context, steps []profile.Step) error {
	runArgs, err := e.stepArgs(steps)
	if err != nil {
		return err
	}
	ran := 0
	for i, s := range steps {
		if (s.IfServed != "" && !e.Served(s.IfServed)) || (s.UnlessServed != "" && e.Served(s.UnlessServed)) {
			continue
		}
		ran++
		var err error
		switch {
		case s.Apply != "":
			if err = e.applyManifests(ctx, e.Profile.Path(s.Apply)); err != nil {
				err = fmt.Errorf("step %d (apply %s): %w", i+1, e.Profile.Path(s.Apply), err)
			}
		case s.Delete != "":
			if err = e.deleteManifests(ctx, e.Profile.Path(s.Delete)); err != nil {
				err = fmt.Errorf("step %d (delete %s): %w", i+1, e.Profile.Path(s.Delete), err)
			}
		case s.ApproveInstallPlan != "":
			if err = e.approveInstallPlan(ctx, e.Profile.Operator.Namespace, s.ApproveInstallPlan, approveInstallPlanTimeout); err != nil {
				err = fmt.Errorf("step %d (approveInstallPlan %s): %w", i+1, s.ApproveInstallPlan, err)
			}
		default:
			args := runArgs[i]
			cmd := exec.CommandContext(ctx, args[0], args[1:]...)
			cmd.Env = append(os.Environ(), "KUBECONFIG="+e.Opts.Kubeconfig, "KUBE_CONTEXT="+e.Opts.Context)
			if out, runErr := cmd.CombinedOutput(); runErr != nil {
				err = fmt.Errorf("%s: %w\n%s", strings.Join(args, " "), runErr, out)
			}
		}
		if err != nil {
			return err
		}
	}
	if ran == 0 && len(steps) > 0 {
		return fmt.Errorf("no step applies to this cluster (Kubernetes %s): %s", e.ServerVersion, servedConditions(steps))
	}
	return nil
}

// servedConditions says what each step needs of the API server.
func servedConditions(steps []profile.Step) string {
	var needs []string
	for i, s := range steps {
		if s.IfServed != "" {
			needs = append(needs, fmt.Sprintf("step %d needs %s served", i+1, s.IfServed))
		}
		if s.UnlessServed != "" {
			needs = append(needs, fmt.Sprintf("step %d needs %s not served", i+1, s.UnlessServed))
		}
	}
	return strings.Join(needs, "; ")
}

// stepData is what the arguments of a run step (profile.Step.Run) are
// templates over, with text/template like the profile's cluster templates:
// "{{.Kubectl}}", "{{.Namespace}}", "{{.Kubeconfig}}", "{{.Context}}".
type stepData struct {
	// Kubectl is the kubectl binary of the run.
	Kubectl string
	// Namespace is the operator's namespace.
	Namespace string
	// Kubeconfig and Context may be empty: kubectl then uses its defaults.
	Kubeconfig string
	Context    string
}

// stepArgs renders the arguments of the run steps among steps (nil for the
// others). An argument that is not a template over stepData (a field it
// lacks, a syntax error) is an error naming the step and the argument.
func (e *Env) stepArgs(steps []profile.Step) ([][]string, error) {
	data := stepData{Kubectl: e.Opts.Kubectl, Namespace: e.Profile.Operator.Namespace, Kubeconfig: e.Opts.Kubeconfig, Context: e.Opts.Context}
	out := make([][]string, len(steps))
	for i, s := range steps {
		for j, arg := range s.Run {
			text, err := renderStepArg(arg, data)
			if err != nil {
				return nil, fmt.Errorf("step %d (run %s), argument %d %s: %w (run steps know {{.Kubectl}}, {{.Namespace}}, {{.Kubeconfig}}, {{.Context}})",
					i+1, firstLine(s.Run[0]), j+1, quoteFirstLine(arg), err)
			}
			out[i] = append(out[i], text)
		}
	}
	return out, nil
}

func renderStepArg(arg string, data stepData) (string, error) {
	t, err := template.New("argument").Option("missingkey=error").Parse(arg)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return "", err
	}
	return b.String(), nil
}

// quoteFirstLine quotes s, or its first line and "..." when it has more
// (a shell script given to sh -c).
func quoteFirstLine(s string) string {
	if line := firstLine(s); line != s {
		return strconv.Quote(line) + "..."
	}
	return strconv.Quote(s)
}

// serverSideApply: apply steps apply server-side where it is GA (1.22+):
// 1.16's beta fails on v1beta1 CRDs ("cannot convert int64 to float64").
// Older clusters get a create or an update (createOrUpdate).
func (e *Env) serverSideApply() bool {
	v, err := utilversion.ParseGeneric(e.ServerVersion)
	return err != nil || v.AtLeast(utilversion.MajorMinor(1, 22))
}

// Served reports whether the API server serves groupVersion ("v1" is the
// core group). Discovery errors count as not served.
func (e *Env) Served(groupVersion string) bool {
	gv, resource := groupVersion, ""
	if parts := strings.Split(groupVersion, "/"); len(parts) == 3 {
		gv, resource = parts[0]+"/"+parts[1], parts[2]
	}
	list, err := e.Disc.ServerResourcesForGroupVersion(gv)
	if err != nil || resource == "" {
		return err == nil
	}
	return slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == resource })
}

// CreateNamespace creates a namespace labelled as the suite's.
func (e *Env) CreateNamespace(ctx context.Context, prefix string) (string, error) {
	ns, err := e.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-", Labels: suiteLabels()}}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return ns.Name, nil
}
