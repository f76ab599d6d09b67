package valkeytest

import (
	"bufio"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// Proxy forwards loopback TCP to the server, counts round trips, and injects faults.
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
// choosing, or never answer at all.
type Proxy struct {
	ln     net.Listener
	target string
	active sync.WaitGroup

	mu     sync.Mutex
	trips  map[string]int64 // "XGROUP CREATE + XINFO GROUPS" -> round trips that carried exactly that
	conns  int64
	faults []*Fault
	hits   map[*Fault]int
}

// Action is what a Fault does to the reply of a command it matches.
type Action int

const (
	// DropReply passes the command on to the server, swallows its reply and cuts the client's
	// connection: the command ran, and the client never learns how it went.
	DropReply Action = iota + 1
	// CutReply passes the command on and the first half of its reply back, then cuts the
	// client's connection in the middle of the reply.
	CutReply
	// DelayReply passes the command on and holds its reply back for Fault.Delay.
	DelayReply
	// Answer does not pass the command on: the client gets Fault.Reply as an error reply
	// ("LOADING Valkey is loading the dataset in memory"), as if the server had said it.
	Answer
	// Hang does not pass the command on and never answers it (nor anything after it on the
	// connection): a server that accepts and never replies.
	Hang
)

// Fault acts on the replies of the commands it matches.
type Fault struct {
	// Command is the command as the proxy names it: "XGROUP CREATE", "XINFO GROUPS", "HELLO",
	// "SELECT", "WAIT". Empty matches every command.
	Command string
	Action  Action
	Reply   string        // Answer's error reply, without the leading "-"
	Delay   time.Duration // DelayReply's delay
	// Times is how many matches the fault acts on; 0 means every one.
	Times int
}

// StartProxy listens on a free loopback port and forwards every connection to target.
func StartProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, trips: map[string]int64{}, hits: map[*Fault]int{}}
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
// next command on. Inject() with no fault makes the proxy faithful again.
func (p *Proxy) Inject(faults ...Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = p.faults[:0]
	for i := range faults {
		f := faults[i]
		p.faults = append(p.faults, &f)
	}
	p.hits = map[*Fault]int{}
}

// Hits is how many commands the proxy's faults have acted on so far.
func (p *Proxy) Hits() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, h := range p.hits {
		n += h
	}
	return n
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// URL is the valkey:// URL of database 0 through the proxy.
func (p *Proxy) URL() string { return "valkey://" + p.Addr() + "/0" }

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

// match is the fault that acts on command, counting the hit, or nil.
func (p *Proxy) match(command string) *Fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range p.faults {
		if (f.Command == "" || f.Command == command) && (f.Times == 0 || p.hits[f] < f.Times) {
			p.hits[f]++
			return f
		}
	}
	return nil
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

// pending is one command on its way: its reply is relayed (or replaced) in order.
type pending struct {
	fault *Fault // nil: relay the reply as it is
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

	c := &proxyConn{proxy: p, client: client, server: server, queue: make(chan pending, 1024)}
	go c.replies()
	c.requests()
}

type proxyConn struct {
	proxy          *Proxy
	client, server net.Conn
	queue          chan pending

	mu          sync.Mutex
	outstanding int // commands passed on whose replies the client has not had yet
	trip        []string
	tripBegun   bool
}

// requests reads the client's commands, forwards the ones no fault holds back, and queues one
// entry per command for replies.
func (c *proxyConn) requests() {
	defer close(c.queue)
	defer c.finishTrip()
	var buf []byte
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
				name, used := parseCommand(buf)
				if used == 0 {
					break
				}
				c.mu.Lock()
				c.trip = append(c.trip, name)
				c.outstanding++
				c.mu.Unlock()
				f := c.proxy.match(name)
				if f == nil || (f.Action != Answer && f.Action != Hang) {
					forward = append(forward, buf[:used]...)
				}
				c.queue <- pending{fault: f}
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

// replies relays the server's replies to the client in command order, acting on faults.
func (c *proxyConn) replies() {
	defer func() { _ = c.client.Close() }()
	rd := bufio.NewReader(c.server)
	for entry := range c.queue {
		f := entry.fault
		if f != nil && f.Action == Hang {
			for range c.queue { // answer nothing, ever, until the client goes away
			}
			return
		}
		var reply []byte
		if f != nil && f.Action == Answer {
			reply = []byte("-" + f.Reply + "\r\n")
		} else {
			var err error
			if reply, err = readReply(rd); err != nil {
				return
			}
		}
		switch {
		case f == nil || f.Action == Answer:
		case f.Action == DropReply:
			c.cutClient()
			return
		case f.Action == CutReply:
			_, _ = c.client.Write(reply[:len(reply)/2])
			c.cutClient()
			return
		case f.Action == DelayReply:
			time.Sleep(f.Delay)
		}
		if c.write(reply) != nil {
			return
		}
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

func (c *proxyConn) finishTrip() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.finishTripLocked()
}

func (c *proxyConn) finishTripLocked() {
	if c.tripBegun && len(c.trip) > 0 {
		c.proxy.mu.Lock()
		c.proxy.trips[strings.Join(c.trip, " + ")]++
		c.proxy.mu.Unlock()
	}
	c.trip, c.tripBegun = nil, true
}
