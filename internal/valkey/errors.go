package valkey

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The errors below are everything this package reports. Each carries what a caller needs to
// explain it (the key, the address, the server's words, a cause); wording advice for people
// is the caller's job.

// WrongTypeError reports a key that holds something other than a stream.
type WrongTypeError struct {
	Addr string
	Key  string
	Type string // what TYPE answered: string, list, hash, set, zset, ...
}

func (e *WrongTypeError) Error() string {
	return fmt.Sprintf("key %q at %s holds a %s, not a stream", e.Key, e.Addr, e.Type)
}

// RefusedError is an error reply to a command of this package's, in the server's own words
// (Reply): NOPERM, READONLY, LOADING, OOM, CLUSTERDOWN, and any other. Four replies are not
// refusals: BUSYGROUP, which EnsureGroup swallows; WRONGTYPE, a *WrongTypeError; a failed
// authentication (NOAUTH, WRONGPASS), an *UnreachableError, since no command ran; and, from a
// cluster client, MOVED and ASK, which are followed, and a *RedirectError when they never end.
// (MOVED to a client of one server means the url names a cluster node: that is a refusal.) A refusal
// met while a connection was being opened (a SELECT the server refuses) is an
// *UnreachableError too, with Step "SELECT".
type RefusedError struct {
	Addr    string
	Key     string
	Command string
	Reply   string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s on key %q was refused by %s: %s", e.Command, e.Key, e.Addr, e.Reply)
}

// Code is the reply's first word, such as NOPERM or READONLY.
func (e *RefusedError) Code() string {
	code, _, _ := strings.Cut(e.Reply, " ")
	return code
}

// RedirectError is a command that a cluster kept redirecting (MOVED, ASK) after the client had
// followed every redirection, reloaded its slot map and tried again for a while: the key's slot
// is moving, and its nodes did not agree on who serves it before the client gave up. The
// command ran on no node. Reply is the last redirection, such as "ASK 7365 127.0.0.1:7001".
type RedirectError struct {
	Addr    string
	Key     string
	Command string
	Reply   string
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("%s on key %q was redirected by %s until the client gave up: %s", e.Command, e.Key, e.Addr, e.Reply)
}

// NotFoundError reports a stream, or a group on it, that the server does not hold. Group is
// empty when the stream itself is missing.
type NotFoundError struct {
	Stream string
	Group  string
}

func (e *NotFoundError) Error() string {
	if e.Group == "" {
		return fmt.Sprintf("stream %q does not exist", e.Stream)
	}
	return fmt.Sprintf("group %q does not exist on stream %q", e.Group, e.Stream)
}

// UnconfirmedError is an EnsureGroup whose write fewer replicas acknowledged than asked for (WAIT):
// the group is on the primary, created or adopted as Outcome says, but a failover now could
// lose it, so EnsureGroup does not count it. Reply is WAIT's error reply when the server refused
// WAIT; Err is set when WAIT's reply was lost.
type UnconfirmedError struct {
	Addr    string
	Node    string // the cluster node that ran the create and WAIT; "" outside a cluster
	Key     string
	Group   string
	Outcome Outcome
	Acked   int64
	Wanted  int
	Timeout time.Duration
	Reply   string
	Err     error
}

func (e *UnconfirmedError) Error() string {
	at := Where(e.Addr, e.Node)
	switch {
	case e.Reply != "":
		return fmt.Sprintf("group %q on key %q was %s at %s, but the server refused WAIT: %s", e.Group, e.Key, e.Outcome, at, e.Reply)
	case e.Err != nil:
		return fmt.Sprintf("group %q on key %q was %s at %s, but WAIT's reply was lost: %v", e.Group, e.Key, e.Outcome, at, e.Err)
	}
	return fmt.Sprintf("group %q on key %q was %s at %s, but %d of %d replicas acknowledged it within %s",
		e.Group, e.Key, e.Outcome, at, e.Acked, e.Wanted, e.Timeout)
}

// Where names a server for messages: addr, or the node of the cluster at addr when node is set.
func Where(addr, node string) string {
	if node == "" {
		return addr
	}
	return "node " + node + " of " + addr
}

// UnknownOutcomeError is an EnsureGroup whose XGROUP CREATE may have reached the server but whose
// reply was lost (the connection broke or timed out after the command was written). EnsureGroup
// does not send it again: a second XGROUP CREATE would answer BUSYGROUP to this very create,
// and the group would read as adopted. Now is what the server showed when asked once
// afterwards; NowErr is set when even that could not be read.
type UnknownOutcomeError struct {
	Addr   string
	Stream string
	Group  string
	Err    error
	Now    GroupState
	NowErr error
}

// GroupState is whether a stream and a group on it exist, with the group as XINFO GROUPS
// reported it when it does.
type GroupState struct {
	StreamExists bool
	GroupExists  bool
	Group        Group
}

