package valkey

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Cause is why a server could not be reached, as far as the client can tell.
type Cause int

const (
	CauseOther             Cause = iota
	CauseAuth                    // WRONGPASS or NOAUTH: wrong user or password, or a disabled user
	CauseNoPerm                  // a command the connection needs is not allowed to the user
	CauseClusterDown             // CLUSTERDOWN while connecting
	CauseDNS                     // the host name does not resolve
	CauseRefused                 // nothing listens at the address
	CauseTLSVerify               // the server's certificate is not trusted or does not name the host
	CauseTLSRejected             // the server sent a TLS alert during the handshake
	CauseNotTLS                  // TLS was spoken to a server that answered in plain text
	CauseClosed                  // a plain connection was closed by the server
	CauseClosedTLS               // a TLS connection was closed, and no client certificate was offered
	CauseClosedTLSCert           // a TLS connection was closed although a client certificate was offered
	CauseTimeout                 // no answer in time
	CauseNoDatabase              // the server refused to SELECT the database: it has no database of that number
	CauseNoClusterDatabase       // a cluster node refused to SELECT the database: Cluster mode serves only as many as cluster-databases
	CauseProxyUnreachable        // the SOCKS5 proxy could not be reached (a *ProxyError)
	CauseProxyRefused            // the SOCKS5 proxy refused the credentials or the connection to the server (a *ProxyError)
)

// Cause tells what kind of failure e is.
func (e *UnreachableError) Cause() Cause {
	var (
		rerr   redis.Error
		dnsErr *net.DNSError
		verify *tls.CertificateVerificationError
		uaErr  x509.UnknownAuthorityError
		hnErr  x509.HostnameError
		ciErr  x509.CertificateInvalidError
		recErr tls.RecordHeaderError
		opErr  *net.OpError
		proxy  *ProxyError
	)
	closed := connClosed(e.Err)
	switch {
	case e.Step == "SELECT" && errors.As(e.Err, &rerr) && strings.HasPrefix(rerr.Error(), "ERR") && e.Cluster:
		return CauseNoClusterDatabase
	case e.Step == "SELECT" && errors.As(e.Err, &rerr) && strings.HasPrefix(rerr.Error(), "ERR"):
		return CauseNoDatabase
	case errors.As(e.Err, &rerr) && isAuthReply(rerr.Error()):
		return CauseAuth
	case errors.As(e.Err, &rerr) && strings.HasPrefix(rerr.Error(), "NOPERM"):
		return CauseNoPerm
	case errors.As(e.Err, &rerr) && strings.HasPrefix(rerr.Error(), "CLUSTERDOWN"):
		return CauseClusterDown
	case errors.As(e.Err, &proxy) && proxy.Reached:
		return CauseProxyRefused
	case errors.As(e.Err, &proxy): // before the causes of a dial: they are the proxy's, not the server's
		return CauseProxyUnreachable
	case errors.As(e.Err, &dnsErr):
		return CauseDNS
	case connRefused(e.Err):
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
	case timedOut(e.Err):
		return CauseTimeout
	}
	return CauseOther
}

// Cause tells why the reply was lost: CauseTimeout when none came within the command's
// timeout, CauseClosed when the connection closed or broke before it came, CauseOther
// otherwise (a cancelled context, for one).
func (e *UnknownOutcomeError) Cause() Cause {
	switch {
	case timedOut(e.Err):
		return CauseTimeout
	case connClosed(e.Err) || errors.Is(e.Err, io.ErrUnexpectedEOF): // a reply cut short
		return CauseClosed
	}
	return CauseOther
}

// connClosed tells whether the server closed or reset the connection.
func connClosed(err error) bool { return errors.Is(err, io.EOF) || connReset(err) }

// timedOut tells whether err is a deadline that passed: a context's, or a connection's read or
// write timeout.
func timedOut(err error) bool {
	var netErr net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout())
}
