package controller_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/etcdproof/etcdproof/operator/internal/desired"
	"github.com/etcdproof/etcdproof/operator/internal/seed"
)

// etcdKubelet plays the kubelet for every member pod of one namespace with
// real etcd: each pod the operator creates runs an embedded etcd member
// configured from the pod's own command line (name, initial cluster and
// state, token, advertised URLs, quota and auto-compaction) and its ETCD_*
// environment variables (for flags the command line does not set, as etcd
// reads them), listening on its own loopback "pod IP" and
// reachable under its member host name (memberDNS). Its data lives in the
// pod's volume: a claim keeps it across pods, an emptyDir dies with the pod.
// A member that stops by itself (removed from membership, say) is restarted
// in place after a second, as restartPolicy Always does, and shows
// CrashLoopBackOff meanwhile. A deleted pod keeps a finalizer until its
// member has stopped, as a graceful deletion does.
//
// Unlike fakeNetwork/startMembers, members the operator adds later start
// too, so a test can watch the operator take a cluster through any sequence
// of membership changes and judge the outcome on etcd's own membership.
type etcdKubelet struct {
	t   *testing.T
	ns  string
	dns *memberDNS

	mu        sync.Mutex
	processes map[types.UID]*memberProcess // by pod UID
	volumes   map[types.UID]string         // claim UID → data dir
	backups   map[types.UID]bool           // backup pods started (runBackupPod)
	crashing  map[string]bool              // images whose etcd exits at once (crashOn)
}

// crashOn makes every pod started from now on whose etcd container runs
// image crash-loop: its etcd exits as soon as it starts, as a broken
// release's would, and the pod shows CrashLoopBackOff.
func (k *etcdKubelet) crashOn(image string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.crashing == nil {
		k.crashing = map[string]bool{}
	}
	k.crashing[image] = true
}

// memberProcess is one pod's etcd container.
type memberProcess struct {
	pod  string
	ip   net.IP
	stop chan struct{}
	done chan struct{}

	// seed, when the pod has the seed init container, copies a survivor's
	// data into the member's data dir before etcd starts (see runSeed).
	seed *seed.Config
	// crashes: etcd exits as soon as it starts (etcdKubelet.crashOn).
	crashes bool

	mu       sync.Mutex
	etcd     *embed.Etcd
	ready    bool
	started  time.Time
	waiting  string // container waiting reason while etcd does not run
	restarts int32
}

// podIPs are the addresses handed out in this process.
var podIPs = struct {
	sync.Mutex
	used map[string]bool
}{used: map[string]bool{}}

// nextPodIP hands out a loopback address in 127.0.1.0-127.0.255.255 (left
// to per-pod addresses by internal/loopback) that this process has not
// handed out before and on whose ports 2379 and 2380 nothing listens: each
// member listens on the real ports of its own address. Drawn at random, so
// that two test processes beside each other (make test and a developer's
// go test) do not start members on one address and join each other.
func nextPodIP() net.IP {
	podIPs.Lock()
	defer podIPs.Unlock()
	for range 1000 {
		ip := net.IPv4(127, 0, byte(1+rand.IntN(255)), byte(1+rand.IntN(254))).To4()
		if podIPs.used[ip.String()] || !portsFree(ip, 2379, 2380) {
			continue
		}
		podIPs.used[ip.String()] = true
		return ip
	}
	panic("no free loopback address for a member pod in 1000 draws")
}

// portsFree says whether nothing listens on ip's ports.
func portsFree(ip net.IP, ports ...int) bool {
	for _, port := range ports {
		l, err := net.Listen("tcp", net.JoinHostPort(ip.String(), strconv.Itoa(port)))
		if err != nil {
			return false
		}
		_ = l.Close()
	}
	return true
}

