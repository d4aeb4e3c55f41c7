package main

import _ "embed"

// override is a replacement path or version, with the reason for it.
type override struct{ To, Reason string }

// hintModules have go.mod files that name many Godeps commits of 1.11-1.14 as
// pseudo-versions: 1.15 was the first release with a go.mod, made from Godeps.
var hintModules = []string{
	"k8s.io/kubernetes@v1.15.0-alpha.1",
	"k8s.io/kubernetes@v1.15.0-alpha.3",
	"k8s.io/kubernetes@v1.15.12",
}

// pins names more commits as pseudo-versions: see its head.
//
//go:embed pins.txt
var pins string

// moved: repositories that the proxy serves only under another path.
var moved = map[string]override{
	"vbom.ml/util":                  {"github.com/fvbommel/util", "vbom.ml no longer serves its module; same repository at GitHub"},
	"github.com/nikhita/systemstat": {"bitbucket.org/bertimus9/systemstat", "the GitHub mirror is gone; same commit at its origin"},
	"bitbucket.org/ww/goautoneg":    {"github.com/munnerz/goautoneg", "the Mercurial original is gone; its Git copy (see fallbacks)"},
}

// fallbacks: for commits (module@first 12 hex digits) whose version is not to
// be had (no tag, no pseudo-version found anywhere, or refused by the proxy),
// the nearest served version.
var fallbacks = map[string]override{
	// v1.11, v1.12
	// Their late patch releases vendor compute/mgmt/2019-03-01, copied by hand
	// onto v14.7.0 and v19.2.0 (the proxy refuses both tags anyway).
	"github.com/Azure/azure-sdk-for-go@8c6dfb65cae4": {"v21.4.0+incompatible", "the pin of v1.13.12 and v1.14.10, with compute 2019-03-01"},
	"github.com/Azure/azure-sdk-for-go@6b60506b6dd8": {"v21.4.0+incompatible", "the pin of v1.13.12 and v1.14.10, with compute 2019-03-01"},
	"bitbucket.org/ww/goautoneg@75cd24fc2f2c":        {"v0.0.0-20120707110453-a547fc61f48d", "the same change, converted to Git"},
	"k8s.io/gengo@01a732e01d00":                      {"v0.0.0-20180702041517-fdcf9f9480fd", "its time is nowhere; the v1.12 pin (openapi-gen only)"},
	// v1.12, v1.13
	"github.com/quobyte/api@206ef832283c": {"v0.1.2", "its time is nowhere; the next tag, the v1.14 pin"},
	// v1.13
	"github.com/grpc-ecosystem/go-grpc-middleware@498ae206fc3c": {"v1.0.0", "its time is nowhere; the tag 4 commits before"},
	"golang.org/x/net@b1cc14aba47a":                             {"v0.0.0-20190812203447-cdfb69ac37fc", "its time is nowhere; the v1.14 pin"},
	"k8s.io/kube-openapi@fd52d7a69c20":                          {"v0.0.0-20181109181836-c59034cc13d5", "its time is nowhere; the pin of v1.13.0 (2019's lack handler.BuildAndRegisterOpenAPIService)"},
}

// bumps: the lowest version a module (or module@commit) may have in the builder.
var bumps = map[string]override{
	"github.com/modern-go/reflect2": {"v1.0.2", "before v1.0.2 it iterates maps through runtime internals that Go 1.18 changed: json-iterator panics encoding any map"},
	// v1.11, v1.12: the etcd2 storage links the v2 client, which links
	// github.com/ugorji/go/codec, whose init panics under Go 1.22+ ("encoding
	// alphabet includes duplicate symbols"); the codec fixed that only in 2023,
	// long after the API the client's generated code uses.
	"github.com/coreos/etcd@95a726a27e09": {"v3.3.13+incompatible", "its client no longer imports ugorji/go (v3.3.10's still does)"},
	"github.com/coreos/etcd@420a452267a7": {"v3.3.13+incompatible", "its client no longer imports ugorji/go (v3.3.10's still does)"},
	// v1.11: kubeadm imports that codec itself. Its v1.2.12 (a module of its own
	// by then, which the root module's go.mod requires) fixed the panic.
	"github.com/ugorji/go@ded73eae5db7": {"v1.2.12", "kubeadm's ugorji/go/codec panics at init under Go 1.22+ (see above)"},
	// v1.11: azure-sdk-for-go v21.4.0 (a fallback) needs azure.NewFutureFromResponse.
	"github.com/Azure/go-autorest@1ff28809256a": {"v10.14.0+incompatible", "v10.6.2 lacks what the azure-sdk-for-go fallback uses; the v1.12 pin"},
}

// extras: modules that a fallback (by its key) imports but Godeps lacks.
var extras = map[string]module{
	"k8s.io/kube-openapi@fd52d7a69c20": {Path: "bitbucket.org/ww/goautoneg", Target: "github.com/munnerz/goautoneg",
		Version: "v0.0.0-20191010083416-a7dc8b61c822", Note: "imported by the kube-openapi fallback; not a547fc61f48d, which already replaces github.com/munnerz/goautoneg (a module version can stand in for one path only)"},
}

// drop: repositories without a served version that the builder can do
// without: none of the six commands imports them.
var drop = map[string]string{
	"github.com/kubernetes/repo-infra":    "kazel, a Bazel tool",
	"github.com/bazelbuild/bazel-gazelle": "a Bazel tool",
}
