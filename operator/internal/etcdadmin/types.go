package etcdadmin

import "go.etcd.io/etcd/api/v3/etcdserverpb"

type etcdMember = etcdserverpb.Member
