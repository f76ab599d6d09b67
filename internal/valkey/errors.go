package valkey

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"
)

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

// Hint says what to check for the reply's code, as a sentence.
func (e *RefusedError) Hint() string {
	switch e.Code() {
	case "NOPERM":
		return "The ACL user lacks a permission this command needs; grant it (see the provider's minimal ACL) or use another user."
	case "READONLY":
		return "The address points at a replica; point the provider at the primary (or use the sentinel block)."
	case "LOADING":
		return "The server is still loading its dataset; retry when it has finished."
	case "CLUSTERDOWN":
		return "The cluster cannot serve this slot; check `CLUSTER INFO` and the nodes' health."
	case "MOVED", "ASK", "CROSSSLOT":
		return "The server is part of a cluster; configure the provider's cluster block instead of a single url."
	}
	return "Check the server's reply above and the server's configuration."
}

// UnreachableError is a failure to talk to the server at all: refused connection, DNS,
// timeout, TLS verification, or authentication.
type UnreachableError struct {
	Addr string
	Err  error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach valkey at %s: %v", e.Addr, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Hint says what to check, as a sentence, for the kind of failure.
func (e *UnreachableError) Hint() string {
	var (
		rerr   redis.Error
		dnsErr *net.DNSError
		uaErr  x509.UnknownAuthorityError
		hnErr  x509.HostnameError
		ciErr  x509.CertificateInvalidError
		recErr tls.RecordHeaderError
	)
	switch {
	case errors.As(e.Err, &rerr) && (strings.HasPrefix(rerr.Error(), "WRONGPASS") || strings.HasPrefix(rerr.Error(), "NOAUTH")):
		return "Authentication failed: check the username and password (attributes, VALKEY_USERNAME/VALKEY_PASSWORD, or the url)."
	case errors.As(e.Err, &dnsErr):
		return "The host name does not resolve: check the host in the url."
	case errors.Is(e.Err, syscall.ECONNREFUSED):
		return "Nothing is listening there: check that valkey-server is running and that the url's host and port are right."
	case errors.Is(e.Err, context.DeadlineExceeded) || errors.Is(e.Err, os.ErrDeadlineExceeded):
		return "The server did not answer in time: check the address, firewalls, and the server's load."
	case errors.As(e.Err, &uaErr), errors.As(e.Err, &hnErr), errors.As(e.Err, &ciErr):
		return "TLS verification failed: check the CA certificate and the server name."
	case errors.As(e.Err, &recErr):
		return "The server did not speak TLS: use valkey:// instead of valkeys:// or check the port."
	}
	return "Check the url, the network path to the server, and the server's logs."
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
	return &UnreachableError{Addr: c.Addr(), Err: err}
}

// keyType answers TYPE key, or "non-stream value" when even that fails.
func (c *Client) keyType(ctx context.Context, key string) string {
	t, err := c.Universal().Type(ctx, key).Result()
	if err != nil || t == "" {
		return "non-stream value"
	}
	return t
}
