package framework

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/etcdproof/etcdproof/conformance/validate"
)

// electionTimeoutFlag finds etcd's --election-timeout (milliseconds) in a
// command line, whether each argument stands alone or the whole command is
// one shell string, as coreos' operator writes it.
var electionTimeoutFlag = regexp.MustCompile(`--election-timeout[= ]+(\d+)`)

// ElectionTimeout is the longest etcd election timeout the member pods
// are started with (flag or ETCD_ELECTION_TIMEOUT), or etcd's default when
// none sets one. It bounds how long a leader change may excuse a timed-out
// request (validate.Options.ElectionTimeout): the real figure, not one
// tuned to pass. A pod list that fails gives etcd's default.
func (c *EtcdCluster) ElectionTimeout(ctx context.Context) time.Duration {
	pods, err := c.MemberPods(ctx)
	if err != nil {
		return validate.DefaultElectionTimeout
	}
	return electionTimeout(pods)
}

func electionTimeout(pods []corev1.Pod) time.Duration {
	longest := time.Duration(0)
	for _, p := range pods {
		for _, ctr := range p.Spec.Containers {
			ms := ""
			for _, e := range ctr.Env {
				if e.Name == "ETCD_ELECTION_TIMEOUT" {
					ms = e.Value
				}
			}
			// The flag shadows the environment variable in etcd.
			if m := electionTimeoutFlag.FindStringSubmatch(strings.Join(slices.Concat(ctr.Command, ctr.Args), " ")); m != nil {
				ms = m[1]
			}
			if n, err := strconv.Atoi(ms); err == nil && time.Duration(n)*time.Millisecond > longest {
				longest = time.Duration(n) * time.Millisecond
			}
		}
	}
	if longest == 0 {
		return validate.DefaultElectionTimeout
	}
	return longest
}