// runEtcdKubelet starts the kubelet for namespace ns until the test ends.
func runEtcdKubelet(t *testing.T, ns string) *etcdKubelet {
	t.Helper()
	k := &etcdKubelet{t: t, ns: ns, dns: useMemberDNS(t),
		processes: map[types.UID]*memberProcess{}, volumes: map[types.UID]string{}}
	// The members' data dirs are t.TempDir()s, whose removal the first call
	// registers: registered before the halt below, it runs after it (cleanups
	// run last first). Removed under a running member, etcd's WAL purge finds
	// no dir and exits the whole test binary (log.Fatal).
	_ = t.TempDir()
	runBudgetKeeper(t, ns)
	t.Cleanup(func() { // after the loop below has stopped
		k.mu.Lock()
		defer k.mu.Unlock()
		for _, p := range k.processes {
			p.halt()
		}
	})
	everyPodUntilTestEnds(t, ns, k.sync)
	return k
}

func (k *etcdKubelet) sync(ctx context.Context, pod *corev1.Pod) {
	if pod.DeletionTimestamp != nil {
		k.terminate(ctx, pod)
		return
	}
	if !slices.Contains(pod.Finalizers, kubeletFinalizer) {
		before := pod.DeepCopy()
		pod.Finalizers = append(pod.Finalizers, kubeletFinalizer)
		_ = k8s.Patch(ctx, pod, client.MergeFrom(before))
		return
	}
	if pod.Labels[desired.LabelBackup] != "" {
		k.runBackupPod(ctx, pod)
		return
	}
	if pod.Labels[desired.LabelRestoreVerify] != "" {
		k.runVerifyPod(ctx, pod)
		return
	}
	k.mu.Lock()
	proc, ok := k.processes[pod.UID]
	if !ok {
		cfg, err := k.memberConfig(ctx, pod)
		if err != nil {
			k.mu.Unlock()
			k.t.Logf("kubelet: pod %s: %v", pod.Name, err)
			return
		}
		proc = &memberProcess{pod: pod.Name, ip: net.ParseIP(cfg.ListenPeerUrls[0].Hostname()),
			stop: make(chan struct{}), done: make(chan struct{}), waiting: "ContainerCreating",
			crashes: k.crashing[etcdImage(pod)]}
		if proc.seed, err = seedConfig(pod, cfg.Dir); err == nil {
			err = k.mountBackup(ctx, pod, proc.seed)
		}
		if err != nil {
			k.mu.Unlock()
			k.t.Logf("kubelet: pod %s: %v", pod.Name, err)
			return
		}
		k.processes[pod.UID] = proc
		k.dns.set(desired.MemberHost(pod.Name, pod.Labels[desired.LabelCluster], pod.Namespace), proc.ip)
		go proc.run(cfg)
	}
	k.mu.Unlock()
	want := pod.DeepCopy()
	proc.reportStatus(&want.Status)
	if !equality.Semantic.DeepEqual(want.Status, pod.Status) {
		_ = k8s.Status().Update(ctx, want)
	}
}

// etcdImage is the image of the pod's etcd container.
func etcdImage(pod *corev1.Pod) string {
	for _, ctr := range pod.Spec.Containers {
		if ctr.Name == desired.ContainerName {
			return ctr.Image
		}
	}
	return ""
}

// terminate stops the pod's member, then lets the deletion finish.
func (k *etcdKubelet) terminate(ctx context.Context, pod *corev1.Pod) {
	k.mu.Lock()
	proc := k.processes[pod.UID]
	k.mu.Unlock()
	if proc != nil {
		proc.halt()
	}
	if slices.Contains(pod.Finalizers, kubeletFinalizer) {
		before := pod.DeepCopy()
		pod.Finalizers = slices.DeleteFunc(pod.Finalizers, func(f string) bool { return f == kubeletFinalizer })
		_ = k8s.Patch(ctx, pod, client.MergeFrom(before))
	}
}

