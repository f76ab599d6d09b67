// Package faultproxy is a TCP proxy for tests that sits between a client and a real valkey-server
// and injects faults into chosen commands (dropped, cut, delayed or replaced replies, hangs,
// refused dials), and a Valkey Cluster whose every node is reached only through one.
package faultproxy

import (
	"net"
	"sync"
	"testing"
)

// Proxy forwards loopback TCP to the server, counts round trips, logs every command, and
// injects faults (proxy_fault.go).
//
// Round trips: on each connection, client bytes that arrive when every command before them has
// been answered (or first) start a new round trip, so a pipeline written at once is one round
// trip, as on the wire, however the network splits it. The proxy parses the client's RESP
// (resp.go) to name the commands each round trip carried.
//
// Faults: the proxy passes each complete command on and relays the server's replies one by one,
// in order, so that a Fault can act on the reply of one command even inside a pipeline: swallow
// it and cut the connection (the command ran, its reply is lost), pass half of it on and cut,
// hold it back for a while, answer in the server's place with an error reply of the test's
// choosing, or never answer at all. A fault can also refuse connections.
//
// The log (proxy_log.go) says of every command whether it reached the server, whether the
// server ran it, and whether its reply reached the client.
type Proxy struct {
	addr   string
	target string
	active sync.WaitGroup

	mu      sync.Mutex
	ln      net.Listener
	closed  bool
	resumed chan struct{}    // while the proxy stops listening (Refuse): closed when it listens again
	trips   map[string]int64 // "XGROUP CREATE + XINFO GROUPS" -> round trips that carried exactly that
	conns   int64
	faults  []*Fault
	seen    map[*Fault]int
	hits    map[*Fault]int
	logging bool
	log     []Record
	logBase int // the index, since the start, of log[0]
}

// StartProxy listens on a free loopback port and forwards every connection to target.
func StartProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{addr: ln.Addr().String(), ln: ln, target: target, trips: map[string]int64{},
		seen: map[*Fault]int{}, hits: map[*Fault]int{}}
	go p.accept()
	return p, nil
}

// StartProxyT is StartProxy for one test: it fails the test if it cannot listen and closes the
// proxy when the test ends.
func StartProxyT(tb testing.TB, target string, faults ...Fault) *Proxy {
	tb.Helper()
	p, err := StartProxy(target)
	if err != nil {
		tb.Fatal(err)
	}
	p.Inject(faults...)
	tb.Cleanup(p.Close)
	return p
}

// Inject replaces the proxy's faults; connections already open use the new ones from their
// next command on. Inject() with no fault makes the proxy faithful again. When a Refuse fault
// has stopped the proxy listening, Inject first waits until it listens again.
func (p *Proxy) Inject(faults ...Fault) {
	p.mu.Lock()
	for p.resumed != nil {
		resumed := p.resumed
		p.mu.Unlock()
		<-resumed
		p.mu.Lock()
	}
	defer p.mu.Unlock()
	p.faults = p.faults[:0]
	for i := range faults {
		f := faults[i]
		p.faults = append(p.faults, &f)
	}
	p.seen, p.hits = map[*Fault]int{}, map[*Fault]int{}
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.addr }

// URL is the valkey:// URL of database 0 through the proxy.
func (p *Proxy) URL() string { return "valkey://" + p.Addr() + "/0" }

// Close stops accepting connections.
func (p *Proxy) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	_ = p.ln.Close()
}

func (p *Proxy) accept() {
	for {
		p.mu.Lock()
		ln := p.ln
		p.mu.Unlock()
		client, err := ln.Accept()
		if err != nil {
			p.mu.Lock()
			closed, resumed := p.closed, p.resumed
			p.mu.Unlock()
			if closed {
				return
			}
			if resumed != nil {
				<-resumed // Refuse stopped listening for a while
			}
			continue
		}
		if p.refused(client) {
			continue
		}
		p.active.Add(1)
		go p.relay(client)
	}
}
