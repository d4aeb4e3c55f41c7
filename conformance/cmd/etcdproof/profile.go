package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"

	"github.com/etcdproof/etcdproof/conformance/profile"
	"github.com/etcdproof/etcdproof/conformance/runner"
)

const profileUsage = "usage: etcdproof profile images [flags] [PROFILE...]"

// profileCmd answers questions about profiles with no cluster. Its one
// question, images, is what the substrate builds for a run
// (scripts/build-run-images.sh): the images the runs of the given
// profiles put on the nodes (profile.RunImages), one a line, each once.
func profileCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "images" {
		fmt.Fprintln(stderr, profileUsage)
		return runner.ExitCouldNot
	}
	fs := flag.NewFlagSet("profile images", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, profileUsage+"\n\nprints the images the runs of the profiles (names in --profiles-dir, or files) need on the nodes, one a line:\n"+
			"each profile's images list, the etcd releases its checks run, the object store when it claims backup-restore, and --traffic-image")
		fs.PrintDefaults()
	}
	var f runFlags
	f.registerProfile(fs)
	fs.Lookup("profile").Usage = "a profile, as one more argument"
	selftest := fs.Bool("selftest", false, "also the profiles etcdproof selftest runs (selftest-*.yaml in --profiles-dir)")
	if err := fs.Parse(args[1:]); err != nil {
		return runner.ExitCouldNot
	}
	images, err := runImages(&f, fs.Args(), *selftest)
	if err != nil {
		fmt.Fprintf(stderr, "etcdproof profile images: %v\n", err)
		return runner.ExitCouldNot
	}
	for _, img := range images {
		fmt.Fprintln(stdout, img)
	}
	return runner.ExitPass
}

// runImages are the images of every run of the profiles --profile, names
// and, with selftest, the self-test's, in that order, each once.
func runImages(f *runFlags, names []string, selftest bool) ([]string, error) {
	if f.profile != "" {
		names = append([]string{f.profile}, names...)
	}
	if selftest {
		paths, err := selftestProfiles(f.profilesDir)
		if err != nil {
			return nil, err
		}
		names = append(names, paths...)
	}
	if len(names) == 0 {
		return nil, errors.New("name at least one profile (or --selftest)")
	}
	if f.o.Framework.TrafficImage == "" {
		return nil, errors.New("--traffic-image must not be empty")
	}
	cfg, err := profile.LoadConfig(f.o.ConfigPath)
	if err != nil {
		return nil, err
	}
	var images []string
	var errs []error
	for _, name := range names {
		path, err := profilePath(name, f.profilesDir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p, err := profile.Load(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, img := range p.RunImages(cfg, f.o.Framework.TrafficImage) {
			if !slices.Contains(images, img) {
				images = append(images, img)
			}
		}
	}
	return images, errors.Join(errs...)
}