// memberConfig reads the etcd member a pod runs from its command line and
// the volumes its etcd container mounts (a Secret's data is written to a
// directory standing in for its mount path, as the kubelet does).
func (k *etcdKubelet) memberConfig(ctx context.Context, pod *corev1.Pod) (*embed.Config, error) {
	flags := map[string]string{}
	var etcd corev1.Container
	for _, ctr := range pod.Spec.Containers {
		if ctr.Name != desired.ContainerName {
			continue
		}
		etcd = ctr
		for _, arg := range ctr.Command {
			if name, value, ok := strings.Cut(strings.TrimPrefix(arg, "--"), "="); ok {
				flags[name] = value
			}
		}
	}
	// As etcd does: a variable ETCD_X sets --x unless the command line does.
	for _, e := range etcd.Env {
		if name, ok := strings.CutPrefix(e.Name, "ETCD_"); ok && e.ValueFrom == nil {
			flag := strings.ReplaceAll(strings.ToLower(name), "_", "-")
			if _, set := flags[flag]; !set {
				flags[flag] = e.Value
			}
		}
	}
	dir, err := k.dataDir(ctx, pod)
	if err != nil {
		return nil, err
	}
	mounts, err := k.mountDirs(ctx, pod, etcd)
	if err != nil {
		return nil, err // a Secret not there yet: the pod waits, as ContainerCreating does
	}
	ip := nextPodIP()
	cfg := embed.NewConfig()
	cfg.Name = flags["name"]
	cfg.Dir = dir
	cfg.InitialCluster = flags["initial-cluster"]
	cfg.ClusterState = flags["initial-cluster-state"]
	if token := flags["initial-cluster-token"]; token != "" {
		cfg.InitialClusterToken = token
	}
	for flag, listen := range map[string]*[]url.URL{"listen-peer-urls": &cfg.ListenPeerUrls, "listen-client-urls": &cfg.ListenClientUrls} {
		u, err := url.Parse(flags[flag])
		if err != nil || u.Port() == "" {
			return nil, fmt.Errorf("--%s=%q: %v", flag, flags[flag], err)
		}
		*listen = []url.URL{{Scheme: u.Scheme, Host: net.JoinHostPort(ip.String(), u.Port())}}
	}
	if cfg.PeerTLSInfo, err = tlsInfo(flags, mounts, "peer-"); err != nil {
		return nil, err
	}
	if cfg.ClientTLSInfo, err = tlsInfo(flags, mounts, ""); err != nil {
		return nil, err
	}
	for flag, urls := range map[string]*[]url.URL{
		"initial-advertise-peer-urls": &cfg.AdvertisePeerUrls, "advertise-client-urls": &cfg.AdvertiseClientUrls,
	} {
		u, err := url.Parse(flags[flag])
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("--%s=%q: %v", flag, flags[flag], err)
		}
		*urls = []url.URL{*u}
	}
	if quota := flags["quota-backend-bytes"]; quota != "" {
		if cfg.QuotaBackendBytes, err = strconv.ParseInt(quota, 10, 64); err != nil {
			return nil, fmt.Errorf("--quota-backend-bytes=%q: %v", quota, err)
		}
	}
	if mode := flags["auto-compaction-mode"]; mode != "" {
		cfg.AutoCompactionMode = mode
	}
	if retention := flags["auto-compaction-retention"]; retention != "" {
		cfg.AutoCompactionRetention = retention
	}
	cfg.ListenMetricsUrls = nil
	// Errors only: etcd logs a fatal error before it ends the test process.
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.New(zapcore.NewCore(
		zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig()), zapcore.Lock(os.Stderr), zap.ErrorLevel),
	).With(zap.String("member", cfg.Name)))
	return cfg, nil
}

