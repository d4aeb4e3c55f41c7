package controller_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// memberDNS answers A queries for member host names (desired.MemberHost:
// <pod>.<cluster>.<namespace>.svc) the way cluster DNS does for a headless
// Service. Real etcd members advertise those names and dial each other
// through them, so the tests' members need them to resolve; the test
// process's resolver is pointed here (useMemberDNS), and every other name
// gets NXDOMAIN.
type memberDNS struct {
	mu    sync.Mutex
	hosts map[string]net.IP // fully qualified, lower case, with the trailing dot
	conn  net.PacketConn
}

var (
	dnsOnce   sync.Once
	dnsServer *memberDNS
)

// useMemberDNS starts the in-process DNS server once and makes the process's
// default resolver (which etcd's URL checks and peer dials use) ask it.
func useMemberDNS(t *testing.T) *memberDNS {
	t.Helper()
	dnsOnce.Do(func() {
		conn, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("starting the test DNS server: %v", err)
		}
		dnsServer = &memberDNS{hosts: map[string]net.IP{}, conn: conn}
		go dnsServer.serve()
		addr := conn.LocalAddr().String()
		net.DefaultResolver.PreferGo = true
		net.DefaultResolver.Dial = func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "udp", addr)
		}
	})
	if dnsServer == nil {
		t.Fatal("the test DNS server did not start")
	}
	return dnsServer
}

func (d *memberDNS) set(host string, ip net.IP) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.hosts[strings.ToLower(strings.TrimSuffix(host, "."))+"."] = ip
}

func (d *memberDNS) lookup(name string) (net.IP, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	ip, ok := d.hosts[strings.ToLower(name)]
	return ip, ok
}

func (d *memberDNS) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := d.conn.ReadFrom(buf)
		if err != nil {
			return
		}
		if reply, err := d.answer(buf[:n]); err == nil {
			_, _ = d.conn.WriteTo(reply, from)
		}
	}
}

// answer builds the reply to one query: the A record of a known host, an
// empty answer for its other record types, NXDOMAIN for unknown names.
func (d *memberDNS) answer(query []byte) ([]byte, error) {
	var p dnsmessage.Parser
	hdr, err := p.Start(query)
	if err != nil {
		return nil, err
	}
	q, err := p.Question()
	if err != nil {
		return nil, err
	}
	ip, known := d.lookup(q.Name.String())
	rcode := dnsmessage.RCodeSuccess
	if !known {
		rcode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: hdr.ID, Response: true, Authoritative: true, RCode: rcode})
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, err
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	if known && q.Type == dnsmessage.TypeA {
		var a dnsmessage.AResource
		copy(a.A[:], ip.To4())
		if err := b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 1}, a); err != nil {
			return nil, err
		}
	}
	return b.Finish()
}
