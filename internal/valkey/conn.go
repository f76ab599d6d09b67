package valkey

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultURL is where the provider looks when nothing else is configured.
const DefaultURL = "valkey://127.0.0.1:6379/0"

// AcceptedURLForms names the URL shapes ParseURL takes, for error messages.
const AcceptedURLForms = "valkey://[user[:password]@]host[:port][/db], valkeys://... (TLS), redis://... or rediss://... (TLS)"

// Defaults applied when an option is left at its zero value. They are go-redis's own, written
// down here so that the provider documents what it really does.
const (
	DefaultDialTimeout    = 5 * time.Second
	DefaultCommandTimeout = 3 * time.Second
	DefaultMaxRetries     = 3
	// DefaultReplicaAckTimeout bounds the door's WAIT when MinReplicaAcks is set.
	DefaultReplicaAckTimeout = time.Second
)

// Options say how to reach the server. The zero value of each field means "default".
// At most one of ClusterAddrs and Sentinel is set; with neither, URL names one server.
type Options struct {
	URL      string // standalone mode; ignored in cluster and sentinel mode
	Username string // overrides the URL's user when set
	Password string // overrides the URL's password when set
	DB       *int   // overrides the URL's database when set; not allowed with a cluster

	TLS          *TLSOptions // nil: TLS only for valkeys:// and rediss:// URLs
	ClusterAddrs []string    // seed nodes, host:port
	Sentinel     *SentinelOptions

	DialTimeout    time.Duration
	CommandTimeout time.Duration
	MaxRetries     int // 0 = DefaultMaxRetries; -1 = no retries
	PoolSize       int

	// MinReplicaAcks > 0 makes the door confirm its write with WAIT: at least this many
	// replicas must acknowledge it within ReplicaAckTimeout (DefaultReplicaAckTimeout when 0).
	// Not available with a cluster, where WAIT has no key to be routed by.
	MinReplicaAcks    int
	ReplicaAckTimeout time.Duration

	// Unknown, when set, says which settings were unknown when the client was made (during a
	// plan whose provider configuration depends on resources not yet created). Every command
	// then fails with a ConfigUnknownError and nothing is dialled.
	Unknown []string
}

// TLSOptions turn TLS on. PEM strings and file paths are alternatives for the same thing.
type TLSOptions struct {
	CACert, Cert, Key             string // PEM
	CACertFile, CertFile, KeyFile string
	ServerName                    string // default: the host dialled
	InsecureSkipVerify            bool
}

// SentinelOptions find the current primary through Sentinel.
type SentinelOptions struct {
	MasterName string
	Addrs      []string
	Username   string // for the sentinels; the data user is Options.Username
	Password   string
}

// Client is one shared connection pool per provider instance. It dials nothing until a
// command needs the server.
type Client struct {
	opts    Options
	addr    string
	tls     *tls.Config // nil without TLS
	build   func() redis.UniversalClient
	unknown error

	once sync.Once
	rdb  redis.UniversalClient

	groups groupCache
}

var quietLibrary sync.Once

// discardLogger drops go-redis's own log lines: every failure reaches the caller as a typed
// error, and stray lines on the plugin's stderr only confuse Terraform's output.
type discardLogger struct{}

func (discardLogger) Printf(context.Context, string, ...any) {}

// ConfigUnknownError is what every command returns when the provider configuration was not
// known yet (Terraform plans before the server it points at exists).
type ConfigUnknownError struct {
	Settings []string
}

func (e *ConfigUnknownError) Error() string {
	return fmt.Sprintf("provider configuration was unknown when this operation ran (%s depends on values known only after apply), so no server can be contacted",
		strings.Join(e.Settings, ", "))
}

