package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

type fakeResolver map[string][]string

func (f fakeResolver) LookupHost(_ context.Context, host string) ([]string, error) {
	if addrs, ok := f[host]; ok {
		return addrs, nil
	}
	return nil, errors.New("no such host")
}

func TestRun(t *testing.T) {
	r := fakeResolver{"etcd-0.example.default.svc": {"10.244.0.7"}}
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{"resolves", []string{"etcd-0.example.default.svc"}, 0, "Address 1: 10.244.0.7", ""},
		{"server argument is accepted", []string{"etcd-0.example.default.svc", "10.96.0.10"}, 0, "10.244.0.7", ""},
		{"unknown name fails", []string{"missing.default.svc"}, 1, "", "can't resolve 'missing.default.svc'"},
		{"no name is a usage error", nil, 2, "", "usage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(tt.args, &out, &errOut, r)
			if code != tt.wantCode {
				t.Fatalf("exit code %d, want %d (stderr %q)", code, tt.wantCode, errOut.String())
			}
			if !strings.Contains(out.String(), tt.wantOut) {
				t.Errorf("stdout %q lacks %q", out.String(), tt.wantOut)
			}
			if !strings.Contains(errOut.String(), tt.wantErr) {
				t.Errorf("stderr %q lacks %q", errOut.String(), tt.wantErr)
			}
		})
	}
}
