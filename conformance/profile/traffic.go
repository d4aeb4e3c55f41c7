package profile

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/etcdproof/etcdproof/conformance/validate"
)

// TrafficConfig shapes the client load run inside the cluster and how its
// history is judged.
type TrafficConfig struct {
	Clients        int    `json:"clients"`
	Keys           int    `json:"keys"`
	RatePerSecond  int    `json:"ratePerSecond"`
	RequestTimeout string `json:"requestTimeout"`
	// RetryBackoff is the wait before the one retry of a request that
	// failed definitely (default 100ms).
	RetryBackoff string `json:"retryBackoff,omitempty"`
	// FinalReadBudget is how long the final read of each key is retried
	// before the key counts as unverified (default 30s).
	FinalReadBudget string `json:"finalReadBudget,omitempty"`
	// ClientErrors maps a check to what failed requests do to its verdict:
	// none, after-retry or allowed (validate.ClientErrors). A check without
	// an entry uses "default", or allowed if the suite kills members during
	// it, or after-retry.
	ClientErrors map[string]string `json:"clientErrors,omitempty"`
	// UndrainedReleases are etcd minors ("3.4") whose members fail every
	// request in flight when they stop gracefully, instead of finishing
	// them as later releases do. Requests in flight on such a member when
	// the operator restarts it fail whatever the operator does, so upgrade
	// hops from them judge traffic like the suite's own kills (allowed).
	UndrainedReleases []string `json:"undrainedReleases,omitempty"`
}

// Undrained reports whether members of etcdVersion ("3.4.25") fail the
// requests in flight when they stop.
func (t TrafficConfig) Undrained(etcdVersion string) bool {
	for _, minor := range t.UndrainedReleases {
		if etcdVersion == minor || strings.HasPrefix(etcdVersion, minor+".") {
			return true
		}
	}
	return false
}

// RetryBackoffDuration is the wait before retrying a definite failure.
func (t TrafficConfig) RetryBackoffDuration() time.Duration {
	return durationOr(t.RetryBackoff, 100*time.Millisecond)
}

// FinalReadBudgetDuration is how long each key's final read is retried.
func (t TrafficConfig) FinalReadBudgetDuration() time.Duration {
	return durationOr(t.FinalReadBudget, 30*time.Second)
}

// ClientErrorsFor is the client-error policy of a check's traffic;
// faultInjected says the suite itself kills members during it.
func (t TrafficConfig) ClientErrorsFor(check string, faultInjected bool) validate.ClientErrors {
	name, ok := t.ClientErrors[check]
	switch {
	case ok:
	case faultInjected:
		return validate.AllowClientErrors
	default:
		if name, ok = t.ClientErrors["default"]; !ok {
			return validate.NoErrorsAfterRetry
		}
	}
	policy, _ := validate.ParseClientErrors(name)
	return policy
}

func (t TrafficConfig) validate() []error {
	var errs []error
	if _, err := parsePositive(t.RequestTimeout); err != nil {
		errs = append(errs, fmt.Errorf("  traffic.requestTimeout: %w", err))
	}
	for field, v := range map[string]string{"retryBackoff": t.RetryBackoff, "finalReadBudget": t.FinalReadBudget} {
		if v == "" {
			continue
		}
		if _, err := parsePositive(v); err != nil {
			errs = append(errs, fmt.Errorf("  traffic.%s: %w", field, err))
		}
	}
	for _, check := range slices.Sorted(maps.Keys(t.ClientErrors)) {
		if check != "default" && !slices.Contains(CheckLabels, check) {
			errs = append(errs, fmt.Errorf("  traffic.clientErrors.%s: not a check (%s) or default", check, strings.Join(CheckLabels, ", ")))
		}
		if _, err := validate.ParseClientErrors(t.ClientErrors[check]); err != nil {
			errs = append(errs, fmt.Errorf("  traffic.clientErrors.%s: %w", check, err))
		}
	}
	return errs
}

func durationOr(s string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(s); err == nil {
		return d
	}
	return def
}
