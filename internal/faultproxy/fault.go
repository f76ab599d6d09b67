package faultproxy

import (
	"net"
	"strings"
	"time"
)

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
	// Refuse acts on connections, not commands: the connection it matches is reset as it
	// opens, before the proxy reads a byte of it or dials the server, and for Fault.Delay
	// afterwards the proxy stops listening, so that every dial meanwhile is refused
	// (ECONNREFUSED). Command and Key do not apply; Times and After count connections.
	Refuse
	// DropFields passes the command on and relays its reply without the fields Fault.Fields
	// names, taken out of every field list in it (a map, or an array of name and value pairs as
	// XINFO replies are in RESP2): the reply of a server of an older protocol, such as Redis
	// 6.2's XINFO GROUPS, which has no entries-read or lag.
	DropFields
)

// Actions lists every Action that is a fault, for tests that choose among them. DropFields is
// not one: it plays an older server, not a failure, and the campaign's seeds draw from this list.
var Actions = []Action{DropReply, CutReply, DelayReply, Answer, Hang, Refuse}

func (a Action) String() string {
	switch a {
	case DropReply:
		return "DropReply"
	case CutReply:
		return "CutReply"
	case DelayReply:
		return "DelayReply"
	case Answer:
		return "Answer"
	case Hang:
		return "Hang"
	case Refuse:
		return "Refuse"
	case DropFields:
		return "DropFields"
	}
	return "none"
}

// Fault acts on the replies of the commands it matches.
type Fault struct {
	// Command is the command as the proxy names it: "XGROUP CREATE", "XINFO GROUPS", "HELLO",
	// "SELECT", "WAIT". Empty matches every command.
	Command string
	// Key, when set, matches only commands on that key (for XGROUP and XINFO, the key after
	// the subcommand).
	Key string
	// Group, when set, matches only XGROUP commands on that group (the argument after the
	// key): with Key, a fault on XGROUP CREATE names one group's create, whatever order the
	// creates of other groups arrive in, on whichever connection.
	Group  string
	Action Action
	Reply  string        // Answer's error reply, without the leading "-"
	Fields []string      // the fields DropFields takes out
	Delay  time.Duration // DelayReply's delay; how long Refuse stops listening
	// After is how many matches the fault lets pass before it acts: After 1 acts on the second
	// XINFO GROUPS, wherever it travels. Each proxy counts its own matches: in a cluster, a
	// fault that counts (After, Times) and names a Key counts the commands of the one node
	// that serves the key.
	After int
	// Times is how many matches the fault acts on; 0 means every one.
	Times int
	// Before, when set, makes the fault an event rather than a fault on the reply: when it acts
	// on a command (as After and Times say), the proxy first waits until the server has answered
	// every earlier command of the connection, then runs Before, and only when it returns passes
	// the command on; the client hears nothing meanwhile. Its Action must be 0, and the command's
	// reply is left to the other faults (one of which may act on it too). The command is logged
	// before the event runs (Record.Before counts it), so what arrives meanwhile on other
	// connections comes after it in the log. A test restarts the server, or changes its data as
	// another client would, at an exact point of a client's run.
	Before func()
}

// matchCommand is the fault that acts on cmd's reply, or nil, and the events (Before) due on
// it, in the order they were injected. Every command fault cmd matches counts it as seen,
// whether it acts or not.
func (p *Proxy) matchCommand(cmd command) (*Fault, []func()) {
	key := cmd.key()
	return p.match(func(f *Fault) bool {
		return f.Action != Refuse && (f.Command == "" || f.Command == cmd.name) && (f.Key == "" || f.Key == key) &&
			(f.Group == "" || strings.HasPrefix(cmd.name, "XGROUP ") && len(cmd.args) > 1 && cmd.args[1] == f.Group)
	})
}

// match is the first due fault among those matches accepts, counting the hit, or nil, and the
// Before of every due event among them (each counting its hit).
func (p *Proxy) match(matches func(*Fault) bool) (*Fault, []func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var acting *Fault
	var events []func()
	for _, f := range p.faults {
		if !matches(f) {
			continue
		}
		p.seen[f]++
		if due := p.seen[f] > f.After && (f.Times == 0 || p.hits[f] < f.Times); due && f.Before != nil {
			p.hits[f]++
			events = append(events, f.Before)
		} else if due && acting == nil {
			p.hits[f]++
			acting = f
		}
	}
	return acting, events
}

// refused tells whether a Refuse fault takes the connection just accepted; when it does, the
// connection is reset and, for the fault's Delay, the proxy stops listening.
func (p *Proxy) refused(client net.Conn) bool {
	f, _ := p.match(func(f *Fault) bool { return f.Action == Refuse && f.Before == nil })
	if f == nil {
		return false
	}
	if tcp, ok := client.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = client.Close()
	if f.Delay > 0 {
		p.stopListening(f.Delay)
	}
	return true
}

// stopListening closes the listener for d, then listens on the same address again.
func (p *Proxy) stopListening(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.resumed != nil {
		return
	}
	p.resumed = make(chan struct{})
	_ = p.ln.Close()
	go func() {
		time.Sleep(d)
		p.mu.Lock()
		defer p.mu.Unlock()
		if !p.closed {
			if ln, err := net.Listen("tcp", p.addr); err == nil {
				p.ln = ln
			} else {
				p.closed = true // the port was taken meanwhile: the proxy stays shut
			}
		}
		close(p.resumed)
		p.resumed = nil
	}()
}

// Hits is how many commands (and connections) the proxy's faults have acted on so far, events
// (Before) included.
func (p *Proxy) Hits() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, h := range p.hits {
		n += h
	}
	return n
}
