package profile

import "slices"

// RunImages are the images a run of p puts on the cluster's nodes, each
// once: the profile's own list (its operator and what its clusters run),
// then what the suite starts itself for p, so that `etcdproof profile
// images` tells the substrate what to build for a run and nothing more:
//   - the etcd release of each version the checks create or upgrade to
//     (EtcdImage): etcd.initial, which every check's cluster and the
//     floor's member pods start on; and, when upgrade is claimed, the
//     versions the upgrade check walks (etcd.upgradeTo, or etcd.upgradeChain
//     when that is claimed), upgradeTo being also where operator-crash and
//     drain-during-rollout upgrade to;
//   - cfg.ObjectStoreImage when backup-restore is claimed: the S3 store
//     backup-restore and bad-restore start;
//   - trafficImage, the client load of every check.
//
// The suite starts nothing else (no busybox or curl of its own): those come
// from a profile's list, when its operator runs them.
func (p *Profile) RunImages(cfg *Config, trafficImage string) []string {
	images := slices.Clone(p.Images)
	etcd := []string{p.Etcd.Initial}
	if p.Capabilities.Upgrade {
		etcd = append(etcd, p.UpgradeVersions()...)
	}
	for _, v := range etcd {
		images = append(images, p.EtcdImage(v))
	}
	if p.Capabilities.BackupRestore != "" {
		images = append(images, cfg.ObjectStoreImage)
	}
	images = append(images, trafficImage)
	var once []string
	for _, img := range images {
		if img != "" && !slices.Contains(once, img) {
			once = append(once, img)
		}
	}
	return once
}

// EtcdImage is the image of etcd version that the profile's clusters run,
// <etcd.repository>:v<version>: how coreos v0.9.4 and the reference name it
// from an EtcdCluster's repository and version, and how the floor's member
// pods are built.
func (p *Profile) EtcdImage(version string) string {
	return p.Etcd.Repository + ":v" + version
}
