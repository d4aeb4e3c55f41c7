package etcdadmin

import (
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

type etcdMember = etcdserverpb.Member

type etcdMemberAlarm = clientv3.AlarmMember
