package profile

import (
	"strings"
	"testing"
	"time"

	"github.com/etcdproof/etcdproof/conformance/validate"
)

func TestTrafficClientErrorsPerCheck(t *testing.T) {
	c, err := LoadConfig("../config/suite.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tc := c.Traffic
	for _, check := range []string{"create", "scale", "upgrade"} {
		if got := tc.ClientErrorsFor(check, false); got != validate.NoErrorsAfterRetry {
			t.Errorf("%s: %s, want after-retry", check, got)
		}
	}
	if got := tc.ClientErrorsFor("replace", true); got != validate.AllowClientErrors {
		t.Errorf("replace: %s, want allowed", got)
	}
	if tc.FinalReadBudgetDuration() <= 0 || tc.RetryBackoffDuration() <= 0 {
		t.Errorf("budgets: %s %s", tc.FinalReadBudgetDuration(), tc.RetryBackoffDuration())
	}

	// Without entries: a phase that kills members allows errors, others
	// are held to after-retry; an explicit entry wins over both.
	var none TrafficConfig
	if none.ClientErrorsFor("scale", false) != validate.NoErrorsAfterRetry || none.ClientErrorsFor("replace", true) != validate.AllowClientErrors {
		t.Error("defaults without entries")
	}
	strict := TrafficConfig{ClientErrors: map[string]string{"replace": "none", "default": "allowed"}}
	if strict.ClientErrorsFor("replace", true) != validate.NoClientErrors || strict.ClientErrorsFor("scale", false) != validate.AllowClientErrors {
		t.Error("explicit entries")
	}
	if none.FinalReadBudgetDuration() != 30*time.Second || none.RetryBackoffDuration() != 100*time.Millisecond {
		t.Error("duration defaults")
	}
}

func TestBadTrafficConfigNamesEveryProblem(t *testing.T) {
	bad := TrafficConfig{RequestTimeout: "5s", RetryBackoff: "soon", FinalReadBudget: "-1s",
		ClientErrors: map[string]string{"scale": "sometimes", "deploy": "none"}}
	var msgs []string
	for _, err := range bad.validate() {
		msgs = append(msgs, err.Error())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"traffic.retryBackoff", "traffic.finalReadBudget", `traffic.clientErrors.scale: "sometimes"`, "traffic.clientErrors.deploy: not a check"} {
		if !strings.Contains(all, want) {
			t.Errorf("errors do not mention %q:\n%s", want, all)
		}
	}
}
