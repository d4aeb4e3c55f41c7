package profile

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Config is the suite config: every interval, budget and traffic knob the
// specs use. Specs ask for values by name, never hard-code them.
type Config struct {
	// Intervals maps "spec/wait" to [timeout, polling] durations, like
	// cluster-api's e2e config.
	Intervals map[string][]string `json:"intervals"`
	// Budgets are pass/fail limits, e.g. "upgrade/longest-write-gap".
	Budgets map[string]string `json:"budgets"`
	// Timeouts are Ginkgo's node and spec timeouts: one per check (its
	// label), and setup (install), teardown (uninstall) and cluster-cleanup
	// (deleting a check's cluster and namespace).
	Timeouts map[string]string `json:"timeouts"`
	Sizes    Sizes             `json:"sizes"`
	Traffic  TrafficConfig     `json:"traffic"`
	// OperatorCrash is when the operator-crash check kills the operator.
	OperatorCrash OperatorCrash `json:"operatorCrash"`
	// Space is how the space check fills a cluster.
	Space Space `json:"space"`
	// LinearizabilityTimeout bounds porcupine; running out is a failure.
	LinearizabilityTimeout string `json:"linearizabilityTimeout"`
	// ObjectStoreImage runs the S3-compatible store the backup-restore
	// check starts in its namespace (scripts/lib/versions.sh SEAWEEDFS_IMAGE).
	ObjectStoreImage string `json:"objectStoreImage"`
}

// Space is the space check's backend quota and the size of the values it
// fills it with.
type Space struct {
	QuotaBytes int64 `json:"quotaBytes"`
	ValueBytes int   `json:"valueBytes"`
}

// Sizes are cluster sizes per check.
type Sizes struct {
	Create    int `json:"create"`
	ScaleFrom int `json:"scaleFrom"`
	ScaleTo   int `json:"scaleTo"`
	Replace   int `json:"replace"`
	// Insights is the size of the cluster one member of which the
	// insights check deletes, to watch the operator report its replacement.
	Insights  int `json:"insights"`
	Kill      int `json:"kill"`
	Partition int `json:"partition"`
	Space     int `json:"space"`
	// QuorumLoss is the size of the cluster the quorum-loss check deletes
	// a majority of (size/2+1 member pods).
	QuorumLoss int `json:"quorumLoss"`
	// NodeLoss is the size of the cluster the node-loss check stops one
	// member's node of; it needs as many worker nodes, one member on each.
	NodeLoss int `json:"nodeLoss"`
	// Drain is the size of the cluster whose members' nodes are drained
	// one after another.
	Drain int `json:"drain"`
	// OperatorCrash is the size the operator-crash check scales from and
	// back to; it scales up by two members in between.
	OperatorCrash int `json:"operatorCrash"`
	// OperatorUpgrade is the size of the cluster that runs while the
	// operator is replaced; it scales up by one member and back after.
	OperatorUpgrade int `json:"operatorUpgrade"`
	// BackupRestore is the size of the cluster backed up, then restored.
	BackupRestore int `json:"backupRestore"`
	Upgrade       int `json:"upgrade"`
}

// OperatorCrash is the operator-crash check's kill schedule, per step.
type OperatorCrash struct {
	// KillsPerStep is how many times the operator is killed in each step.
	KillsPerStep int `json:"killsPerStep"`
	// FirstKillWithin: the first kill comes at a random point this soon
	// after the step's change to the cluster spec.
	FirstKillWithin string `json:"firstKillWithin"`
	// MaxPause: each next kill comes at a random point this long at most
	// after the new operator pod is ready.
	MaxPause string `json:"maxPause"`
}

// Schedule returns the durations of the kill schedule; Validate has
// checked them.
func (o OperatorCrash) Schedule() (kills int, firstWithin, maxPause time.Duration) {
	firstWithin, _ = time.ParseDuration(o.FirstKillWithin)
	maxPause, _ = time.ParseDuration(o.MaxPause)
	return o.KillsPerStep, firstWithin, maxPause
}

