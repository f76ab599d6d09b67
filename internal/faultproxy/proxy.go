// Package faultproxy is a TCP proxy for tests that sits between a client and a real valkey-server
// and injects faults into chosen commands (dropped, cut, delayed or replaced replies, hangs,
// refused dials), and a Valkey Cluster whose every node is reached only through one.
package faultproxy

import (
	"bufio"
	"net"
	"sync"
	"testing"
	"time"
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

// pending is one command on its way: its reply is relayed (or replaced) in order.
type pending struct {
	fault *Fault // nil: relay the reply as it is
	index int    // in the log
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
	conn := p.conns
	p.mu.Unlock()

	c := &proxyConn{proxy: p, id: conn, client: client, server: server, queue: make(chan pending, 1024)}
	c.relayed = sync.NewCond(&c.mu)
	go c.replies()
	c.requests()
}

type proxyConn struct {
	proxy          *Proxy
	id             int64
	client, server net.Conn
	queue          chan pending

	mu          sync.Mutex
	outstanding int // commands passed on whose replies the client has not had yet
	trip        []string
	tripBegun   bool
	answered    int        // commands whose replies replies has dealt with: relayed, replaced or lost
	stopped     bool       // replies relays nothing more
	relayed     *sync.Cond // on mu: answered or stopped changed
}

// requests reads the client's commands, forwards the ones no fault holds back, and queues one
// entry per command for replies.
func (c *proxyConn) requests() {
	defer close(c.queue)
	defer c.finishTrip()
	var buf []byte
	queued := 0
	chunk := make([]byte, 64<<10)
	for {
		n, err := c.client.Read(chunk)
		if n > 0 {
			c.mu.Lock()
			if c.outstanding == 0 {
				c.finishTripLocked()
			}
			c.mu.Unlock()
			buf = append(buf, chunk[:n]...)
			var forward []byte
			for {
				cmd, used := parseCommand(buf)
				if used == 0 {
					break
				}
				c.mu.Lock()
				c.trip = append(c.trip, cmd.name)
				c.outstanding++
				c.mu.Unlock()
				f, events := c.proxy.matchCommand(cmd)
				if len(events) > 0 {
					// An event runs right before the command is passed on: what came before it on
					// the connection has been passed on and answered. The command is logged
					// first, so that what arrives meanwhile on other connections comes after it.
					if len(forward) > 0 {
						if _, werr := c.server.Write(forward); werr != nil {
							return
						}
						forward = nil
					}
					c.waitAnswered(queued)
				}
				index := c.proxy.record(c.id, cmd, f, len(events))
				for _, event := range events {
					event()
				}
				if f == nil || (f.Action != Answer && f.Action != Hang) {
					forward = append(forward, buf[:used]...)
				}
				c.queue <- pending{fault: f, index: index}
				queued++
				buf = buf[used:]
			}
			if len(forward) > 0 {
				if _, werr := c.server.Write(forward); werr != nil {
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// replies relays the server's replies to the client in command order, acting on faults. What
// it never answers stays undelivered in the log.
func (c *proxyConn) replies() {
	var unanswered []int
	defer func() { _ = c.client.Close() }()
	defer func() {
		for entry := range c.queue { // until the client goes away
			unanswered = append(unanswered, entry.index)
		}
		c.proxy.unsettled(unanswered)
	}()
	defer c.stop()
	rd := bufio.NewReader(c.server)
	for entry := range c.queue {
		f := entry.fault
		if f != nil && f.Action == Hang {
			unanswered = append(unanswered, entry.index)
			return // answer nothing, ever, until the client goes away
		}
		var reply []byte
		ran := f == nil || f.Action != Answer
		if ran {
			var err error
			if reply, err = readReply(rd); err != nil {
				unanswered = append(unanswered, entry.index)
				_ = c.client.Close() // the server went away: so does the client's connection
				return
			}
		} else {
			reply = []byte("-" + f.Reply + "\r\n")
		}
		switch {
		case f == nil || f.Action == Answer:
		case f.Action == DropReply:
			c.proxy.settle(entry.index, ran, reply, false)
			c.cutClient()
			return
		case f.Action == CutReply:
			_, _ = c.client.Write(reply[:len(reply)/2])
			c.proxy.settle(entry.index, ran, reply, false)
			c.cutClient()
			return
		case f.Action == DelayReply:
			time.Sleep(f.Delay)
		case f.Action == DropFields:
			reply = withoutFields(reply, f.Fields)
		}
		err := c.write(reply)
		c.proxy.settle(entry.index, ran, reply, err == nil)
		if err != nil {
			_ = c.client.Close()
			return
		}
		c.mu.Lock()
		c.answered++
		c.relayed.Broadcast()
		c.mu.Unlock()
	}
}

// stop tells waitAnswered that replies relays nothing more.
func (c *proxyConn) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	c.relayed.Broadcast()
}

// waitAnswered waits until replies has dealt with the first n commands of the connection, or
// relays nothing more.
func (c *proxyConn) waitAnswered(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.answered < n && !c.stopped {
		c.relayed.Wait()
	}
}

// write relays one whole reply to the client. The command counts as answered before the
// reply is written: a client that reads it may write its next command at once, and that
// command must find nothing outstanding, or it would join this round trip.
func (c *proxyConn) write(b []byte) error {
	c.mu.Lock()
	c.outstanding--
	c.mu.Unlock()
	_, err := c.client.Write(b)
	return err
}

// cutClient ends the client's connection at once (a reset, not an orderly close), as a broken
// network or a killed server would.
func (c *proxyConn) cutClient() {
	if tcp, ok := c.client.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = c.client.Close()
	_ = c.server.Close()
}
