package main

import (
	"bytes"
	"io"
	"net"
	"strconv"
	"sync"
)

// tripProxy relays loopback TCP to one server and counts the round trips of the provider's
// connections: a round trip begins when the client writes after the server last wrote (or
// first). It reads no command, so it also relays what valkeytest's proxy cannot: a replica's
// replication stream, which reaches a primary through its announced address, here the proxy's.
// Only connections that open with HELLO (go-redis's handshake; a replica opens with PING) are
// counted. A pipeline larger than one TCP read whose first part the server answers before the
// rest arrives would count twice; EnsureGroup's and the plan's pipelines are a few hundred bytes.
type tripProxy struct {
	target string
	ln     net.Listener
	port   int
	wg     sync.WaitGroup

	mu    sync.Mutex
	trips int64
	conns int64
	open  map[net.Conn]bool // both ends of every relayed connection, closed by close
}

func startTripProxy(target string) (*tripProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	p := &tripProxy{target: target, ln: ln, open: map[net.Conn]bool{}}
	if p.port, err = strconv.Atoi(port); err != nil {
		_ = ln.Close()
		return nil, err
	}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Port is where clients connect.
func (p *tripProxy) Port() int { return p.port }

func (p *tripProxy) Addr() string { return p.ln.Addr().String() }

// take returns the round trips and provider connections counted since the last take.
func (p *tripProxy) take() (trips, conns int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	trips, conns, p.trips, p.conns = p.trips, p.conns, 0, 0
	return trips, conns
}

// close stops listening and ends every relayed connection (a replica's would last forever).
func (p *tripProxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	for c := range p.open {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// track records c as open, or forgets it.
func (p *tripProxy) track(c net.Conn, open bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if open {
		p.open[c] = true
	} else {
		delete(p.open, c)
	}
}

func (p *tripProxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go p.relay(client)
	}
}

// tripConn is one relayed connection's count: answered is true once the server has written
// since the client last did.
type tripConn struct {
	p        *tripProxy
	mu       sync.Mutex
	counted  bool // a provider connection (it opened with HELLO)
	started  bool
	answered bool
}

func (p *tripProxy) relay(client net.Conn) {
	defer p.wg.Done()
	defer func() { _ = client.Close() }()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer func() { _ = server.Close() }()
	p.track(client, true)
	p.track(server, true)
	defer p.track(client, false)
	defer p.track(server, false)
	c := &tripConn{p: p, answered: true}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.copy(client, server, false) // the server's replies
		_ = client.Close()
	}()
	c.copy(server, client, true)
	_ = server.Close()
	<-done
}

// copy relays src to dst; fromClient tells the direction. The mark is made before the bytes
// are passed on: the other side may answer at once.
func (c *tripConn) copy(dst io.Writer, src io.Reader, fromClient bool) {
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			c.mark(buf[:n], fromClient)
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (c *tripConn) mark(b []byte, fromClient bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !fromClient {
		c.answered = true
		return
	}
	if !c.started {
		c.started = true
		c.counted = bytes.Contains(bytes.ToLower(b), []byte("hello"))
		if c.counted {
			c.p.mu.Lock()
			c.p.conns++
			c.p.mu.Unlock()
		}
	}
	if c.answered && c.counted {
		c.p.mu.Lock()
		c.p.trips++
		c.p.mu.Unlock()
	}
	c.answered = false
}
