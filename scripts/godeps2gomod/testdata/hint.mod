module k8s.io/kubernetes

require (
	golang.org/x/net v0.0.0-20190812203447-cdfb69ac37fc
	gopkg.in/square/go-jose.v2 v2.0.0-20180411045311-89060dee6a84
	vbom.ml/util v0.0.0-20160121211510-db5cfe13f5cc
)
