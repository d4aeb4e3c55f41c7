package plan

import (
	"fmt"
	"strings"

	"github.com/etcdproof/etcdproof/operator/internal/conditions"
)

// strangers comes before every other step: pods that carry the cluster's
// labels but are not its own are behind its client Service too, so a
// cluster that bootstrapped or changed membership beside them would put
// two etcd clusters behind one name. Orphaned members of its own etcd
// cluster (an EtcdCluster deleted with --cascade=orphan and created again)
// are adopted first, as they are: their data is the cluster's. Anything
// else stops every change until a person removes it or its labels.
func strangers(o Observed) (Action, bool) {
	if len(o.Foreign) > 0 {
		return wait(conditions.ReasonForeignPods, fmt.Sprintf(
			"pods with this cluster's labels that it does not control and cannot adopt: %s; nothing is changed until they are deleted or relabelled",
			strings.Join(o.Foreign, ", ")), PollSteady), true
	}
	if len(o.Adoptable) > 0 {
		return Action{Kind: AdoptPods, Names: o.Adoptable, Reason: conditions.ReasonAdopting,
			Message:      fmt.Sprintf("adopting orphaned members %s", strings.Join(o.Adoptable, ", ")),
			RequeueAfter: AfterChange}, true
	}
	return Action{}, false
}