// LoadConfig reads and validates the suite config.
func LoadConfig(path string) (*Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read suite config: %w", err)
	}
	c := &Config{}
	if err := yaml.UnmarshalStrict(raw, c); err != nil {
		return nil, fmt.Errorf("suite config %s: %w", path, err)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("suite config %s is invalid:\n%w", path, err)
	}
	return c, nil
}

// Validate checks every duration parses and every size makes sense.
func (c *Config) Validate() error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(c.Intervals)) {
		iv := c.Intervals[name]
		if len(iv) != 2 {
			errs = append(errs, fmt.Errorf("  intervals.%s: want [timeout, polling], got %d values", name, len(iv)))
			continue
		}
		for _, d := range iv {
			if _, err := parsePositive(d); err != nil {
				errs = append(errs, fmt.Errorf("  intervals.%s: %w", name, err))
			}
		}
	}
	for _, name := range append(slices.Clone(CheckLabels), TimeoutSetup, TimeoutTeardown, TimeoutClusterCleanup) {
		if _, ok := c.Timeouts[name]; !ok {
			errs = append(errs, fmt.Errorf("  timeouts.%s: missing", name))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Timeouts)) {
		if _, err := parsePositive(c.Timeouts[name]); err != nil {
			errs = append(errs, fmt.Errorf("  timeouts.%s: %w", name, err))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Budgets)) {
		if _, err := parsePositive(c.Budgets[name]); err != nil {
			errs = append(errs, fmt.Errorf("  budgets.%s: %w", name, err))
		}
	}
	for field, v := range map[string]string{"operatorCrash.firstKillWithin": c.OperatorCrash.FirstKillWithin, "operatorCrash.maxPause": c.OperatorCrash.MaxPause} {
		if _, err := parsePositive(v); err != nil {
			errs = append(errs, fmt.Errorf("  %s: %w", field, err))
		}
	}
	if c.Space.QuotaBytes < 1<<20 || c.Space.ValueBytes < 1 || int64(c.Space.ValueBytes) > c.Space.QuotaBytes/4 {
		errs = append(errs, fmt.Errorf("  space: quotaBytes must be at least 1 MiB and valueBytes between 1 and a quarter of it, got %d and %d", c.Space.QuotaBytes, c.Space.ValueBytes))
	}
	if c.ObjectStoreImage == "" {
		errs = append(errs, errors.New("  objectStoreImage: required (the backup-restore check's S3 store)"))
	}
	if _, err := parsePositive(c.LinearizabilityTimeout); err != nil {
		errs = append(errs, fmt.Errorf("  linearizabilityTimeout: %w", err))
	}
	errs = append(errs, c.Traffic.validate()...)
	for field, v := range map[string]int{
		"sizes.create": c.Sizes.Create, "sizes.scaleFrom": c.Sizes.ScaleFrom, "sizes.scaleTo": c.Sizes.ScaleTo,
		"sizes.replace": c.Sizes.Replace, "sizes.insights": c.Sizes.Insights, "sizes.kill": c.Sizes.Kill, "sizes.partition": c.Sizes.Partition, "sizes.space": c.Sizes.Space, "sizes.quorumLoss": c.Sizes.QuorumLoss, "sizes.nodeLoss": c.Sizes.NodeLoss, "sizes.drain": c.Sizes.Drain, "sizes.operatorCrash": c.Sizes.OperatorCrash,
		"sizes.operatorUpgrade": c.Sizes.OperatorUpgrade, "sizes.backupRestore": c.Sizes.BackupRestore,
		"operatorCrash.killsPerStep": c.OperatorCrash.KillsPerStep, "sizes.upgrade": c.Sizes.Upgrade,
		"traffic.clients": c.Traffic.Clients, "traffic.keys": c.Traffic.Keys, "traffic.ratePerSecond": c.Traffic.RatePerSecond,
	} {
		if v < 1 {
			errs = append(errs, fmt.Errorf("  %s: must be at least 1, got %d", field, v))
		}
	}
	if c.Sizes.Replace > 0 && c.Sizes.Replace < 3 {
		errs = append(errs, fmt.Errorf("  sizes.replace: must be at least 3 to keep quorum while a member is replaced, got %d", c.Sizes.Replace))
	}
	if c.Sizes.Insights > 0 && c.Sizes.Insights < 3 {
		errs = append(errs, fmt.Errorf("  sizes.insights: must be at least 3 to keep quorum while a member is replaced, got %d", c.Sizes.Insights))
	}
	if c.Sizes.Kill > 0 && c.Sizes.Kill < 3 {
		errs = append(errs, fmt.Errorf("  sizes.kill: must be at least 3 to keep quorum while a member is killed, got %d", c.Sizes.Kill))
	}
	if c.Sizes.QuorumLoss > 0 && c.Sizes.QuorumLoss < 3 {
		errs = append(errs, fmt.Errorf("  sizes.quorumLoss: must be at least 3, so that a majority lost still leaves a member, got %d", c.Sizes.QuorumLoss))
	}
	if c.Sizes.Drain > 0 && c.Sizes.Drain < 3 {
		errs = append(errs, fmt.Errorf("  sizes.drain: must be at least 3 to keep quorum while a member is evicted, got %d", c.Sizes.Drain))
	}
	if c.Sizes.NodeLoss > 0 && c.Sizes.NodeLoss < 3 {
		errs = append(errs, fmt.Errorf("  sizes.nodeLoss: must be at least 3 to keep quorum while a node is lost, got %d", c.Sizes.NodeLoss))
	}
	if c.Sizes.ScaleTo <= c.Sizes.ScaleFrom {
		errs = append(errs, fmt.Errorf("  sizes.scaleTo: must exceed sizes.scaleFrom (%d), got %d", c.Sizes.ScaleFrom, c.Sizes.ScaleTo))
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return errors.Join(errs...)
}