// NewClient checks the options (URL, TLS material, mode) and returns a client that has not
// dialled yet.
func NewClient(opts Options) (*Client, error) {
	quietLibrary.Do(func() { redis.SetLogger(discardLogger{}) })
	c := &Client{opts: opts}
	if len(opts.Unknown) > 0 {
		c.addr = "an address not known until apply"
		c.unknown = &ConfigUnknownError{Settings: opts.Unknown}
		c.build = c.unknownClient
		return c, nil
	}
	if len(opts.ClusterAddrs) > 0 && opts.Sentinel != nil {
		return nil, errors.New("cluster and sentinel cannot both be configured")
	}
	tlsConfig, err := opts.TLS.config()
	if err != nil {
		return nil, err
	}
	switch {
	case len(opts.ClusterAddrs) > 0:
		if opts.DB != nil && *opts.DB != 0 {
			return nil, fmt.Errorf("db %d cannot be used with a cluster: a cluster has only database 0", *opts.DB)
		}
		if err := checkAddrs("cluster address", opts.ClusterAddrs); err != nil {
			return nil, err
		}
		c.addr = "cluster " + strings.Join(opts.ClusterAddrs, ",")
		c.build = func() redis.UniversalClient { return redis.NewClusterClient(c.clusterOptions(tlsConfig)) }
	case opts.Sentinel != nil:
		if opts.Sentinel.MasterName == "" {
			return nil, errors.New("sentinel master_name is empty")
		}
		if err := checkAddrs("sentinel address", opts.Sentinel.Addrs); err != nil {
			return nil, err
		}
		c.addr = fmt.Sprintf("primary %q via sentinel %s", opts.Sentinel.MasterName, strings.Join(opts.Sentinel.Addrs, ","))
		c.build = func() redis.UniversalClient { return redis.NewFailoverClient(c.failoverOptions(tlsConfig)) }
	default:
		if c.opts.URL == "" {
			c.opts.URL = DefaultURL
		}
		o, err := ParseURL(c.opts.URL)
		if err != nil {
			return nil, err
		}
		c.addr = o.Addr
		if tlsConfig != nil {
			if tlsConfig.ServerName == "" && o.TLSConfig != nil {
				tlsConfig.ServerName = o.TLSConfig.ServerName
			}
			o.TLSConfig = tlsConfig
		}
		tlsConfig = o.TLSConfig
		c.build = func() redis.UniversalClient { return redis.NewClient(c.standaloneOptions(o)) }
	}
	c.tls = tlsConfig
	return c, nil
}

func checkAddrs(what string, addrs []string) error {
	if len(addrs) == 0 {
		return fmt.Errorf("no %s given", what)
	}
	for _, a := range addrs {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return fmt.Errorf("%s %q is not host:port", what, a)
		}
	}
	return nil
}

// Addr is where commands go, for messages. It never carries a password.
func (c *Client) Addr() string { return c.addr }

func (c *Client) tlsState() (on, clientCert bool) {
	return c.tls != nil, c.tls != nil && len(c.tls.Certificates) > 0
}

// Universal returns the go-redis client, building it on first use.
func (c *Client) Universal() redis.UniversalClient {
	c.once.Do(func() { c.rdb = c.build() })
	return c.rdb
}

// Close releases the pool if it was ever built.
func (c *Client) Close() error {
	if c.rdb == nil {
		return nil
	}
	return c.rdb.Close()
}

// dialAttempts is one: go-redis would otherwise dial five times per command attempt, and a
// dial_timeout of 5s would become 25s. Command retries (max_retries) still redial.
const dialAttempts = 1

func (c *Client) standaloneOptions(o *redis.Options) *redis.Options {
	if c.opts.Username != "" {
		o.Username = c.opts.Username
	}
	if c.opts.Password != "" {
		o.Password = c.opts.Password
	}
	if c.opts.DB != nil {
		o.DB = *c.opts.DB
	}
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.MaxRetries = c.timeouts()
	o.DialerRetries = dialAttempts
	if c.opts.PoolSize > 0 {
		o.PoolSize = c.opts.PoolSize
	}
	// RESP2 keeps replies identical on Valkey and Redis 7.0 and skips HELLO's extra work.
	o.Protocol = 2
	o.DisableIdentity = true
	return o
}

func (c *Client) clusterOptions(tlsConfig *tls.Config) *redis.ClusterOptions {
	o := &redis.ClusterOptions{
		Addrs:           c.opts.ClusterAddrs,
		Username:        c.opts.Username,
		Password:        c.opts.Password,
		TLSConfig:       tlsConfig,
		PoolSize:        c.opts.PoolSize,
		Protocol:        2,
		DisableIdentity: true,
	}
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.MaxRetries = c.timeouts()
	o.DialerRetries = dialAttempts
	return o
}

func (c *Client) failoverOptions(tlsConfig *tls.Config) *redis.FailoverOptions {
	s := c.opts.Sentinel
	o := &redis.FailoverOptions{
		MasterName:       s.MasterName,
		SentinelAddrs:    s.Addrs,
		SentinelUsername: s.Username,
		SentinelPassword: s.Password,
		Username:         c.opts.Username,
		Password:         c.opts.Password,
		TLSConfig:        tlsConfig,
		PoolSize:         c.opts.PoolSize,
		Protocol:         2,
		DisableIdentity:  true,
	}
	if c.opts.DB != nil {
		o.DB = *c.opts.DB
	}
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.MaxRetries = c.timeouts()
	o.DialerRetries = dialAttempts
	return o
}

func (c *Client) timeouts() (dial, read, write time.Duration, retries int) {
	dial, read, retries = DefaultDialTimeout, DefaultCommandTimeout, DefaultMaxRetries
	if c.opts.DialTimeout > 0 {
		dial = c.opts.DialTimeout
	}
	if c.opts.CommandTimeout > 0 {
		read = c.opts.CommandTimeout
	}
	if c.opts.MaxRetries != 0 {
		retries = c.opts.MaxRetries
	}
	write = read
	if _, wait := c.replicaAcks(); wait > 0 {
		read += wait // the door's WAIT may hold the reply that long
	}
	return dial, read, write, retries
}

