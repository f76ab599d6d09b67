package faultproxy

// One client connection through the proxy: its commands go on to the server in order, each with
// the fault it draws, and the replies come back one by one, relayed, replaced or withheld.

import (
	"bufio"
	"net"
	"sync"
	"time"
)

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