// GetIntervals returns Eventually arguments (timeout, polling) for
// "spec/wait"; a missing name falls back to "default/<wait>".
func (c *Config) GetIntervals(spec, wait string) []any {
	iv, ok := c.Intervals[spec+"/"+wait]
	if !ok {
		iv, ok = c.Intervals["default/"+wait]
	}
	if !ok {
		panic(fmt.Sprintf("suite config has no intervals %q or %q", spec+"/"+wait, "default/"+wait))
	}
	timeout, _ := time.ParseDuration(iv[0])
	poll, _ := time.ParseDuration(iv[1])
	return []any{timeout, poll}
}

// Timeout returns the first element of GetIntervals as a duration.
func (c *Config) Timeout(spec, wait string) time.Duration {
	return c.GetIntervals(spec, wait)[0].(time.Duration)
}

// Polling returns the second element of GetIntervals as a duration.
func (c *Config) Polling(spec, wait string) time.Duration {
	return c.GetIntervals(spec, wait)[1].(time.Duration)
}

// The timeouts besides the checks' own (see Config.Timeouts).
const (
	TimeoutSetup          = "setup"
	TimeoutTeardown       = "teardown"
	TimeoutClusterCleanup = "cluster-cleanup"
)

// SpecTimeout returns a Ginkgo timeout by name (a check's label, or one of
// the Timeout* names); Validate made sure each is there.
func (c *Config) SpecTimeout(name string) time.Duration {
	d, err := parsePositive(c.Timeouts[name])
	if err != nil {
		panic(fmt.Sprintf("suite config: timeouts.%s: %v", name, err))
	}
	return d
}

// Budget returns a named budget; a missing name is a programming error
// in the specs, so it panics with the name.
func (c *Config) Budget(name string) time.Duration {
	v, ok := c.Budgets[name]
	if !ok {
		panic(fmt.Sprintf("suite config has no budget %q", name))
	}
	d, _ := time.ParseDuration(v)
	return d
}

// LinTimeout is the porcupine time limit.
func (c *Config) LinTimeout() time.Duration {
	d, _ := time.ParseDuration(c.LinearizabilityTimeout)
	return d
}

// RequestTimeout is the per-request client timeout.
func (c *Config) RequestTimeout() time.Duration {
	d, _ := time.ParseDuration(c.Traffic.RequestTimeout)
	return d
}

func parsePositive(s string) (time.Duration, error) {
	if strings.TrimSpace(s) == "" {
		return 0, errors.New("missing duration")
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration like 30s or 2m", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q must be positive", s)
	}
	return d, nil
}
