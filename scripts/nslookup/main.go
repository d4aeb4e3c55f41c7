// Command nslookup resolves a name the way glibc programs do: through
// /etc/resolv.conf with its search domains and ndots, which Go's resolver
// honours. The workload busybox image ships it because busybox's own nslookup
// ignores search domains for dotted names (etcd-0.example.default.svc), and
// operators' DNS-check init containers loop on it.
//
// usage: nslookup NAME   exit 0 and print the addresses when NAME resolves.
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, net.DefaultResolver))
}

type hostResolver interface {
	LookupHost(ctx context.Context, host string) ([]string, error)
}

func run(args []string, stdout, stderr io.Writer, r hostResolver) int {
	if len(args) < 1 || len(args) > 2 {
		fmt.Fprintln(stderr, "usage: nslookup NAME [SERVER]  (SERVER is ignored: /etc/resolv.conf decides)")
		return 2
	}
	name := args[0]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	addrs, err := r.LookupHost(ctx, name)
	if err != nil {
		fmt.Fprintf(stderr, "nslookup: can't resolve '%s': %v\n", name, err)
		return 1
	}
	fmt.Fprintf(stdout, "Name:      %s\n", name)
	for i, a := range addrs {
		fmt.Fprintf(stdout, "Address %d: %s\n", i+1, a)
	}
	return 0
}
