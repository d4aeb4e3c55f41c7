package desired

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	etcdv1beta2 "github.com/etcdproof/etcdproof/operator/api/v1beta2"
)

// OwnerReference makes c the controlling owner, so deleting the EtcdCluster
// deletes everything the operator created for it.
func OwnerReference(c *etcdv1beta2.EtcdCluster) metav1.OwnerReference {
	return *metav1.NewControllerRef(c, etcdv1beta2.GroupVersion.WithKind("EtcdCluster"))
}

func objectMeta(c *etcdv1beta2.EtcdCluster, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:            name,
		Namespace:       c.Namespace,
		Labels:          Selector(c.Name),
		OwnerReferences: []metav1.OwnerReference{OwnerReference(c)},
	}
}

func port(name string, number int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: number, TargetPort: intstr.FromInt32(number), Protocol: corev1.ProtocolTCP}
}

// PeerService is the headless Service <cluster>. It publishes not-ready
// addresses because a member must be resolvable before it can join and become ready.
func PeerService(c *etcdv1beta2.EtcdCluster) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: objectMeta(c, PeerServiceName(c.Name)),
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 Selector(c.Name),
			PublishNotReadyAddresses: true,
			Ports:                    []corev1.ServicePort{port("client", ClientPort), port("peer", PeerPort)},
		},
	}
}

// ClientService is <cluster>-client, the address clients use.
func ClientService(c *etcdv1beta2.EtcdCluster) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: objectMeta(c, ClientServiceName(c.Name)),
		Spec: corev1.ServiceSpec{
			Selector: Selector(c.Name),
			Ports:    []corev1.ServicePort{port("client", ClientPort)},
		},
	}
}
