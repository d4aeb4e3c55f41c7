package cluster

import (
	"errors"
	"fmt"

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
