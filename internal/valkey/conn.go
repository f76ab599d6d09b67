package valkey

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultURL is where the provider looks when nothing else is configured.
const DefaultURL = "valkey://127.0.0.1:6379/0"

// AcceptedURLForms names the URL shapes ParseURL takes, for error messages.
const AcceptedURLForms = "valkey://[user[:password]@]host[:port][/db], valkeys://... (TLS), redis://... or rediss://... (TLS)"

// Options say how to reach the server. The zero value of each field means "library default".
type Options struct {
	URL      string
	Username string // overrides the URL's user when set
	Password string // overrides the URL's password when set

	DialTimeout    time.Duration
	CommandTimeout time.Duration
	MaxRetries     int // 0 = go-redis default; -1 = no retries
	PoolSize       int
}

// Client is one shared connection pool per provider instance. It dials nothing until a
// command needs the server.
type Client struct {
	opts Options
	addr string

	once sync.Once
	rdb  redis.UniversalClient

	groups groupCache
}

var quietLibrary sync.Once

// discardLogger drops go-redis's own log lines: every failure reaches the caller as a typed
// error, and stray lines on the plugin's stderr only confuse Terraform's output.
type discardLogger struct{}

func (discardLogger) Printf(context.Context, string, ...any) {}

// NewClient checks the options and returns a client that has not dialled yet.
func NewClient(opts Options) (*Client, error) {
	quietLibrary.Do(func() { redis.SetLogger(discardLogger{}) })
	if opts.URL == "" {
		opts.URL = DefaultURL
	}
	parsed, err := ParseURL(opts.URL)
	if err != nil {
		return nil, err
	}
	return &Client{opts: opts, addr: parsed.Addr}, nil
}

// Addr is the server address commands go to, for messages. It never carries a password.
func (c *Client) Addr() string { return c.addr }

// Universal returns the go-redis client, building it on first use.
func (c *Client) Universal() redis.UniversalClient {
	c.once.Do(func() {
		o, _ := ParseURL(c.opts.URL) // NewClient has already parsed it without error.
		if c.opts.Username != "" {
			o.Username = c.opts.Username
		}
		if c.opts.Password != "" {
			o.Password = c.opts.Password
		}
		if c.opts.DialTimeout > 0 {
			o.DialTimeout = c.opts.DialTimeout
		}
		if c.opts.CommandTimeout > 0 {
			o.ReadTimeout = c.opts.CommandTimeout
			o.WriteTimeout = c.opts.CommandTimeout
		}
		if c.opts.MaxRetries != 0 {
			o.MaxRetries = c.opts.MaxRetries
		}
		if c.opts.PoolSize > 0 {
			o.PoolSize = c.opts.PoolSize
		}
		// RESP2 keeps replies identical on Valkey and Redis 7.0 and skips HELLO's extra work.
		o.Protocol = 2
		o.DisableIdentity = true
		c.rdb = redis.NewClient(o)
	})
	return c.rdb
}

// Close releases the pool if it was ever built.
func (c *Client) Close() error {
	if c.rdb == nil {
		return nil
	}
	return c.rdb.Close()
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

// RedactURL hides the password in a URL, even one that does not parse.
func RedactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		if _, has := u.User.Password(); !has {
			return raw
		}
		return u.Redacted()
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		scheme, rest = "", raw
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return raw
	}
	user, _, hasPass := strings.Cut(rest[:at], ":")
	if !hasPass {
		return raw
	}
	if scheme != "" {
		scheme += "://"
	}
	return scheme + user + ":xxxxx" + rest[at:]
}