// unknownClient fails every command with the ConfigUnknownError, without dialling.
func (c *Client) unknownClient() redis.UniversalClient {
	return redis.NewClient(&redis.Options{
		Addr:       "unknown:0",
		MaxRetries: -1,
		Dialer: func(context.Context, string, string) (net.Conn, error) {
			return nil, c.unknown
		},
		Protocol:        2,
		DisableIdentity: true,
	})
}

// config builds the tls.Config, reading files now so that a wrong path is reported at
// configuration time rather than on the first command. A nil t means no TLS settings.
func (t *TLSOptions) config() (*tls.Config, error) {
	if t == nil {
		return nil, nil
	}
	cfg := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         t.ServerName,
		InsecureSkipVerify: t.InsecureSkipVerify, //nolint:gosec // the user asked for it, in so many words.
	}
	caPEM, err := pemFrom("ca_cert", t.CACert, t.CACertFile)
	if err != nil {
		return nil, err
	}
	if caPEM != nil {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caPEM) {
			return nil, errors.New("tls ca_cert holds no PEM certificate")
		}
		cfg.RootCAs = pool
	}
	certPEM, err := pemFrom("cert", t.Cert, t.CertFile)
	if err != nil {
		return nil, err
	}
	keyPEM, err := pemFrom("key", t.Key, t.KeyFile)
	if err != nil {
		return nil, err
	}
	switch {
	case certPEM != nil && keyPEM != nil:
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			// The library's words name no secret, only what is wrong with the PEM blocks.
			return nil, fmt.Errorf("tls cert and key do not form a key pair: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	case certPEM != nil:
		return nil, errors.New("tls cert is set but key is not: a client certificate needs both")
	case keyPEM != nil:
		return nil, errors.New("tls key is set but cert is not: a client certificate needs both")
	}
	return cfg, nil
}

func pemFrom(name, inline, file string) ([]byte, error) {
	switch {
	case inline != "" && file != "":
		return nil, fmt.Errorf("tls %s and %s_file are both set: use one", name, name)
	case inline != "":
		return []byte(inline), nil
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("tls %s_file cannot be read: %w", name, err)
		}
		return b, nil
	}
	return nil, nil
}

var urlSchemes = map[string]string{
	"valkey":  "redis",
	"valkeys": "rediss",
	"redis":   "redis",
	"rediss":  "rediss",
}

// URLError is a URL the provider cannot use. Its message never repeats a password.
type URLError struct {
	URL    string // redacted
	Reason string
}

func (e *URLError) Error() string {
	return fmt.Sprintf("url %q is not valid: %s; accepted forms: %s", e.URL, e.Reason, AcceptedURLForms)
}

// ParseURL reads a valkey://, valkeys://, redis:// or rediss:// URL into go-redis options.
// The "s" forms turn TLS on, verified against the system roots.
func ParseURL(raw string) (*redis.Options, error) {
	bad := func(reason string) error { return &URLError{URL: RedactURL(raw), Reason: reason} }
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return nil, bad("it has no scheme")
	}
	mapped, known := urlSchemes[strings.ToLower(scheme)]
	if !known {
		return nil, bad(fmt.Sprintf("scheme %q is not supported", scheme))
	}
	u, err := url.Parse(mapped + "://" + rest)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return nil, bad(err.Error())
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, bad("it has no host")
	}
	if !validHost(u.Hostname()) {
		return nil, bad(fmt.Sprintf("host %q is not a host name or IP address", u.Hostname()))
	}
	opts, err := redis.ParseURL(u.String())
	if err != nil {
		reason := strings.TrimPrefix(err.Error(), "redis: ")
		return nil, bad(reason)
	}
	if opts.TLSConfig != nil {
		opts.TLSConfig.MinVersion = tls.VersionTLS12
	}
	return opts, nil
}

// RedactURL hides the password in a URL, even one that does not parse or has no scheme:
// whatever stands between the first ":" and the last "@" of the part after "://" is hidden.
// It may hide more than the password, never less.
func RedactURL(raw string) string {
	prefix, rest := "", raw
	if scheme, after, ok := strings.Cut(raw, "://"); ok {
		prefix, rest = scheme+"://", after
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return raw
	}
	user, _, hasPass := strings.Cut(rest[:at], ":")
	if !hasPass {
		return raw
	}
	return prefix + user + ":xxxxx" + rest[at:]
}

// validHost reports a host name or IP address that can be dialled.
func validHost(host string) bool {
	if net.ParseIP(host) != nil {
		return true
	}
	host = strings.TrimSuffix(host, ".")
	if host == "" || len(host) > 253 {
		return false
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !isHostChar(r) {
				return false
			}
		}
	}
	return true
}

func isHostChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_'
}
