// Package socks5test is a SOCKS5 proxy (RFC 1928, CONNECT only, with optional RFC 1929
// user/password) that tests start on loopback. It records every connection it carries, so a
// test can tell that nothing went around it. (No SOCKS5 server library is served by the Go
// module proxy here; this is the least a test needs.)
package socks5test

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
)

// Conn is one connection the proxy carried.
type Conn struct {
	Target string // host:port as the client asked for it: a name stays a name (resolved here)
	Local  string // the proxy's own address on its connection to the target, as the target sees the peer
}

// Proxy is a running SOCKS5 proxy.
type Proxy struct {
	Addr           string
	user, password string
	refuse         byte // a reply code other than 0: every CONNECT is refused with it
	ln             net.Listener
	mu             sync.Mutex
	conns          []Conn
	wg             sync.WaitGroup
}

// StartT starts a proxy for one test, asking for user and password unless user is "", and stops
// it when the test ends.
func StartT(tb testing.TB, user, password string) *Proxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &Proxy{Addr: ln.Addr().String(), user: user, password: password, ln: ln}
	p.wg.Add(1)
	go p.serve()
	tb.Cleanup(func() { _ = ln.Close(); p.wg.Wait() })
	return p
}

// ReplyNotAllowed is the SOCKS5 reply "connection not allowed by ruleset" (RFC 1928), what a
// proxy answers a CONNECT its rules forbid.
const ReplyNotAllowed byte = 2

// StartRefusingT starts a proxy for one test that takes no credentials and answers every
// CONNECT with reply, carrying nothing.
func StartRefusingT(tb testing.TB, reply byte) *Proxy {
	tb.Helper()
	p := StartT(tb, "", "")
	p.mu.Lock()
	p.refuse = reply
	p.mu.Unlock()
	return p
}

// Conns are the connections carried so far.
func (p *Proxy) Conns() []Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Conn(nil), p.conns...)
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.handle(c)
	}
}

func (p *Proxy) handle(c net.Conn) {
	defer c.Close()
	target, err := p.handshake(c)
	if err != nil {
		return
	}
	p.mu.Lock()
	refuse := p.refuse
	p.mu.Unlock()
	if refuse != 0 {
		_, _ = c.Write([]byte{5, refuse, 0, 1, 0, 0, 0, 0, 0, 0})
		return
	}
	upstream, err := net.Dial("tcp", target)
	if err != nil {
		_, _ = c.Write([]byte{5, 5, 0, 1, 0, 0, 0, 0, 0, 0}) // connection refused
		return
	}
	defer upstream.Close()
	p.mu.Lock()
	p.conns = append(p.conns, Conn{Target: target, Local: upstream.LocalAddr().String()})
	p.mu.Unlock()
	if _, err := c.Write([]byte{5, 0, 0, 1, 0, 0, 0, 0, 0, 0}); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(upstream, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, upstream); done <- struct{}{} }()
	<-done
}

var errRefused = errors.New("socks5: refused")

// handshake reads the greeting, the authentication and the CONNECT request, and returns its
// target.
func (p *Proxy) handshake(c net.Conn) (string, error) {
	head := make([]byte, 2)
	if _, err := io.ReadFull(c, head); err != nil || head[0] != 5 {
		return "", errRefused
	}
	methods := make([]byte, head[1])
	if _, err := io.ReadFull(c, methods); err != nil {
		return "", err
	}
	want := byte(0) // no authentication
	if p.user != "" {
		want = 2 // user/password
	}
	if !contains(methods, want) {
		_, _ = c.Write([]byte{5, 0xff})
		return "", errRefused
	}
	if _, err := c.Write([]byte{5, want}); err != nil {
		return "", err
	}
	if want == 2 {
		user, password, err := readUserPassword(c)
		if err != nil {
			return "", err
		}
		if user != p.user || password != p.password {
			_, _ = c.Write([]byte{1, 1})
			return "", errRefused
		}
		if _, err := c.Write([]byte{1, 0}); err != nil {
			return "", err
		}
	}
	req := make([]byte, 4)
	if _, err := io.ReadFull(c, req); err != nil || req[0] != 5 || req[1] != 1 {
		return "", errRefused
	}
	var host string
	switch req[3] {
	case 1, 4: // IPv4, IPv6
		ip := make([]byte, map[byte]int{1: 4, 4: 16}[req[3]])
		if _, err := io.ReadFull(c, ip); err != nil {
			return "", err
		}
		host = net.IP(ip).String()
	case 3: // a name, resolved here
		n := make([]byte, 1)
		if _, err := io.ReadFull(c, n); err != nil {
			return "", err
		}
		name := make([]byte, n[0])
		if _, err := io.ReadFull(c, name); err != nil {
			return "", err
		}
		host = string(name)
	default:
		return "", errRefused
	}
	port := make([]byte, 2)
	if _, err := io.ReadFull(c, port); err != nil {
		return "", err
	}
	return net.JoinHostPort(host, strconv.Itoa(int(binary.BigEndian.Uint16(port)))), nil
}

func readUserPassword(c net.Conn) (string, string, error) {
	read := func() (string, error) {
		n := make([]byte, 1)
		if _, err := io.ReadFull(c, n); err != nil {
			return "", err
		}
		b := make([]byte, n[0])
		_, err := io.ReadFull(c, b)
		return string(b), err
	}
	version := make([]byte, 1)
	if _, err := io.ReadFull(c, version); err != nil || version[0] != 1 {
		return "", "", errRefused
	}
	user, err := read()
	if err != nil {
		return "", "", err
	}
	password, err := read()
	return user, password, err
}

func contains(b []byte, v byte) bool {
	for _, x := range b {
		if x == v {
			return true
		}
	}
	return false
}
