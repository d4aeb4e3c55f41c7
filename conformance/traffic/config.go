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
	// until it succeeds; a key never read back cannot be verified.
	FinalReadBudget time.Duration
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
	return errors.Join(errs...)
}
