package valkey

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/url"
	"strings"

	"github.com/redis/go-redis/v9"
	"golang.org/x/net/proxy"
)

// Private endpoints: a CI runner outside the network of a cache reaches it through a SOCKS5
// proxy (a bastion's `ssh -D`, a cloud's tunnel), or through forwards whose addresses are not
// the ones the cluster's nodes announce. Both change where a connection is dialled, so they
// replace go-redis's dialer, for every connection of every mode: the server, the cluster's
// nodes (the seeds and those CLUSTER SLOTS or a redirection names), the sentinels and the
// primary they name. A dialer of one's own must also speak TLS, which go-redis's own does.

// dialOptions sets up the dialer when a proxy or an address map asks for one.
func dialOptions(opts Options, u *redis.UniversalOptions) error {
	if opts.Proxy == "" && len(opts.AddressMap) == 0 {
		return nil
	}
	for announced, reachable := range opts.AddressMap {
		if err := checkAddrs("AddressMap", []string{announced, reachable}); err != nil {
			return err
		}
	}
	direct := &net.Dialer{Timeout: u.DialTimeout, KeepAlive: -1, KeepAliveConfig: net.KeepAliveConfig{Enable: true}}
	var through proxy.ContextDialer = direct
	proxyAddr := ""
	if opts.Proxy != "" {
		p, addr, err := socksDialer(opts.Proxy, toProxy{direct})
		if err != nil {
			return err
		}
		through, proxyAddr = p, addr
	}
	tlsConfig, addressMap := u.TLSConfig, opts.AddressMap
	u.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		target := addr
		if mapped, ok := addressMap[addr]; ok {
			target = mapped
		}
		conn, err := through.DialContext(ctx, network, target)
		if err != nil && proxyAddr != "" {
			return nil, proxyError(proxyAddr, target, err)
		}
		if err != nil || tlsConfig == nil {
			return conn, err
		}
		cfg := tlsConfig
		if cfg.ServerName == "" {
			// The certificate names the address the node announced, not the forward's.
			host, _, _ := net.SplitHostPort(addr)
			cfg = cfg.Clone()
			cfg.ServerName = host
		}
		tlsConn := tls.Client(conn, cfg)
		if err := tlsConn.HandshakeContext(ctx); err != nil {
			_ = conn.Close()
			return nil, err
		}
		return tlsConn, nil
	}
	return nil
}

// ProxyError is a connection the SOCKS5 proxy did not carry: the proxy could not be reached
// (Reached false: nothing listens there, its name does not resolve, it did not answer), or it
// answered and refused (Reached true: it rejected the credentials, or refused to connect to
// Target, with the reply it gave). Proxy is its host:port, never its credentials.
type ProxyError struct {
	Proxy, Target string
	Reached       bool
	Err           error
}

func (e *ProxyError) Error() string {
	if !e.Reached {
		return "the SOCKS5 proxy " + e.Proxy + " could not be reached: " + e.Err.Error()
	}
	return "the SOCKS5 proxy " + e.Proxy + " did not connect to " + e.Target + ": " + e.Err.Error()
}

func (e *ProxyError) Unwrap() error { return e.Err }

// toProxy is the dialer of the connection to the proxy itself: it marks its failures, so that
// they are told from the proxy's refusals.
type toProxy struct{ *net.Dialer }

type toProxyError struct{ error }

func (e toProxyError) Unwrap() error { return e.error }

func (d toProxy) Dial(network, addr string) (net.Conn, error) {
	return d.DialContext(context.Background(), network, addr)
}

func (d toProxy) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := d.Dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, toProxyError{err}
	}
	return c, nil
}

// proxyError is what the SOCKS5 dialer's err says about the proxy at addr, dialling target.
func proxyError(addr, target string, err error) error {
	var unreached toProxyError
	if errors.As(err, &unreached) {
		return &ProxyError{Proxy: addr, Target: target, Err: unreached.error}
	}
	// x/net/proxy reports a refusal as a net.OpError "socks connect" around "unknown error
	// <the reply's meaning>", such as "connection not allowed by ruleset".
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		err = op.Err
		if msg := err.Error(); strings.HasPrefix(msg, "unknown error ") {
			err = errors.New(strings.TrimPrefix(msg, "unknown error "))
		}
	}
	return &ProxyError{Proxy: addr, Target: target, Reached: true, Err: err}
}

// socksDialer is the SOCKS5 proxy of raw, socks5://[user:password@]host:port, and its
// host:port. Host names are resolved by the proxy (socks5h:// is accepted as the same), since
// a private endpoint's name often resolves only inside its network.
func socksDialer(raw string, direct proxy.Dialer) (proxy.ContextDialer, string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "socks5" && u.Scheme != "socks5h") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return nil, "", &OptionError{Field: "Proxy", Reason: "is not socks5://[user:password@]host:port"}
	}
	if _, _, err := net.SplitHostPort(u.Host); err != nil {
		return nil, "", &OptionError{Field: "Proxy", Reason: "has no port: it must be socks5://[user:password@]host:port"}
	}
	var auth *proxy.Auth
	if u.User != nil {
		password, _ := u.User.Password()
		auth = &proxy.Auth{User: u.User.Username(), Password: password}
	}
	d, err := proxy.SOCKS5("tcp", u.Host, auth, direct)
	if err != nil {
		return nil, "", &OptionError{Field: "Proxy", Reason: "cannot be used: " + strings.ReplaceAll(err.Error(), raw, u.Redacted())}
	}
	cd, ok := d.(proxy.ContextDialer)
	if !ok { // x/net/proxy's SOCKS5 dialer has always been one
		return nil, "", &OptionError{Field: "Proxy", Reason: "cannot be used: its dialer takes no context"}
	}
	return cd, u.Host, nil
}
