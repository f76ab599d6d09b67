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
		return "The ACL user lacks the permission named in the reply: grant it (see the provider's minimal ACL) or use another user."
	case "READONLY":
		return "The address points at a replica; point the provider at the primary (or use the sentinel block)."
	case "LOADING":
		return "The server is still loading its dataset; retry when it has finished."
	case "CLUSTERDOWN":
		return "The cluster cannot serve this key's slot: check `CLUSTER INFO` (cluster_state) and the health of its nodes."
	case "MOVED", "ASK", "CROSSSLOT":
		return "The server is part of a cluster; configure the provider's cluster block instead of a single url."
	}
	return "Check the server's reply above and the server's configuration."
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

// Hint says what to check, as a sentence, for the kind of failure.
func (e *UnreachableError) Hint() string {
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
	switch {
	case errors.As(e.Err, &unknown):
		return "The provider's configuration depends on values known only after apply (for example a url taken from a resource not created yet). " +
			"Apply the resources it depends on first (terraform apply -target=...), or configure the provider with known values."
	case errors.As(e.Err, &rerr) && (strings.HasPrefix(rerr.Error(), "WRONGPASS") || strings.HasPrefix(rerr.Error(), "NOAUTH")):
		return "Authentication failed: check the username and password (attributes, VALKEY_USERNAME/VALKEY_PASSWORD, or the url) and that the ACL user is enabled."
	case errors.As(e.Err, &rerr) && strings.HasPrefix(rerr.Error(), "NOPERM"):
		return "The ACL user may not run a command the connection needs: grant it (see the provider's minimal ACL) or use another user."
	case errors.As(e.Err, &rerr) && strings.HasPrefix(rerr.Error(), "CLUSTERDOWN"):
		return "The cluster cannot serve requests: check `CLUSTER INFO` (cluster_state) and the health of its nodes."
	case errors.As(e.Err, &dnsErr):
		return "The host name does not resolve: check the host in the url (or the cluster or sentinel addresses) and DNS."
	case errors.Is(e.Err, syscall.ECONNREFUSED):
		return "Nothing is listening there: check that valkey-server is running and that the host and port are right."
	case errors.As(e.Err, &verify), errors.As(e.Err, &uaErr), errors.As(e.Err, &hnErr), errors.As(e.Err, &ciErr):
		return "TLS verification of the server's certificate failed: check tls.ca_cert (or ca_cert_file) and that tls.server_name matches a name in the certificate."
	case errors.As(e.Err, &opErr) && opErr.Op == "remote error": // crypto/tls's way of reporting the peer's TLS alert
		return "The server rejected the TLS handshake: if it requires client certificates (tls-auth-clients), set tls.cert and tls.key to a pair its CA trusts."
	case errors.As(e.Err, &recErr):
		return "The server did not speak TLS: use valkey:// without a tls block, or check the port."
	case (errors.Is(e.Err, io.EOF) || errors.Is(e.Err, syscall.ECONNRESET)) && !e.TLS:
		return "The server closed the connection: if it expects TLS, use valkeys:// or a tls block; otherwise check its logs and maxclients."
	case (errors.Is(e.Err, io.EOF) || errors.Is(e.Err, syscall.ECONNRESET)) && !e.ClientCert:
		// With TLS 1.3 the server checks the client certificate after the client's handshake
		// ends, so a missing certificate often shows up as a reset on the first command.
		return "The server closed the TLS connection: if it requires client certificates (tls-auth-clients), set tls.cert and tls.key to a pair its CA trusts."
	case errors.Is(e.Err, io.EOF) || errors.Is(e.Err, syscall.ECONNRESET):
		return "The server closed the TLS connection: check that its tls-ca-cert-file trusts the client certificate in tls.cert, and the server's logs."
	case errors.Is(e.Err, context.DeadlineExceeded) || errors.Is(e.Err, os.ErrDeadlineExceeded) || (errors.As(e.Err, &netErr) && netErr.Timeout()):
		return "The server did not answer in time: check the address and port (a TLS client on a plain port waits like this), " +
			"firewalls, the server's load, and dial_timeout/command_timeout."
	}
	return "Check the address, the network path to the server, and the server's logs."
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
	return c.unreachable(err)
}

// unreachable wraps a transport error with what the hint needs to know about the connection.
func (c *Client) unreachable(err error) *UnreachableError {
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