// tlsInfo reads etcd's certificate flags with prefix ("peer-" or "") and
// moves their files into the directories standing in for the mounts.
func tlsInfo(flags, mounts map[string]string, prefix string) (transport.TLSInfo, error) {
	info := transport.TLSInfo{ClientCertAuth: flags[prefix+"client-cert-auth"] == "true"}
	for flag, file := range map[string]*string{
		"cert-file": &info.CertFile, "key-file": &info.KeyFile, "trusted-ca-file": &info.TrustedCAFile,
	} {
		path := flags[prefix+flag]
		if path == "" {
			continue
		}
		for mountPath, dir := range mounts {
			if strings.HasPrefix(path, mountPath+"/") {
				*file = filepath.Join(dir, strings.TrimPrefix(path, mountPath+"/"))
			}
		}
		if *file == "" {
			return info, fmt.Errorf("--%s%s=%s: nothing is mounted there", prefix, flag, path)
		}
	}
	return info, nil
}

// dataDir is the member's data directory: the claim's (kept for the claim's
// life, whatever pod mounts it), or a fresh one for an emptyDir.
func (k *etcdKubelet) dataDir(ctx context.Context, pod *corev1.Pod) (string, error) {
	for _, v := range pod.Spec.Volumes {
		if v.Name == desired.DataVolume && v.PersistentVolumeClaim != nil {
			return k.claimDir(ctx, pod.Namespace, v.PersistentVolumeClaim.ClaimName)
		}
	}
	return k.t.TempDir(), nil
}

// claimDir is the directory that holds claim's volume, made on first use.
func (k *etcdKubelet) claimDir(ctx context.Context, namespace, claimName string) (string, error) {
	var claim corev1.PersistentVolumeClaim
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: claimName}, &claim); err != nil {
		return "", fmt.Errorf("volume %s: %w", claimName, err)
	}
	if dir, ok := k.volumes[claim.UID]; ok {
		return dir, nil
	}
	k.volumes[claim.UID] = k.t.TempDir()
	return k.volumes[claim.UID], nil
}

// mountBackup points a seed that restores a backup at the test directories
// standing in for the seed container's mounts: the claim holding a backup
// file, or the awsSecret's files for a backup in S3; and a seed that copies
// a TLS survivor's data at the operatorSecret's files.
func (k *etcdKubelet) mountBackup(ctx context.Context, pod *corev1.Pod, cfg *seed.Config) error {
	if cfg == nil || (cfg.FromFile == "" && cfg.FromS3Path == "" && cfg.EtcdTLSDir == "") {
		return nil
	}
	paths := []*string{&cfg.FromFile, &cfg.EtcdTLSDir}
	if cfg.FromS3Path != "" {
		paths = append(paths, &cfg.AWSDir)
	}
	for _, ctr := range pod.Spec.InitContainers {
		if ctr.Name != desired.SeedContainerName {
			continue
		}
		mounts, err := k.mountDirs(ctx, pod, ctr)
		if err != nil {
			return err
		}
		for _, p := range paths {
			if *p == "" {
				continue
			}
			moved := false
			for path, dir := range mounts {
				if *p == path || strings.HasPrefix(*p, path+"/") {
					*p, moved = dir+strings.TrimPrefix(*p, path), true
				}
			}
			if !moved {
				return fmt.Errorf("the seed reads %s, but nothing is mounted there", *p)
			}
		}
	}
	return nil
}

// run is the container: start etcd, and start it again a second after it
// stops by itself, until the pod goes. A crashing process's etcd exits
// before it serves, each time.
func (p *memberProcess) run(cfg *embed.Config) {
	defer close(p.done)
	if !p.runSeed() {
		return
	}
	for {
		if !p.crashes {
			p.runEtcd(cfg)
		}
		select {
		case <-p.stop:
			return
		default:
		}
		p.set(func() { p.waiting = "CrashLoopBackOff"; p.restarts++ })
		select {
		case <-p.stop:
			return
		case <-time.After(time.Second):
		}
	}
}

