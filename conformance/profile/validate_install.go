package profile

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// validateInstall checks what installs, uninstalls and upgrades the
// operator: the steps, and the images they need.
func (p *Profile) validateInstall() []error {
	var errs []error
	if len(p.Install) == 0 {
		errs = append(errs, errors.New("  install: at least one step is required"))
	}
	if len(p.Uninstall) == 0 {
		errs = append(errs, errors.New("  uninstall: at least one step is required"))
	}
	for i, img := range p.Images {
		if strings.TrimSpace(img) == "" || strings.ContainsAny(img, " \t") {
			errs = append(errs, fmt.Errorf("  images[%d]: %q is not an image reference", i, img))
		}
	}
	errs = append(errs, validateSteps("install", p.Install)...)
	errs = append(errs, validateSteps("uninstall", p.Uninstall)...)
	errs = append(errs, validateSteps("upgradeOperator", p.UpgradeOperator)...)
	if p.Capabilities.OperatorUpgrade && len(p.UpgradeOperator) == 0 {
		errs = append(errs, errors.New("  upgradeOperator: at least one step is required when capabilities.operatorUpgrade is claimed: "+
			"the steps that replace the running operator with a newer build (e.g. set a new image on its Deployment)"))
	}
	return errs
}

// validateSteps checks each step of one list: exactly one action, and
// group/versions where the step depends on one.
func validateSteps(field string, steps []Step) []error {
	var errs []error
	for i, s := range steps {
		set := 0
		for _, b := range []bool{s.Apply != "", s.Delete != "", len(s.Run) > 0, s.ApproveInstallPlan != ""} {
			if b {
				set++
			}
		}
		if set != 1 {
			errs = append(errs, fmt.Errorf("  %s[%d]: set exactly one of apply, delete, run, approveInstallPlan (found %d)", field, i, set))
		}
		for name, gv := range map[string]string{"ifServed": s.IfServed, "unlessServed": s.UnlessServed} {
			if gv != "" && gv != "v1" && !validServedCondition(gv) {
				errs = append(errs, fmt.Errorf("  %s[%d].%s: %q is not a group/version like apps/v1, or a group/version/resource like extensions/v1beta1/deployments", field, i, name, gv))
			}
		}
	}
	return errs
}

// validServedCondition: group/version or group/version/resource, no part empty.
func validServedCondition(s string) bool {
	parts := strings.Split(s, "/")
	return (len(parts) == 2 || len(parts) == 3) && !slices.Contains(parts, "")
}
