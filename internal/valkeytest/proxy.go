package valkeytest

import (
	"bytes"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy forwards loopback TCP to the server and counts round trips: on each
// connection, client bytes that arrive after the server last spoke (or first) start a new
// round trip. A pipeline written at once is one round trip, as on the wire. It also parses
// the client's RESP to name the commands each round trip carried.
type Proxy struct {
	ln     net.Listener
	target string
	active sync.WaitGroup

	mu    sync.Mutex
	trips map[string]int64 // "XGROUP CREATE + XINFO GROUPS" -> round trips that carried exactly that
	conns int64
}

// StartProxy listens on a free loopback port and forwards every connection to target.
func StartProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, trips: map[string]int64{}}
	go p.accept()
	return p, nil
}

// StartProxyT is StartProxy for one test: it fails the test if it cannot listen and closes the
// proxy when the test ends.
func StartProxyT(tb testing.TB, target string) *Proxy {
	tb.Helper()
	p, err := StartProxy(target)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(p.Close)
	return p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Close stops accepting connections.
func (p *Proxy) Close() { _ = p.ln.Close() }

// Take waits (briefly) for open connections to end, then returns the counts and zeroes them.
func (p *Proxy) Take() (trips map[string]int64, conns int64) {
	done := make(chan struct{})
	go func() { p.active.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	trips, conns = p.trips, p.conns
	p.trips, p.conns = map[string]int64{}, 0
	return trips, conns
}

func (p *Proxy) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.active.Add(1)
		go p.relay(client)
	}
}

func (p *Proxy) relay(client net.Conn) {
	defer p.active.Done()
	defer func() { _ = client.Close() }()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer func() { _ = server.Close() }()
	p.mu.Lock()
	p.conns++
	p.mu.Unlock()
	var serverSpoke atomic.Bool
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := server.Read(buf)
			if n > 0 {
				serverSpoke.Store(true)
				if _, werr := client.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				_ = client.Close()
				return
			}
		}
	}()
	var (
		pending []byte
		trip    []string
		started bool
	)
	finish := func() {
		if started {
			p.mu.Lock()
			p.trips[strings.Join(trip, " + ")]++
			p.mu.Unlock()
		}
		trip, started = nil, true
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := client.Read(buf)
		if n > 0 {
			if serverSpoke.Swap(false) || !started {
				finish()
			}
			pending = append(pending, buf[:n]...)
			for {
				name, used := parseCommand(pending)
				if used == 0 {
					break
				}
				trip = append(trip, name)
				pending = pending[used:]
			}
			if _, werr := server.Write(buf[:n]); werr != nil {
				finish()
				return
			}
		}
		if err != nil {
			finish()
			return
		}
	}
}

// parseCommand reads one RESP array of bulk strings from b and names it (the command, plus
// the subcommand for container commands). used is 0 when b holds no complete command yet.
func parseCommand(b []byte) (name string, used int) {
	line := func(at int) (string, int) {
		i := bytes.Index(b[at:], []byte("\r\n"))
		if i < 0 {
			return "", -1
		}
		return string(b[at : at+i]), at + i + 2
	}
	head, at := line(0)
	if at < 0 || !strings.HasPrefix(head, "*") {
		if at < 0 {
			return "", 0
		}
		return "INLINE", at // an inline command, as a bare PING might be
	}
	n, _ := strconv.Atoi(head[1:])
	var args []string
	for range n {
		var h string
		h, at = line(at)
		if at < 0 {
			return "", 0
		}
		size, _ := strconv.Atoi(strings.TrimPrefix(h, "$"))
		if len(b) < at+size+2 {
			return "", 0
		}
		if len(args) < 2 {
			args = append(args, string(b[at:at+size]))
		}
		at += size + 2
	}
	if len(args) == 0 {
		return "EMPTY", at
	}
	cmd := strings.ToUpper(args[0])
	switch cmd {
	case "XGROUP", "XINFO", "CONFIG", "CLIENT", "CLUSTER", "OBJECT", "MEMORY":
		if len(args) > 1 {
			cmd += " " + strings.ToUpper(args[1])
		}
	}
	return cmd, at
}
