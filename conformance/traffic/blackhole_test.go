package traffic

import (
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/etcdproof/etcdproof/conformance/internal/etcdtest"
	"github.com/etcdproof/etcdproof/conformance/validate"
)

// blackholeProxy forwards TCP connections to a backend, as a Service does.
// Freeze makes the connections open at that moment go silent without
// closing, as connections to a member whose node stopped do; connections
// opened later are forwarded again.
type blackholeProxy struct {
	ln      net.Listener
	backend string
	mu      sync.Mutex
	frozen  []chan struct{}
}

func startBlackholeProxy(t *testing.T, backend string) *blackholeProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &blackholeProxy{ln: ln, backend: strings.TrimPrefix(backend, "http://")}
	t.Cleanup(func() { _ = ln.Close() })
	go p.serve()
	return p
}

func (p *blackholeProxy) addr() string { return p.ln.Addr().String() }

func (p *blackholeProxy) serve() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", p.backend)
		if err != nil {
			_ = in.Close()
			continue
		}
		stop := make(chan struct{})
		p.mu.Lock()
		p.frozen = append(p.frozen, stop)
		p.mu.Unlock()
		go pipeUntil(in, out, stop)
		go pipeUntil(out, in, stop)
	}
}

// pipeUntil copies src to dst until stop closes; after that it reads and
// drops everything, so the peer sees neither data nor a close.
func pipeUntil(src, dst net.Conn, stop chan struct{}) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if err != nil {
			return
		}
		select {
		case <-stop:
			continue
		default:
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			return
		}
	}
}

func (p *blackholeProxy) freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, stop := range p.frozen {
		close(stop)
	}
	p.frozen = nil
}

// A connection that goes silent (the member's node stopped) is given up
// and redialled within seconds, not after TCP's minutes: writes resume
// through the same address well within the node-loss write-gap budget.
func TestTrafficRedialsASilentConnection(t *testing.T) {
	proxy := startBlackholeProxy(t, etcdtest.Start(t))
	srv, err := Start(testConfig(proxy.addr()))
	if err != nil {
		t.Fatal(err)
	}
	rec := srv.Recorder()
	waitFor(t, "20 successful puts", func() bool { return rec.SuccessfulPuts() >= 20 })
	proxy.freeze()
	frozen := time.Now()
	before := rec.SuccessfulPuts()
	waitFor(t, "20 more successful puts after the connection went silent", func() bool { return rec.SuccessfulPuts() >= before+20 })
	resumed := time.Since(frozen)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	r := validate.Validate(rec.History(), validate.Options{Timeout: time.Minute, ClientErrors: validate.AllowClientErrors, MaxWriteGap: 15 * time.Second})
	if !r.Passed() {
		t.Fatalf("failures %q (writes resumed %s after the freeze)", r.Failures, resumed.Round(time.Millisecond))
	}
	t.Logf("writes resumed %s after the connection went silent; longest write gap %s", resumed.Round(time.Millisecond), r.Stats.LongestWriteGap.Round(time.Millisecond))
}
