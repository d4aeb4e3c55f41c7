// Builder module for github.com/coreos/etcd-operator v0.9.4 (scripts/build-thirdparty-images.sh).
// v0.9.4 predates Go modules: it was built with dep, and its Gopkg.lock pins every
// dependency (k8s.io/* at kubernetes-1.12.6, github.com/coreos/etcd v3.2.13, ...). Each
// pin below is that revision as a canonical version or pseudo-version (the proxy
// refuses raw commit hashes and tags like kubernetes-1.12.6), and the replace block
// stops minimal version selection from moving any of them.
module etcdproof.local/coreosbuilder

go 1.21

require (
	github.com/coreos/etcd-operator v0.9.4
	cloud.google.com/go v0.19.0
	github.com/Azure/azure-sdk-for-go v11.3.0-beta+incompatible
	github.com/Azure/go-autorest v11.1.1+incompatible
	github.com/PuerkitoBio/purell v1.1.1
	github.com/PuerkitoBio/urlesc v0.0.0-20170810143723-de5bf2ad4578
	github.com/aws/aws-sdk-go v1.13.8
	github.com/beorn7/perks v0.0.0-20180321164747-3a771d992973
	github.com/coreos/etcd v3.2.13+incompatible
	github.com/davecgh/go-spew v1.1.1
	github.com/dgrijalva/jwt-go v3.2.0+incompatible
	github.com/emicklei/go-restful v2.9.0+incompatible
	github.com/ghodss/yaml v1.0.0
	github.com/go-ini/ini v1.42.0
	github.com/go-openapi/jsonpointer v0.18.0
	github.com/go-openapi/jsonreference v0.18.0
	github.com/go-openapi/spec v0.18.0
	github.com/go-openapi/swag v0.18.0
	github.com/gogo/protobuf v1.2.1
	github.com/golang/glog v0.0.0-20160126235308-23def4e6c14b
	github.com/golang/groupcache v0.0.0-20190129154638-5b532d6fd5ef
	github.com/golang/protobuf v1.3.0
	github.com/google/btree v0.0.0-20180813153112-4030bb1f1f0c
	github.com/google/gofuzz v0.0.0-20170612174753-24818f796faf
	github.com/googleapis/gax-go v0.0.0-20181219185031-c8a15bac9b9f
	github.com/googleapis/gax-go/v2 v2.0.3
	github.com/googleapis/gnostic v0.2.0
	github.com/gregjones/httpcache v0.0.0-20190212212710-3befbb6ad0cc
	github.com/hashicorp/golang-lru v0.5.0
	github.com/imdario/mergo v0.3.7
	github.com/jmespath/go-jmespath v0.0.0-20160202185014-0b12d6b521d8
	github.com/json-iterator/go v1.1.5
	github.com/mailru/easyjson v0.0.0-20190221075403-6243d8e04c3f
	github.com/matttproud/golang_protobuf_extensions v1.0.1
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd
	github.com/modern-go/reflect2 v1.0.2
	github.com/pborman/uuid v0.0.0-20170612153648-e790cca94e6c
	github.com/petar/GoLLRB v0.0.0-20130427215148-53be0d36a84c
	github.com/peterbourgon/diskv v2.0.1+incompatible
	github.com/pkg/errors v0.8.0
	github.com/prometheus/client_golang v0.8.0
	github.com/prometheus/client_model v0.0.0-20190129233127-fd36f4220a90
	github.com/prometheus/common v0.2.0
	github.com/prometheus/procfs v0.0.0-20190225181712-6ed1f7e10411
	github.com/satori/uuid v1.2.0
	github.com/sirupsen/logrus v1.0.4
	github.com/spf13/pflag v1.0.3
	go.opencensus.io v0.19.0
	golang.org/x/crypto v0.0.0-20190227175134-215aa809caaf
	golang.org/x/net v0.0.0-20190227160552-c95aed5357e7
	golang.org/x/oauth2 v0.0.0-20190226205417-e64efc72b421
	golang.org/x/sys v0.0.0-20190226215855-775f8194d0f9
	golang.org/x/text v0.3.0
	golang.org/x/time v0.0.0-20181108054448-85acf8d2951c
	google.golang.org/api v0.1.0
	google.golang.org/appengine v1.4.0
	google.golang.org/genproto v0.0.0-20190227213309-4f5b463f9597
	google.golang.org/grpc v1.14.0
	gopkg.in/inf.v0 v0.9.1
	gopkg.in/yaml.v2 v2.2.2
	k8s.io/api v0.0.0-20190226173710-145d52631d00
	k8s.io/apiextensions-apiserver v0.0.0-20190226180157-bd0469a053ff
	k8s.io/apimachinery v0.0.0-20190221084156-01f179d85dbc
	k8s.io/client-go v0.0.0-20190226174127-78295b709ec6
	k8s.io/klog v0.2.0
	k8s.io/kube-openapi v0.0.0-20190225204428-d50a959ae76a
)

