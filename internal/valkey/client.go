package valkey

import (
	"context"
	"crypto/tls"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Client is one connection pool, shared by all its callers. It dials nothing until a
// command needs the server.
type Client struct {
	addr       string
	tls        *tls.Config // nil without TLS
	acks       int
	ackTimeout time.Duration
	retries    int // how often a connection that could not be opened is tried again by the door
	build      func() redis.UniversalClient

	once sync.Once
	rdb  redis.UniversalClient

	groups groupCache
}

var quietLibrary sync.Once

// discardLogger drops go-redis's own log lines: every failure reaches the caller as a typed
// error, and stray lines on a plugin's stderr only confuse the program that runs it.
type discardLogger struct{}

func (discardLogger) Printf(context.Context, string, ...any) {}

// NewClient checks the options (URL, TLS material, mode), applies the defaults, and returns a
// client that has not dialled yet.
func NewClient(opts Options) (*Client, error) {
	quietLibrary.Do(func() { redis.SetLogger(discardLogger{}) })
	s, err := resolve(opts)
	if err != nil {
		return nil, err
	}
	return newClient(s), nil
}

func newClient(s settings) *Client {
	return &Client{
		addr:       s.addr,
		tls:        s.universal.TLSConfig,
		acks:       s.acks,
		ackTimeout: s.ackTimeout,
		retries:    max(s.universal.MaxRetries, 0),
		build:      func() redis.UniversalClient { return withOpenHook(redis.NewUniversalClient(s.universal)) },
	}
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
