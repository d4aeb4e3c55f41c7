package main

import (
	"context"
	"strings"
	"testing"
)

// make cluster asks `cluster up --preflight-only` before it builds a node
// image for 20 minutes: a release this host cannot run is refused there,
// and one it can passes without Docker or a node image.
func TestClusterUpPreflightOnly(t *testing.T) {
	for release, want := range map[string]string{
		"v1.12.10": "v1.13.0 is the oldest release this suite can make a cluster of",
		"v1.34.4":  "",
	} {
		var out strings.Builder
		code := clusterCmd(context.Background(), []string{"up", "--preflight-only", "--name", "preflight", "--kubernetes-version", release}, &out)
		if want == "" && (code != 0 || out.Len() > 0) || want != "" && (code != 2 || !strings.Contains(out.String(), want)) {
			t.Errorf("%s: exit %d, %q; want %q", release, code, out.String(), want)
		}
	}
}
