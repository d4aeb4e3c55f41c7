package report

import (
	"slices"
	"sort"
)

// MergeRuns joins the runs of one profile on one Kubernetes version into a
// single column: the node checks run on a cluster of their own (make
// results-nodes), the rest on the single-node one, and a reader compares
// operators, not clusters. Each check comes from the run that ran it (the
// latest one if several did), every other run's "not selected" is dropped,
// and the verdict is judged again over the joined checks. Runs are not
// modified; a profile with one run keeps it as it is.
func MergeRuns(reports []*Report) []*Report {
	type key struct{ profile, kube string }
	groups := map[key][]*Report{}
	var order []key
	for _, r := range reports {
		k := key{r.Profile, r.Environment.Kubernetes}
		if _, seen := groups[k]; !seen {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	var merged []*Report
	for _, k := range order {
		runs := groups[k]
		if len(runs) == 1 {
			merged = append(merged, runs[0])
			continue
		}
		merged = append(merged, mergeGroup(runs))
	}
	return merged
}

func mergeGroup(runs []*Report) *Report {
	runs = slices.Clone(runs)
	// The run that ran the most checks describes the column (operator,
	// suite; the etcd versions are every run's); later runs win a check
	// that several ran.
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].Started.Before(runs[j].Started) })
	main := slices.MaxFunc(runs, func(a, b *Report) int { return ranChecks(a) - ranChecks(b) })
	out := *main
	out.Checks, out.SuiteFailures, out.SetupFailure, out.Duration = nil, nil, "", 0
	out.Operator, out.Environment.Etcd = nil, slices.Clone(main.Environment.Etcd)
	byName := map[string]int{}
	for _, r := range runs {
		out.Duration += r.Duration
		out.SuiteFailures = append(out.SuiteFailures, r.SuiteFailures...)
		if r.SetupFailure != "" && out.SetupFailure == "" {
			out.SetupFailure = r.SetupFailure
		}
		if u := r.Operator; u != nil && (out.Operator == nil || u.PeakRSSBytes > out.Operator.PeakRSSBytes) {
			out.Operator = u
		}
		for _, v := range r.Environment.Etcd {
			if !slices.Contains(out.Environment.Etcd, v) {
				out.Environment.Etcd = append(out.Environment.Etcd, v)
			}
		}
		if r.Started.Before(out.Started) {
			out.Started = r.Started
		}
		for _, c := range r.Checks {
			i, seen := byName[c.Name]
			switch {
			case !seen:
				byName[c.Name] = len(out.Checks)
				out.Checks = append(out.Checks, c)
			case c.State != NotSelected:
				out.Checks[i] = c
			}
		}
	}
	out.Judge()
	return &out
}

func ranChecks(r *Report) int {
	n := 0
	for _, c := range r.Checks {
		if c.State != NotSelected {
			n++
		}
	}
	return n
}