replace (
	cloud.google.com/go => cloud.google.com/go v0.19.0
	github.com/Azure/azure-sdk-for-go => github.com/Azure/azure-sdk-for-go v11.3.0-beta+incompatible
	github.com/Azure/go-autorest => github.com/Azure/go-autorest v11.1.1+incompatible
	github.com/PuerkitoBio/purell => github.com/PuerkitoBio/purell v1.1.1
	github.com/PuerkitoBio/urlesc => github.com/PuerkitoBio/urlesc v0.0.0-20170810143723-de5bf2ad4578
	github.com/aws/aws-sdk-go => github.com/aws/aws-sdk-go v1.13.8
	github.com/beorn7/perks => github.com/beorn7/perks v0.0.0-20180321164747-3a771d992973
	github.com/coreos/etcd => github.com/coreos/etcd v3.2.13+incompatible
	github.com/davecgh/go-spew => github.com/davecgh/go-spew v1.1.1
	github.com/dgrijalva/jwt-go => github.com/dgrijalva/jwt-go v3.2.0+incompatible
	github.com/emicklei/go-restful => github.com/emicklei/go-restful v2.9.0+incompatible
	github.com/ghodss/yaml => github.com/ghodss/yaml v1.0.0
	github.com/go-ini/ini => github.com/go-ini/ini v1.42.0
	github.com/go-openapi/jsonpointer => github.com/go-openapi/jsonpointer v0.18.0
	github.com/go-openapi/jsonreference => github.com/go-openapi/jsonreference v0.18.0
	github.com/go-openapi/spec => github.com/go-openapi/spec v0.18.0
	github.com/go-openapi/swag => github.com/go-openapi/swag v0.18.0
	github.com/gogo/protobuf => github.com/gogo/protobuf v1.2.1
	github.com/golang/glog => github.com/golang/glog v0.0.0-20160126235308-23def4e6c14b
	github.com/golang/groupcache => github.com/golang/groupcache v0.0.0-20190129154638-5b532d6fd5ef
	github.com/golang/protobuf => github.com/golang/protobuf v1.3.0
	github.com/google/btree => github.com/google/btree v0.0.0-20180813153112-4030bb1f1f0c
	github.com/google/gofuzz => github.com/google/gofuzz v0.0.0-20170612174753-24818f796faf
	github.com/googleapis/gax-go => github.com/googleapis/gax-go v0.0.0-20181219185031-c8a15bac9b9f
	github.com/googleapis/gax-go/v2 => github.com/googleapis/gax-go/v2 v2.0.3
	github.com/googleapis/gnostic => github.com/googleapis/gnostic v0.2.0
	github.com/gregjones/httpcache => github.com/gregjones/httpcache v0.0.0-20190212212710-3befbb6ad0cc
	github.com/hashicorp/golang-lru => github.com/hashicorp/golang-lru v0.5.0
	github.com/imdario/mergo => github.com/imdario/mergo v0.3.7
	github.com/jmespath/go-jmespath => github.com/jmespath/go-jmespath v0.0.0-20160202185014-0b12d6b521d8
	github.com/json-iterator/go => github.com/json-iterator/go v1.1.5
	github.com/mailru/easyjson => github.com/mailru/easyjson v0.0.0-20190221075403-6243d8e04c3f
	github.com/matttproud/golang_protobuf_extensions => github.com/matttproud/golang_protobuf_extensions v1.0.1
	github.com/modern-go/concurrent => github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd
	github.com/modern-go/reflect2 => github.com/modern-go/reflect2 v1.0.2
	github.com/pborman/uuid => github.com/pborman/uuid v0.0.0-20170612153648-e790cca94e6c
	github.com/petar/GoLLRB => github.com/petar/GoLLRB v0.0.0-20130427215148-53be0d36a84c
	github.com/peterbourgon/diskv => github.com/peterbourgon/diskv v2.0.1+incompatible
	github.com/pkg/errors => github.com/pkg/errors v0.8.0
	github.com/prometheus/client_golang => github.com/prometheus/client_golang v0.8.0
	github.com/prometheus/client_model => github.com/prometheus/client_model v0.0.0-20190129233127-fd36f4220a90
	github.com/prometheus/common => github.com/prometheus/common v0.2.0
	github.com/prometheus/procfs => github.com/prometheus/procfs v0.0.0-20190225181712-6ed1f7e10411
	github.com/satori/uuid => github.com/satori/uuid v1.2.0
	github.com/sirupsen/logrus => github.com/sirupsen/logrus v1.0.4
	github.com/spf13/pflag => github.com/spf13/pflag v1.0.3
	go.opencensus.io => go.opencensus.io v0.19.0
	golang.org/x/crypto => golang.org/x/crypto v0.0.0-20190227175134-215aa809caaf
	golang.org/x/net => golang.org/x/net v0.0.0-20190227160552-c95aed5357e7
	golang.org/x/oauth2 => golang.org/x/oauth2 v0.0.0-20190226205417-e64efc72b421
	golang.org/x/sys => golang.org/x/sys v0.0.0-20190226215855-775f8194d0f9
	golang.org/x/text => golang.org/x/text v0.3.0
	golang.org/x/time => golang.org/x/time v0.0.0-20181108054448-85acf8d2951c
	google.golang.org/api => google.golang.org/api v0.1.0
	google.golang.org/appengine => google.golang.org/appengine v1.4.0
	google.golang.org/genproto => google.golang.org/genproto v0.0.0-20190227213309-4f5b463f9597
	google.golang.org/grpc => google.golang.org/grpc v1.14.0
	gopkg.in/inf.v0 => gopkg.in/inf.v0 v0.9.1
	gopkg.in/yaml.v2 => gopkg.in/yaml.v2 v2.2.2
	k8s.io/api => k8s.io/api v0.0.0-20190226173710-145d52631d00
	k8s.io/apiextensions-apiserver => k8s.io/apiextensions-apiserver v0.0.0-20190226180157-bd0469a053ff
	k8s.io/apimachinery => k8s.io/apimachinery v0.0.0-20190221084156-01f179d85dbc
	k8s.io/client-go => k8s.io/client-go v0.0.0-20190226174127-78295b709ec6
	k8s.io/klog => k8s.io/klog v0.2.0
	k8s.io/kube-openapi => k8s.io/kube-openapi v0.0.0-20190225204428-d50a959ae76a
)
