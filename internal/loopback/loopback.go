// Package loopback gives tests addresses on which to run real etcd members
// and other servers whose address must be known before they listen.
//
// The usual trick, listening on 127.0.0.1:0 and closing the listener to learn
// a free port, races: until the server binds it, the kernel may hand the same
// port to any outgoing connection of this process or of a test package running
// beside it (CI saw "bind: address already in use" that way). Here every
// address is instead its own loopback IP, drawn at random from 127.0.0.0/8
// (Linux routes all of it to lo), with a fixed port below the ephemeral range,
// which the kernel never hands out on its own.
package loopback

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"testing"
)

// Port is the port of every address; it is etcd's client port, below the
// kernel's ephemeral range (32768 and up by default).
const Port = 2379

// Addr returns host:port on a loopback IP no other address from this package
// has, and on which nothing listens yet. IPs 127.0.x.x are left out: they hold
// 127.0.0.1 and the per-pod addresses some tests hand out in order.
func Addr(t testing.TB) string {
	t.Helper()
	for range 100 {
		ip := net.IPv4(127, byte(1+rand.IntN(254)), byte(rand.IntN(256)), byte(1+rand.IntN(254)))
		addr := net.JoinHostPort(ip.String(), fmt.Sprint(Port))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			continue // taken by a test beside us: draw again
		}
		_ = l.Close()
		return addr
	}
	t.Fatal("no free loopback address in 100 draws: does this system route 127.0.0.0/8 to lo?")
	return ""
}

// URL is Addr as an http URL, the form etcd's embed.Config takes.
func URL(t testing.TB) url.URL {
	t.Helper()
	return url.URL{Scheme: "http", Host: Addr(t)}
}

// HTTP is URL as a string: "http://127.a.b.c:2379".
func HTTP(t testing.TB) string {
	t.Helper()
	return "http://" + Addr(t)
}
