package profile

import (
	"errors"
	"fmt"
	"strings"

	utilversion "k8s.io/apimachinery/pkg/util/version"
)

// validateEtcd checks the etcd versions, and that the claimed upgrade
// checks have versions one minor apart to walk.
func (p *Profile) validateEtcd() []error {
	var errs []error
	for _, v := range append([]string{p.Etcd.Initial, p.Etcd.UpgradeTo}, p.Etcd.UpgradeChain...) {
		if v != "" && !validVersion(v) {
			errs = append(errs, fmt.Errorf("  etcd: version %q is not MAJOR.MINOR.PATCH (no leading v)", v))
		}
	}
	if p.Capabilities.Upgrade && p.Etcd.UpgradeTo == "" {
		errs = append(errs, errors.New("  etcd.upgradeTo: required when capabilities.upgrade is claimed"))
	}
	if hop := upgradeHop(p.Etcd.Initial, p.Etcd.UpgradeTo); p.Capabilities.Upgrade && hop != "" {
		errs = append(errs, fmt.Errorf("  etcd.upgradeTo: %s %s etcd.initial %s; the upgrade check moves etcd exactly one minor (etcd's supported upgrade step): set it to a %s release",
			p.Etcd.UpgradeTo, hop, p.Etcd.Initial, nextMinor(p.Etcd.Initial)))
	}
	if p.Capabilities.UpgradeChain && len(p.Etcd.UpgradeChain) < 3 {
		errs = append(errs, errors.New("  etcd.upgradeChain: needs at least three versions when capabilities.upgradeChain is claimed"))
	}
	if p.Capabilities.UpgradeChain {
		for i := 1; i < len(p.Etcd.UpgradeChain); i++ {
			from, to := p.Etcd.UpgradeChain[i-1], p.Etcd.UpgradeChain[i]
			if hop := upgradeHop(from, to); hop != "" {
				errs = append(errs, fmt.Errorf("  etcd.upgradeChain: %s → %s is not one minor newer (%s %s %s); etcd upgrades one minor at a time", from, to, to, hop, from))
			}
		}
	}
	return errs
}

// upgradeHop says how far one version is from another when that is not one
// etcd upgrade step (same major, the next minor): "is not a newer minor
// than" or "is N minors after"; "" when it is a step, or when a version is
// missing or malformed (reported elsewhere).
func upgradeHop(from, to string) string {
	if !validVersion(from) || !validVersion(to) {
		return ""
	}
	f, t := utilversion.MustParseSemantic(from), utilversion.MustParseSemantic(to)
	switch {
	case t.Major() != f.Major() || t.Minor() <= f.Minor():
		return "is not a newer minor than"
	case t.Minor() > f.Minor()+1:
		return fmt.Sprintf("is %d minors after", t.Minor()-f.Minor())
	}
	return ""
}

// nextMinor is the series one upgrade step after v ("3.5.21" → "3.6.x").
func nextMinor(v string) string {
	f := utilversion.MustParseSemantic(v)
	return fmt.Sprintf("%d.%d.x", f.Major(), f.Minor()+1)
}

func validVersion(v string) bool {
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	return true
}
