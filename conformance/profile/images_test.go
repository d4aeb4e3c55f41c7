package profile

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const (
	testTrafficImage = "etcdproof/etcdproof:dev"
	// suite.yaml's objectStoreImage.
	testObjectStore = "etcdproof/seaweedfs:4.53-7506e5f91cd6"
)

func TestRunImagesOfTheRealProfiles(t *testing.T) {
	cfg, err := LoadConfig("../config/suite.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ObjectStoreImage != testObjectStore {
		t.Fatalf("suite.yaml's objectStoreImage is %s: update testObjectStore", cfg.ObjectStoreImage)
	}
	referenceImages := []string{
		"etcdproof/etcd-operator:dev", "etcdproof/etcd-operator:next",
		// Its upgrade chain, which its list already names.
		"quay.io/coreos/etcd:v3.4.25", "quay.io/coreos/etcd:v3.5.36", "quay.io/coreos/etcd:v3.6.16", "quay.io/coreos/etcd:v3.7.3",
		testObjectStore, testTrafficImage,
	}
	for _, tc := range []struct {
		profile string
		want    []string
	}{
		// No coreos operator, curl, busybox or etcd 3.5.6: nothing of the
		// reference's runs starts them.
		{"reference", referenceImages},
		// coreos' install, the reference's images.
		{"reference-as-coreos", referenceImages},
		{"coreos-v0.9.4", []string{
			"quay.io/coreos/etcd-operator:v0.9.4", "quay.io/coreos/etcd:v3.5.6", "quay.io/coreos/etcd:v3.6.16",
			"busybox:1.28.0-glibc", "tutum/curl:latest", testObjectStore, testTrafficImage,
		}},
		// Upgrade claimed, the chain not: etcd.initial and etcd.upgradeTo,
		// which its list leaves to the suite; it claims backup-restore.
		{"selftest-restore-unchecked", []string{
			"etcdproof/etcd-operator:selftest", "quay.io/coreos/etcd:v3.6.16", "quay.io/coreos/etcd:v3.7.3", testObjectStore, testTrafficImage,
		}},
		// No list at all (its install names the reference's image).
		{"selftest-group-wildcard", []string{"quay.io/coreos/etcd:v3.6.16", "quay.io/coreos/etcd:v3.7.3", testTrafficImage}},
		// Upgrade not claimed: etcd.upgradeTo (3.6.5) is never run.
		{"etcd-io-v0.2.0", []string{"gcr.io/etcd-development/etcd-operator:v0.2.0", "gcr.io/etcd-development/etcd:v3.5.36", testTrafficImage}},
		{"aenix-v0.4.5", []string{
			"ghcr.io/aenix-io/etcd-operator:v0.4.5", "quay.io/brancz/kube-rbac-proxy:v0.18.1", "quay.io/coreos/etcd:v3.5.36",
			"quay.io/jetstack/cert-manager-controller:v1.15.0", "quay.io/jetstack/cert-manager-cainjector:v1.15.0", "quay.io/jetstack/cert-manager-webhook:v1.15.0",
			testTrafficImage,
		}},
	} {
		p, err := Load(filepath.Join("..", "profiles", tc.profile+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if got := p.RunImages(cfg, testTrafficImage); !slices.Equal(got, tc.want) {
			t.Errorf("%s: RunImages =\n  %q\nwant\n  %q", tc.profile, got, tc.want)
		}
	}
}

func TestRunImagesFollowTheClaims(t *testing.T) {
	cfg := &Config{ObjectStoreImage: "store:1"}
	etcd := Etcd{Repository: "example.com/etcd", Initial: "3.5.1", UpgradeTo: "3.6.1", UpgradeChain: []string{"3.4.1", "3.5.1", "3.6.1"}}
	for _, tc := range []struct {
		name   string
		images []string
		caps   Capabilities
		want   []string
	}{
		{"nothing claimed: the initial release and the traffic", nil, Capabilities{},
			[]string{"example.com/etcd:v3.5.1", "traffic:1"}},
		{"upgrade: the release it upgrades to", nil, Capabilities{Upgrade: true},
			[]string{"example.com/etcd:v3.5.1", "example.com/etcd:v3.6.1", "traffic:1"}},
		{"the chain: every release of it", nil, Capabilities{Upgrade: true, UpgradeChain: true},
			[]string{"example.com/etcd:v3.5.1", "example.com/etcd:v3.4.1", "example.com/etcd:v3.6.1", "traffic:1"}},
		{"the chain claimed without upgrade walks nothing", nil, Capabilities{UpgradeChain: true},
			[]string{"example.com/etcd:v3.5.1", "traffic:1"}},
		{"backup-restore: the object store", nil, Capabilities{BackupRestore: BackupRestoreCoreosAPI},
			[]string{"example.com/etcd:v3.5.1", "store:1", "traffic:1"}},
		{"the profile's list first, each image once", []string{"op:1", "example.com/etcd:v3.5.1", "op:1", "traffic:1"}, Capabilities{},
			[]string{"op:1", "example.com/etcd:v3.5.1", "traffic:1"}},
	} {
		p := &Profile{Images: tc.images, Etcd: etcd, Capabilities: tc.caps}
		if got := p.RunImages(cfg, "traffic:1"); !slices.Equal(got, tc.want) {
			t.Errorf("%s: RunImages = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// versionsPin is a pin of scripts/lib/versions.sh, NAME=value or
// NAME="value", which the image scripts build from.
func versionsPin(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile("../../scripts/lib/versions.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + name + `="?([^"\n]*)"?$`).FindSubmatch(raw)
	if m == nil {
		t.Fatalf("scripts/lib/versions.sh pins no %s", name)
	}
	return string(m[1])
}

// The scripts build the object store under versions.sh's name and the runs
// ask for suite.yaml's: one name, or no builder makes what a run needs.
func TestObjectStoreImageIsTheOneTheScriptsBuild(t *testing.T) {
	cfg, err := LoadConfig("../config/suite.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if built := versionsPin(t, "SEAWEEDFS_IMAGE"); cfg.ObjectStoreImage != built {
		t.Errorf("suite.yaml's objectStoreImage is %s, versions.sh's SEAWEEDFS_IMAGE %s", cfg.ObjectStoreImage, built)
	}
}

// Every etcd release a profile's runs need is one the scripts build
// (ETCD_WORKLOAD_VERSIONS): a run never waits on an etcd image it cannot get.
func TestEveryEtcdReleaseTheProfilesRunIsBuiltHere(t *testing.T) {
	built := strings.Fields(versionsPin(t, "ETCD_WORKLOAD_VERSIONS"))
	paths, err := filepath.Glob("../profiles/*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no profiles: %v", err)
	}
	for _, path := range paths {
		p, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, img := range p.RunImages(&Config{}, "") {
			v, ok := strings.CutPrefix(img, p.Etcd.Repository+":")
			if ok && !slices.Contains(built, v) {
				t.Errorf("%s runs etcd %s, which is not in versions.sh's ETCD_WORKLOAD_VERSIONS %q", filepath.Base(path), v, built)
			}
		}
	}
}
