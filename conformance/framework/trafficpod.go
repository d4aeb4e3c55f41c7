package framework

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/etcdproof/etcdproof/conformance/history"
	"github.com/etcdproof/etcdproof/conformance/traffic"
	"github.com/etcdproof/etcdproof/conformance/validate"
)

const trafficPort = 8080

// trafficPodPrefix begins the name of every traffic pod.
const trafficPodPrefix = "etcdproof-traffic-"

// TrafficPod is `etcdproof traffic` running in the cluster against the
// client Service (with the client Secret's certificate on a TLS cluster);
// the host talks to it through a port-forward.
type TrafficPod struct {
	env       *Env
	Name      string
	Namespace string
	// started is the history's zero on the wall clock, as the pod's
	// status last said (zero from a traffic image that does not say).
	started time.Time
	// electionTimeout is the cluster's, read when traffic started.
	electionTimeout time.Duration
}

// StartTraffic creates the traffic pod for a cluster; onNode, when given,
// is the node it must run on (the node-loss check keeps the clients off the
// node it stops), else the scheduler picks one.
func (c *EtcdCluster) StartTraffic(ctx context.Context, step string, onNode ...string) (*TrafficPod, error) {
	tc := c.env.Config.Traffic
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: trafficPodPrefix + step, Namespace: c.Namespace, Labels: map[string]string{"app.kubernetes.io/name": trafficPodLabel}},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name:            "traffic",
				Image:           c.env.Opts.TrafficImage,
				ImagePullPolicy: corev1.PullNever,
				Args: []string{"traffic",
					"--endpoints", c.ClientEndpoint(),
					"--listen", fmt.Sprintf(":%d", trafficPort),
					"--clients", strconv.Itoa(tc.Clients),
					"--keys", strconv.Itoa(tc.Keys),
					"--rate", strconv.Itoa(tc.RatePerSecond),
					"--request-timeout", tc.RequestTimeout,
					"--retry-backoff", tc.RetryBackoffDuration().String(),
					"--final-read-budget", tc.FinalReadBudgetDuration().String(),
					"--key-prefix", "etcdproof/traffic/" + step + "/",
				},
				Ports: []corev1.ContainerPort{{ContainerPort: trafficPort}},
				// Ready once it serves: the suite port-forwards only then.
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/status", Port: intstr.FromInt32(trafficPort)}},
					PeriodSeconds: 1,
				},
				// Meets the "restricted" Pod Security level, which operator
				// namespaces often enforce.
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false),
					ReadOnlyRootFilesystem:   ptr.To(true),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				RunAsUser:      ptr.To(int64(65532)),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
		},
	}
	if c.tls != nil {
		withClientTLS(pod, c.tls.secrets.Client)
	}
	if len(onNode) > 0 && onNode[0] != "" {
		pod.Spec.NodeSelector = map[string]string{corev1.LabelHostname: onNode[0]}
	}
	if _, err := c.env.Kube.CoreV1().Pods(c.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("create traffic pod: %w", err)
	}
	return &TrafficPod{env: c.env, Name: pod.Name, Namespace: c.Namespace, electionTimeout: c.ElectionTimeout(ctx)}, nil
}

// validateOptions are what one phase's history is held to: the client-error
// policy comes from the suite config, per check.
func (t *TrafficPod) validateOptions(check, phase string, limits TrafficLimits) validate.Options {
	return validate.Options{
		Timeout:           t.env.Config.LinTimeout(),
		MaxWriteGap:       limits.MaxWriteGap,
		ClientErrors:      t.env.Config.Traffic.ClientErrorsFor(check, limits.FaultInjected),
		ElectionTimeout:   t.electionTimeout,
		MaxLeaderChanges:  limits.MembersChanged,
		UndrainedStopsAt:  SinceZero(t.started, limits.UndrainedStopsAt),
		VisualizationPath: t.env.ArtifactPath(check, "linearizability-"+phase+".html"),
	}
}

// Status asks the traffic pod how far it got.
func (t *TrafficPod) Status(ctx context.Context) (traffic.Status, error) {
	var st traffic.Status
	body, err := t.call(ctx, http.MethodGet, "/status", 5*time.Minute)
	if err != nil {
		return st, err
	}
	defer func() { _ = body.Close() }()
	if err := json.NewDecoder(body).Decode(&st); err != nil {
		return st, err
	}
	if !st.StartedAt.IsZero() {
		t.started = st.StartedAt
	}
	return st, nil
}

// stopAttempts bounds the stop requests: a port-forward through the API
// server breaks now and then, and the traffic pod's stop is idempotent
// (a second one returns the same history).
const stopAttempts = 3

