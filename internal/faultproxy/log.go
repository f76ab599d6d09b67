package faultproxy

import (
	"strings"
	"time"
)

// What the proxy saw: round trips and connections (Take), and every command with what became
// of it (Log).

// Take waits (briefly) for open connections to end, then returns the counts and zeroes them.
func (p *Proxy) Take() (trips map[string]int64, conns int64) {
	p.waitIdle()
	p.mu.Lock()
	defer p.mu.Unlock()
	trips, conns = p.trips, p.conns
	p.trips, p.conns = map[string]int64{}, 0
	return trips, conns
}

// waitIdle waits, for up to 3 seconds, until no connection is open.
func (p *Proxy) waitIdle() {
	done := make(chan struct{})
	go func() { p.active.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
	}
}

// Record is one command the proxy saw, and what became of it: whether it reached the server,
// whether the server's reply came back to the proxy (then the server ran it), and whether that
// reply, or an injected one, reached the client whole.
type Record struct {
	Conn    int64  // the proxy's number for the connection, from 1
	Command string // as the proxy names it: "XGROUP CREATE"
	// Args are the command's first arguments after its name (for XGROUP CREATE: key, group,
	// ID, MKSTREAM). HELLO and AUTH keep none: they carry passwords.
	Args   []string
	Key    string // the key it names, "" for none
	Action Action // what a fault did to it; 0 for none
	// Delay is how long the fault held the reply back (DelayReply's Fault.Delay), 0 for none:
	// a test that knows the client's timeout tells from it, not from a clock, whether the
	// reply came too late.
	Delay time.Duration
	// Before is how many events (Fault.Before) ran as the command arrived, before it was
	// passed on.
	Before    int
	Forwarded bool   // passed on to the server
	Ran       bool   // the server's reply reached the proxy: the server ran the command
	Reply     string // the first line of the reply the server (or Answer) gave, such as "+OK"
	Delivered bool   // the whole reply was written to the client
	// Took is the time from the command's arrival to its reply's delivery (or to the end of
	// the connection when it was never delivered).
	Took    time.Duration
	arrived time.Time
}

// KeepLog makes the proxy log every command from now on (it logs nothing unless asked, so that
// a long test does not hold every command it ever sent).
func (p *Proxy) KeepLog() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.logging = true
}

// Log returns the commands logged since the last Log (or since KeepLog), in the order they
// arrived, and forgets them. Like Take, it first waits briefly for open connections to end.
func (p *Proxy) Log() []Record {
	p.waitIdle()
	p.mu.Lock()
	defer p.mu.Unlock()
	log := p.log
	p.logBase += len(log)
	p.log = nil
	return log
}

// record adds what a connection read to the log and returns its index (-1 when the proxy
// keeps no log).
func (p *Proxy) record(conn int64, cmd command, f *Fault, events int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.logging {
		return -1
	}
	r := Record{Conn: conn, Command: cmd.name, Args: cmd.args, Key: cmd.key(), arrived: time.Now(), Before: events,
		Forwarded: f == nil || (f.Action != Answer && f.Action != Hang)}
	if f != nil {
		r.Action = f.Action
		if f.Action == DelayReply {
			r.Delay = f.Delay
		}
	}
	p.log = append(p.log, r)
	return p.logBase + len(p.log) - 1
}

// settle writes down what became of the command at index i.
func (p *Proxy) settle(i int, ran bool, reply []byte, delivered bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i -= p.logBase; i < 0 || i >= len(p.log) { // no log, or it was taken meanwhile
		return
	}
	r := &p.log[i]
	r.Ran, r.Delivered, r.Took = ran, delivered, time.Since(r.arrived)
	if n := indexCRLF(reply); n >= 0 {
		r.Reply = string(reply[:n])
	}
}

// unsettled marks what a connection never answered: its commands' replies were not delivered.
func (p *Proxy) unsettled(indexes []int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, i := range indexes {
		if i -= p.logBase; i >= 0 && i < len(p.log) && p.log[i].Took == 0 {
			p.log[i].Took = time.Since(p.log[i].arrived)
		}
	}
}

func indexCRLF(b []byte) int {
	for i := 0; i+1 < len(b); i++ {
		if b[i] == '\r' && b[i+1] == '\n' {
			return i
		}
	}
	return -1
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