func (e *UnknownOutcomeError) Error() string {
	return fmt.Sprintf("the reply to XGROUP CREATE of group %q on key %q at %s was lost (%v): the group may or may not have been created",
		e.Group, e.Stream, e.Addr, e.Err)
}

func (e *UnknownOutcomeError) Unwrap() error { return e.Err }

// UnreachableError is a failure to talk to the server at all: refused connection, DNS,
// timeout, TLS, a cloud token that could not be had, a refused authentication or SELECT, a
// cluster's slot map that could not be loaded, or a connection lost while waiting for a reply to
// a read. Step says where it failed before any command of the caller's was sent ("connect": TCP,
// TLS or the Sentinel lookup; "IAM token": signing or fetching the AWS or Google token that is
// the password; "HELLO" or "AUTH"; "SELECT"; "CLUSTER SLOTS"); it is empty when the connection
// was open and the command itself met the failure.
type UnreachableError struct {
	Addr       string
	Node       string // the cluster node whose connection failed to open; "" outside a cluster or when not known
	Announced  bool   // Node is an address the cluster announced (CLUSTER SLOTS, a redirection), not a configured seed
	Step       string
	DB         int // the database SELECT asked for, when Step is "SELECT"
	Cluster    bool
	Err        error
	TLS        bool   // TLS was on
	ClientCert bool   // a client certificate was offered
	Token      string // the cloud whose token was the password ("AWS IAM"); "" for a password
}

func (e *UnreachableError) Error() string {
	switch {
	case e.Step == "SELECT":
		return fmt.Sprintf("cannot reach valkey at %s (SELECT %d failed): %v", Where(e.Addr, e.Node), e.DB, e.Err)
	case e.Step != "" && e.Step != "connect":
		return fmt.Sprintf("cannot reach valkey at %s (%s failed): %v", Where(e.Addr, e.Node), e.Step, e.Err)
	}
	return fmt.Sprintf("cannot reach valkey at %s: %v", Where(e.Addr, e.Node), e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// OptionError is an Options value the client cannot use. Field is the Options field, such as
// "DB" or "TLS.CACertFile".
type OptionError struct {
	Field  string
	Reason string
}

func (e *OptionError) Error() string { return e.Field + ": " + e.Reason }

// URLError is a URL the client cannot use. Its message never repeats a password.
type URLError struct {
	URL    string // redacted
	Reason string
	Params []string // the query parameters of a URL refused for having them, sorted
}

func (e *URLError) Error() string {
	return fmt.Sprintf("url %q is not valid: %s; accepted forms: %s", e.URL, e.Reason, AcceptedURLForms)
}

// reply returns the server's error reply and true when err is one.
func reply(err error) (string, bool) {
	var rerr redis.Error
	if errors.As(err, &rerr) {
		return rerr.Error(), true
	}
	return "", false
}

// isAuthReply reports replies that mean the connection was never authenticated: the
// command never ran, so they are reported as an unreachable server, not a refusal.
func isAuthReply(msg string) bool {
	return strings.HasPrefix(msg, "WRONGPASS") || strings.HasPrefix(msg, "NOAUTH")
}

// classify turns an error from a command on key into one of the typed errors above. A
// failure to open the connection is an UnreachableError whatever the command, and WRONGTYPE
// asks the server for the key's type so the message can name it.
func (c *Client) classify(ctx context.Context, command, key string, err error) error {
	if err == nil {
		return nil
	}
	tlsOn, clientCert := c.tlsState()
	if open, failedToOpen := asOpenError(err); failedToOpen {
		return &UnreachableError{Addr: c.Addr(), Node: open.node, Announced: c.unreached.announced(open.node), Step: open.step, DB: c.db, Cluster: c.cluster,
			Err: open.err, TLS: tlsOn, ClientCert: clientCert, Token: c.token}
	}
	msg, isReply := reply(err)
	switch {
	case isReply && strings.HasPrefix(msg, "WRONGTYPE"):
		return &WrongTypeError{Addr: c.Addr(), Key: key, Type: c.keyType(ctx, key)}
	case c.cluster && redirected(err): // settleHook followed it as long as it could
		return &RedirectError{Addr: c.Addr(), Key: key, Command: command, Reply: msg}
	case isReply && !isAuthReply(msg):
		return &RefusedError{Addr: c.Addr(), Key: key, Command: command, Reply: msg}
	}
	return &UnreachableError{Addr: c.Addr(), Cluster: c.cluster, Err: err, TLS: tlsOn, ClientCert: clientCert, Token: c.token}
}

// keyType answers TYPE key, or "non-stream value" when even that fails, or when TYPE no
// longer names another type: another client removed the key ("none") or made it a stream
// between the WRONGTYPE and the TYPE, and the type it held is gone with it.
func (c *Client) keyType(ctx context.Context, key string) string {
	t, err := c.Universal().Type(ctx, key).Result()
	if err != nil || t == "" || t == "none" || t == "stream" {
		return "non-stream value"
	}
	return t
}