// Stop ends traffic and returns the full history, then deletes the pod.
// It waits for the requests in flight, a retry, and the final reads. A
// failed request is made again: the failure is the suite's, not the
// operator's.
func (t *TrafficPod) Stop(ctx context.Context) (history.History, error) {
	var errs []error
	for attempt := 1; attempt <= stopAttempts; attempt++ {
		h, err := t.stopOnce(ctx)
		if err == nil {
			return h, nil
		}
		errs = append(errs, err)
		select {
		case <-ctx.Done():
			return history.History{}, errors.Join(errs...)
		case <-time.After(time.Duration(attempt) * time.Second):
		}
	}
	return history.History{}, fmt.Errorf("stopping traffic, %d attempts: %w", stopAttempts, errors.Join(errs...))
}

func (t *TrafficPod) stopOnce(ctx context.Context) (history.History, error) {
	tc := t.env.Config.Traffic
	wait := 2*t.env.Config.RequestTimeout() + tc.RetryBackoffDuration() + tc.FinalReadBudgetDuration() + time.Minute
	body, err := t.call(ctx, http.MethodPost, "/stop", wait)
	if err != nil {
		return history.History{}, err
	}
	defer func() { _ = body.Close() }()
	h, err := history.Read(body)
	if err != nil {
		return history.History{}, fmt.Errorf("read history from %s: %w", t.Name, err)
	}
	_ = t.env.Kube.CoreV1().Pods(t.Namespace).Delete(ctx, t.Name, metav1.DeleteOptions{})
	return h, nil
}

type readCloser interface {
	Read([]byte) (int, error)
	Close() error
}

func (t *TrafficPod) call(ctx context.Context, method, path string, timeout time.Duration) (readCloser, error) {
	local, stop, err := t.env.Forward(t.Namespace, t.Name, trafficPort)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	req, err := http.NewRequestWithContext(ctx, method, fmt.Sprintf("http://127.0.0.1:%d%s", local, path), nil)
	if err != nil {
		cancel()
		stop()
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		stop()
		return nil, fmt.Errorf("%s %s on %s: %w", method, path, t.Name, err)
	}
	if resp.StatusCode != http.StatusOK {
		_ = resp.Body.Close()
		cancel()
		stop()
		return nil, fmt.Errorf("%s %s on %s: %s", method, path, t.Name, resp.Status)
	}
	return closer{resp.Body, func() { cancel(); stop() }}, nil
}

type closer struct {
	readCloser
	done func()
}

func (c closer) Close() error {
	err := c.readCloser.Close()
	c.done()
	return err
}

// TrafficResult is a stopped and validated traffic phase.
type TrafficResult struct {
	validate.Result
	HistoryFile string
	// Started is the history's zero on the wall clock (zero: unknown).
	Started time.Time
}

// TrafficLimits are what one phase's client history is held to.
type TrafficLimits struct {
	// MaxWriteGap is the longest allowed time without a successful write
	// (0: no limit).
	MaxWriteGap time.Duration
	// FaultInjected says the suite kills members during the phase: requests
	// in flight on a killed member fail whatever the operator does, so they
	// are recorded but do not fail the phase (unless the suite config's
	// traffic.clientErrors says otherwise for the check).
	FaultInjected bool
	// MembersChanged is how many members the operator is asked to
	// restart, replace or remove in the phase: each may be the leader, so
	// the phase may see as many leader changes, and no more (after-retry).
	MembersChanged int
	// Undrained says the phase stops members of a release that fails the
	// requests in flight when it stops (etcd 3.4): the phase watches its
	// member pods' stops (WatchMemberStops) into UndrainedStopsAt, the
	// moments validate.Options.UndrainedStopsAt excuses those failures at.
	Undrained        bool
	UndrainedStopsAt []time.Time
}

// SinceZero puts moments on a history's clock (zero: the history's start
// on the wall clock). With the zero unknown, none: nothing is excused.
func SinceZero(zero time.Time, at []time.Time) []time.Duration {
	if zero.IsZero() {
		return nil
	}
	out := make([]time.Duration, 0, len(at))
	for _, t := range at {
		out = append(out, t.Sub(zero))
	}
	return out
}

// StopAndValidate stops the traffic, saves the history and validates it.
func (t *TrafficPod) StopAndValidate(ctx context.Context, check, phase string, limits TrafficLimits) (TrafficResult, error) {
	h, err := t.Stop(ctx)
	if err != nil {
		return TrafficResult{}, err
	}
	file := t.env.ArtifactPath(check, "history-"+phase+".jsonl")
	if err := history.WriteFile(file, h); err != nil {
		return TrafficResult{}, err
	}
	res := validate.Validate(h, t.validateOptions(check, phase, limits))
	return TrafficResult{Result: res, HistoryFile: file, Started: t.started}, nil
}
