package traffic

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Config shapes the load.
type Config struct {
	Endpoints []string
	// TLS, when set, is how the clients dial a cluster that speaks TLS
	// (its endpoints must be https://); nil dials in plain text.
	TLS *tls.Config
	// Clients is the number of concurrent clients, each with one request
	// in flight at a time.
	Clients int
	// Keys is the number of shared keys the clients write and read.
	Keys int
	// Rate is the total operations per second across all clients.
	Rate int
	// RequestTimeout bounds each request (clientv3 retries inside it).
	RequestTimeout time.Duration
	// KeyPrefix namespaces the keys.
	KeyPrefix string
	// RetryBackoff is the wait before the one retry of a request that
	// failed definitely.
	RetryBackoff time.Duration
	// FinalReadBudget is how long the final read of each key is retried
	// until it succeeds; a key never read back cannot be verified. The
	// watchers get as long to catch up with the last acknowledged put.
	FinalReadBudget time.Duration
	// Watchers is the number of watch clients, each watching every key
	// under KeyPrefix from the revision current when traffic starts, as
	// informers watch what they cache; 0 runs none.
	Watchers int
	// WatchResumeEvery is how often each watcher cancels its stream and
	// resumes from the revision after the last event it got, as an
	// informer does when its watch times out; 0 never resumes.
	WatchResumeEvery time.Duration
}

// Validate reports bad settings with the flag-like field name.
func (c Config) Validate() error {
	var errs []error
	if len(c.Endpoints) == 0 {
		errs = append(errs, errors.New("endpoints: at least one is required"))
	}
	for _, ep := range c.Endpoints {
		if c.TLS != nil && strings.HasPrefix(ep, "http://") {
			errs = append(errs, fmt.Errorf("endpoints: %s is http://, which clientv3 dials in plain text whatever the TLS settings: use https://", ep))
		}
	}
	if c.Clients < 1 {
		errs = append(errs, fmt.Errorf("clients: must be at least 1, got %d", c.Clients))
	}
	if c.Keys < 1 {
		errs = append(errs, fmt.Errorf("keys: must be at least 1, got %d", c.Keys))
	}
	if c.Rate < 1 {
		errs = append(errs, fmt.Errorf("rate: must be at least 1 operation per second, got %d", c.Rate))
	}
	if c.RequestTimeout <= 0 {
		errs = append(errs, fmt.Errorf("request-timeout: must be positive, got %s", c.RequestTimeout))
	}
	if c.RetryBackoff < 0 {
		errs = append(errs, fmt.Errorf("retry-backoff: must not be negative, got %s", c.RetryBackoff))
	}
	if c.FinalReadBudget <= 0 {
		errs = append(errs, fmt.Errorf("final-read-budget: must be positive, got %s", c.FinalReadBudget))
	}
	if c.Watchers < 0 {
		errs = append(errs, fmt.Errorf("watchers: must not be negative, got %d", c.Watchers))
	}
	if c.WatchResumeEvery < 0 {
		errs = append(errs, fmt.Errorf("watch-resume-every: must not be negative, got %s", c.WatchResumeEvery))
	}
	return errors.Join(errs...)
}
