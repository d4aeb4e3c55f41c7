// Command imagecheck proves that an image built under an upstream name has
// the upstream image's shape: the config and files its release's own
// Dockerfile gives it, on a base with the same traits (a distroless base has
// no shell). Operators that exec a shell in an etcd container must fail here
// as they would on a real cluster, so the images must not be kinder.
//
// usage: imagecheck --image REF --dockerfile FILE --base LOCAL_BASE_IMAGE
package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"strings"
)

func main() {
	image := flag.String("image", "", "the image to check")
	dockerfile := flag.String("dockerfile", "", "the upstream Dockerfile it was built from")
	base := flag.String("base", "", "the local image its FROM line was pointed at")
	flag.Parse()
	if *image == "" || *dockerfile == "" || *base == "" {
		fmt.Fprintln(os.Stderr, "usage: imagecheck --image REF --dockerfile FILE --base LOCAL_BASE_IMAGE")
		os.Exit(2)
	}
	if err := run(*image, *dockerfile, *base); err != nil {
		fmt.Fprintf(os.Stderr, "imagecheck: %s: %v\n", *image, err)
		os.Exit(1)
	}
	fmt.Printf("%s has the shape of %s\n", *image, *dockerfile)
}

func run(image, dockerfile, base string) error {
	shape, err := ShapeOf(base)
	if err != nil {
		return err
	}
	f, err := os.Open(dockerfile)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	want, err := ParseDockerfile(f)
	if err != nil {
		return fmt.Errorf("%s: %w", dockerfile, err)
	}
	img, err := inspect(image)
	if err != nil {
		return err
	}
	problems := Check(want, shape, img)
	// What a user sees: `docker run --entrypoint /bin/sh` works exactly where
	// the upstream image has a shell.
	out, runErr := exec.Command("docker", "run", "--rm", "--entrypoint", "/bin/sh", image, "-c", "true").CombinedOutput()
	switch {
	case shape == Distroless && runErr == nil:
		problems = append(problems, "docker run --entrypoint /bin/sh succeeded: the image has a shell")
	case shape == Distroless && !strings.Contains(string(out), "no such file"):
		problems = append(problems, fmt.Sprintf("docker run --entrypoint /bin/sh failed for another reason than a missing shell: %s", out))
	case shape == Debian && runErr != nil:
		problems = append(problems, fmt.Sprintf("docker run --entrypoint /bin/sh failed: %s", out))
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n  "))
	}
	return nil
}

// inspect reads the image's config and exports its filesystem.
func inspect(image string) (Image, error) {
	out, err := exec.Command("docker", "image", "inspect", image).Output()
	if err != nil {
		return Image{}, fmt.Errorf("docker image inspect: %w", err)
	}
	var cfgs []struct {
		Config struct {
			Cmd, Entrypoint []string
			WorkingDir      string
			User            string
			ExposedPorts    map[string]struct{}
		}
	}
	if err := json.Unmarshal(out, &cfgs); err != nil || len(cfgs) != 1 {
		return Image{}, fmt.Errorf("docker image inspect: unexpected output: %v", err)
	}
	c := cfgs[0].Config
	img := Image{Cmd: c.Cmd, Entrypoint: c.Entrypoint, WorkingDir: c.WorkingDir, User: c.User}
	for p := range c.ExposedPorts {
		img.Ports = append(img.Ports, p)
	}
	id, err := exec.Command("docker", "create", image).Output()
	if err != nil {
		return Image{}, fmt.Errorf("docker create: %w", err)
	}
	container := strings.TrimSpace(string(id))
	defer func() { _ = exec.Command("docker", "rm", container).Run() }()
	var exported bytes.Buffer
	cmd := exec.Command("docker", "export", container)
	cmd.Stdout = &exported
	if err := cmd.Run(); err != nil {
		return Image{}, fmt.Errorf("docker export: %w", err)
	}
	img.Files, err = readFiles(&exported)
	return img, err
}

// readFiles lists a filesystem tar, keeping small /etc files' content.
func readFiles(r io.Reader) (map[string]File, error) {
	files := map[string]File{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		p := path.Clean("/" + h.Name)
		f := File{Mode: h.FileInfo().Mode(), Link: h.Linkname}
		if h.Typeflag == tar.TypeReg && strings.HasPrefix(p, "/etc/") && h.Size < 64<<10 {
			b, err := io.ReadAll(tr)
			if err != nil {
				return nil, err
			}
			f.Content = string(b)
		}
		files[p] = f
	}
}
