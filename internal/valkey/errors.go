package valkey

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// The errors below are everything this package reports. Each carries what a caller needs to
// explain it (the key, the address, the server's words, a cause); wording advice for people
// is the caller's job.

// WrongTypeError reports a key that holds something other than a stream.
type WrongTypeError struct {
	Key  string
	Type string // what TYPE answered: string, list, hash, set, zset, ...
}

func (e *WrongTypeError) Error() string {
	return fmt.Sprintf("key %q holds a %s, not a stream", e.Key, e.Type)
}

// RefusedError is an error reply from the server other than the ones the door understands
// (NOPERM, READONLY, LOADING, CLUSTERDOWN, ...). Reply holds the server's own words.
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

// UnconfirmedError is a door whose write fewer replicas acknowledged than asked for: the
// group is on the primary, but a failover now could lose it, so the door does not count it.
type UnconfirmedError struct {
	Addr    string
	Key     string
	Acked   int64
	Wanted  int
	Timeout time.Duration
}

func (e *UnconfirmedError) Error() string {
	return fmt.Sprintf("the group on key %q was written at %s but %d of %d replicas acknowledged it within %s",
		e.Key, e.Addr, e.Acked, e.Wanted, e.Timeout)
}

// UnreachableError is a failure to talk to the server at all: refused connection, DNS,
// timeout, TLS verification, or authentication.
type UnreachableError struct {
	Addr       string
	Err        error
	TLS        bool // TLS was on
	ClientCert bool // a client certificate was offered
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach valkey at %s: %v", e.Addr, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Cause is why a server could not be reached, as far as the client can tell.
type Cause int

const (
	CauseOther         Cause = iota
	CauseConfigUnknown       // the options were not known yet: nothing was dialled
	CauseAuth                // WRONGPASS or NOAUTH: wrong user or password, or a disabled user
	CauseNoPerm              // a command the connection needs is not allowed to the user
	CauseClusterDown         // CLUSTERDOWN while connecting
	CauseDNS                 // the host name does not resolve
	CauseRefused             // nothing listens at the address
	CauseTLSVerify           // the server's certificate is not trusted or does not name the host
	CauseTLSRejected         // the server sent a TLS alert during the handshake
	CauseNotTLS              // TLS was spoken to a server that answered in plain text
	CauseClosed              // a plain connection was closed by the server
	CauseClosedTLS           // a TLS connection was closed, and no client certificate was offered
	CauseClosedTLSCert       // a TLS connection was closed although a client certificate was offered
	CauseTimeout             // no answer in time
)

// Cause tells what kind of failure e is.
func (e *UnreachableError) Cause() Cause {
	var (
		rerr    redis.Error
		unknown *ConfigUnknownError
		dnsErr  *net.DNSError
		verify  *tls.CertificateVerificationError
		uaErr   x509.UnknownAuthorityError
		hnErr   x509.HostnameError
		ciErr   x509.CertificateInvalidError
		recErr  tls.RecordHeaderError
		opErr   *net.OpError
		netErr  net.Error
	)
	closed := errors.Is(e.Err, io.EOF) || errors.Is(e.Err, syscall.ECONNRESET)
	switch {
	case errors.As(e.Err, &unknown):
		return CauseConfigUnknown
	case errors.As(e.Err, &rerr) && isAuthReply(rerr.Error()):
		return CauseAuth
	case errors.As(e.Err, &rerr) && strings.HasPrefix(rerr.Error(), "NOPERM"):
		return CauseNoPerm
	case errors.As(e.Err, &rerr) && strings.HasPrefix(rerr.Error(), "CLUSTERDOWN"):
		return CauseClusterDown
	case errors.As(e.Err, &dnsErr):
		return CauseDNS
	case errors.Is(e.Err, syscall.ECONNREFUSED):
		return CauseRefused
	case errors.As(e.Err, &verify), errors.As(e.Err, &uaErr), errors.As(e.Err, &hnErr), errors.As(e.Err, &ciErr):
		return CauseTLSVerify
	case errors.As(e.Err, &opErr) && opErr.Op == "remote error": // crypto/tls's way of reporting the peer's TLS alert
		return CauseTLSRejected
	case errors.As(e.Err, &recErr):
		return CauseNotTLS
	case closed && !e.TLS:
		return CauseClosed
	case closed && !e.ClientCert:
		// With TLS 1.3 the server checks the client certificate after the client's handshake
		// ends, so a missing certificate often shows up as a reset on the first command.
		return CauseClosedTLS
	case closed:
		return CauseClosedTLSCert
	case errors.Is(e.Err, context.DeadlineExceeded) || errors.Is(e.Err, os.ErrDeadlineExceeded) || (errors.As(e.Err, &netErr) && netErr.Timeout()):
		return CauseTimeout
	}
	return CauseOther
}

// ConfigUnknownError is what every command returns when the client's options were not known
// yet (they depend on values that exist only later), so no server can be contacted.
type ConfigUnknownError struct {
	Settings []string // the options that were unknown, in the caller's names
}

func (e *ConfigUnknownError) Error() string {
	return fmt.Sprintf("the connection settings were not known yet (%s), so no server can be contacted",
		strings.Join(e.Settings, ", "))
}

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

// classify turns an error from a command on key into one of the typed errors above.
// WRONGTYPE asks the server for the key's type so the message can name it.
func (c *Client) classify(ctx context.Context, command, key string, err error) error {
	msg, isReply := reply(err)
	switch {
	case err == nil:
		return nil
	case isReply && strings.HasPrefix(msg, "WRONGTYPE"):
		return &WrongTypeError{Key: key, Type: c.keyType(ctx, key)}
	case isReply && !isAuthReply(msg):
		return &RefusedError{Addr: c.Addr(), Key: key, Command: command, Reply: msg}
	}
	tlsOn, clientCert := c.tlsState()
	return &UnreachableError{Addr: c.Addr(), Err: err, TLS: tlsOn, ClientCert: clientCert}
}

// keyType answers TYPE key, or "non-stream value" when even that fails.
func (c *Client) keyType(ctx context.Context, key string) string {
	t, err := c.Universal().Type(ctx, key).Result()
	if err != nil || t == "" {
		return "non-stream value"
	}
	return t
}
