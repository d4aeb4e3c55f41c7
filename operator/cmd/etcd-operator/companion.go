package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/go-logr/logr"
)

// companions are the two other programs of coreos v0.9.4's image, which its
// backup and restore walkthroughs run by name from that image
// (example/etcd-backup-operator, example/etcd-restore-operator), with what
// each served. Here etcd-operator alone serves EtcdCluster, EtcdBackup and
// EtcdRestore, so the image carries these names as links to its binary:
// started under one, it keeps coreos' Deployment running and serves nothing,
// since a second server of EtcdBackups would take each backup twice, and
// EtcdRestores are carried out by the controller that owns the cluster's pods.
var companions = map[string]string{
	"etcd-backup-operator":  "EtcdBackups",
	"etcd-restore-operator": "EtcdRestores",
}

// companionOf says which kinds the program named argv0 served in coreos'
// image, and whether it is one of the companions at all.
func companionOf(argv0 string) (kinds string, ok bool) {
	kinds, ok = companions[filepath.Base(argv0)]
	return kinds, ok
}

// runCompanion runs a companion program until ctx ends and returns its exit
// code. It takes the flags coreos' binary took (--create-crd and glog's), so
// coreos' Deployments run unchanged, and says once where its work is done.
func runCompanion(ctx context.Context, name string, args []string, stderr io.Writer, log logr.Logger) int {
	kinds, _ := companionOf(name)
	name = filepath.Base(name)
	const ignored = " Accepted for coreos etcd-operator v0.9.4's command line; no effect here."
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var createCRD bool
	var glog coreosFlags
	fs.BoolVar(&createCRD, "create-crd", true,
		"coreos' "+name+" registered its CRD; etcd-operator registers all three here (its --create-crd)."+ignored)
	glog.bindGlog(fs, ignored)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, name+":", err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected arguments %q\n", name, fs.Args())
		return 2
	}
	log.Info(kinds+" are served by etcd-operator, whose one process serves EtcdCluster, EtcdBackup and EtcdRestore; "+
		"this program only keeps coreos' "+name+" Deployment running, and that Deployment may be deleted",
		"program", name, "version", buildVersion())
	<-ctx.Done()
	return 0
}
