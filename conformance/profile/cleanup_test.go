package profile

import (
	"strings"
	"testing"
)

func TestCleanupRetainsAreValidated(t *testing.T) {
	p := &Profile{Cleanup: Cleanup{Retains: []Retention{
		{Resource: "persistentvolumeclaims", Reason: "member data outlives the cluster"},
		{Resource: "PersistentVolumeClaim", Reason: "x"},
		{Resource: "etcdbackups.example.com"},
		{Resource: "persistentvolumeclaims", Reason: "again"},
	}}}
	err := p.Validate()
	for _, want := range []string{
		`cleanup.retains[1].resource: "PersistentVolumeClaim" is not a plural resource name`,
		"cleanup.retains[2].reason: required",
		"cleanup.retains[3].resource: persistentvolumeclaims is listed twice",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "cleanup.retains[0]") {
		t.Errorf("a valid retention was refused:\n%v", err)
	}
}

// The cleanup check's waits resolve in the shipped config (GetIntervals
// panics otherwise, in the middle of a run).
func TestCleanupWaitsAreConfigured(t *testing.T) {
	c, err := LoadConfig("../config/suite.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, wait := range []string{"namespace-provisioned", "inventory-empty", "members-ready", "cr-deleted", "namespace-deleted"} {
		c.GetIntervals("cleanup", wait)
	}
}
