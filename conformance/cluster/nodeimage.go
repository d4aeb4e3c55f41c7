package cluster

import (
	"errors"
	"fmt"
	"os"

	"sigs.k8s.io/kind/pkg/build/nodeimage"
	kindcmd "sigs.k8s.io/kind/pkg/cmd"
)

// NodeImage is a kind node image to build from Kubernetes release
// artifacts, as `kind build node-image --type file` does.
type NodeImage struct {
	// ServerTarball is a kubernetes-server-linux-<arch>.tar.gz.
	ServerTarball string
	// BaseImage is the kind base image the node starts from.
	BaseImage string
	// Image is the tag of the node image built.
	Image string
}

// BuildNodeImage builds n with kind's node-image builder as a library, so
// that no kind binary is needed here either.
func BuildNodeImage(n NodeImage) error {
	if n.ServerTarball == "" || n.BaseImage == "" || n.Image == "" {
		return errors.New("a node image needs a server tarball, a base image and an image tag")
	}
	// kind's tarball builder extracts the server tarball (≈850 MB) into a
	// folder of os.TempDir() that it never removes: point it at one of ours
	// and remove that, or every build leaves a gigabyte behind.
	scratch, err := os.MkdirTemp("", "etcdproof-node-image-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(scratch) }()
	if prev, had := os.LookupEnv("TMPDIR"); had {
		defer func() { _ = os.Setenv("TMPDIR", prev) }()
	} else {
		defer func() { _ = os.Unsetenv("TMPDIR") }()
	}
	if err := os.Setenv("TMPDIR", scratch); err != nil {
		return err
	}
	if err := nodeimage.Build(
		nodeimage.WithKubeParam(n.ServerTarball),
		nodeimage.WithBuildType("file"),
		nodeimage.WithBaseImage(n.BaseImage),
		nodeimage.WithImage(n.Image),
		nodeimage.WithLogger(kindcmd.NewLogger()),
	); err != nil {
		return fmt.Errorf("building node image %s from %s: %w", n.Image, n.ServerTarball, err)
	}
	return nil
}