// runEtcd runs etcd once, until it stops by itself or the pod goes.
func (p *memberProcess) runEtcd(cfg *embed.Config) {
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kubelet: pod %s: etcd did not start: %v\n", p.pod, err)
		return
	}
	p.set(func() { p.etcd, p.waiting, p.started = e, "", time.Now() })
	select {
	case <-e.Server.ReadyNotify():
		p.set(func() { p.ready = true })
	case <-e.Server.StopNotify():
	case <-p.stop:
	}
	select {
	case <-e.Server.StopNotify():
	case <-p.stop:
	}
	e.Close()
	p.set(func() { p.etcd, p.ready = nil, false })
}

func (p *memberProcess) set(change func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	change()
}

// halt stops the container (SIGTERM, in a real pod) and waits for it.
func (p *memberProcess) halt() {
	p.mu.Lock()
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	p.mu.Unlock()
	<-p.done
}

// reportStatus writes what the kubelet would report for the pod.
func (p *memberProcess) reportStatus(st *corev1.PodStatus) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st.Phase = corev1.PodRunning
	st.PodIP = p.ip.String()
	ctr := corev1.ContainerStatus{Name: desired.ContainerName, Ready: p.ready, RestartCount: p.restarts}
	if p.etcd != nil {
		ctr.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(p.started.Truncate(time.Second))}
		ctr.Started = ptr.To(true)
	} else {
		ctr.State.Waiting = &corev1.ContainerStateWaiting{Reason: p.waiting}
	}
	if len(st.ContainerStatuses) == 1 {
		ctr.Image, ctr.ImageID = st.ContainerStatuses[0].Image, st.ContainerStatuses[0].ImageID
	}
	st.ContainerStatuses = []corev1.ContainerStatus{ctr}
	ready := corev1.ConditionFalse
	if p.ready {
		ready = corev1.ConditionTrue
	}
	for _, typ := range []corev1.PodConditionType{corev1.PodReady, corev1.ContainersReady} {
		setPodCondition(st, typ, ready)
	}
}

// setPodCondition sets a condition, moving its transition time only when its
// status changes (the clock the operator's not-running deadline reads).
func setPodCondition(st *corev1.PodStatus, typ corev1.PodConditionType, status corev1.ConditionStatus) {
	for i := range st.Conditions {
		if st.Conditions[i].Type == typ {
			if st.Conditions[i].Status != status {
				st.Conditions[i].Status, st.Conditions[i].LastTransitionTime = status, metav1.Now()
			}
			return
		}
	}
	st.Conditions = append(st.Conditions, corev1.PodCondition{Type: typ, Status: status, LastTransitionTime: metav1.Now()})
}

// seedConfig reads the seed init container's command line, as the operator's
// `seed` subcommand does, with the data dir moved to the pod's own; nil when
// the pod has none.
func seedConfig(pod *corev1.Pod, dataDir string) (*seed.Config, error) {
	for _, ctr := range pod.Spec.InitContainers {
		if ctr.Name != desired.SeedContainerName {
			continue
		}
		if len(ctr.Command) < 2 || ctr.Command[1] != "seed" {
			return nil, fmt.Errorf("init container %s runs %v, not the seed subcommand", ctr.Name, ctr.Command)
		}
		cfg, err := seed.ParseFlags(ctr.Command[2:])
		if err != nil {
			return nil, err
		}
		cfg.DataDir = dataDir
		return &cfg, nil
	}
	return nil, nil
}

// runSeed is the init container: the same code as the operator's `seed`
// subcommand, run in-process, again a second after each failure (as the
// kubelet restarts a failed init container), until it succeeds or the pod
// goes. It reports whether etcd may start.
func (p *memberProcess) runSeed() bool {
	if p.seed == nil {
		return true
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-p.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	p.set(func() { p.waiting = "PodInitializing" })
	for {
		err := seed.Run(ctx, zap.NewNop(), *p.seed)
		if err == nil {
			return true
		}
		fmt.Fprintf(os.Stderr, "kubelet: pod %s: seed init container failed: %v\n", p.pod, err)
		p.set(func() { p.waiting = "Init:Error"; p.restarts++ })
		select {
		case <-p.stop:
			return false
		case <-time.After(time.Second):
		}
	}
}
