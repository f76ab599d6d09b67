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
	db         int         // the database every connection selects
	cluster    bool        // a cluster client: connections fail to open on a node
	tls        *tls.Config // nil without TLS
	acks       int
	ackTimeout time.Duration
	retries    int    // how often a connection that could not be opened is tried again by EnsureGroup
	token      string // the cloud whose tokens are the password, for messages; "" for a password
	build      func() redis.UniversalClient
	unreached  *unreachedNodes // a cluster's announced nodes that cannot be reached; nil outside a cluster

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

func newClient(s resolved) *Client {
	var unreached *unreachedNodes
	if s.universal.IsClusterMode {
		unreached = newUnreachedNodes(s.universal.Addrs)
	}
	return &Client{
		addr:       s.addr,
		db:         s.universal.DB,
		cluster:    s.universal.IsClusterMode,
		tls:        s.universal.TLSConfig,
		acks:       s.acks,
		ackTimeout: s.ackTimeout,
		retries:    max(s.universal.MaxRetries, 0),
		token:      s.token,
		unreached:  unreached,
		build:      func() redis.UniversalClient { return withHooks(newUniversalClient(s.universal), unreached) },
	}
}

// newUniversalClient is redis.NewUniversalClient, with the database on every node of a
// cluster: go-redis's ClusterOptions have no DB, so each node's client is made with it
// (ClusterOptions.NewClient), and the node opens every connection with SELECT in the handshake
// pipeline, as a single server's client does. go-redis makes a node's client whenever it first
// meets the node (a seed, CLUSTER SLOTS, a MOVED or ASK to a node it did not know), so nodes
// found later select it too. An OnConnect that sent SELECT would do the same with one more
// round trip per connection, outside the handshake.
func newUniversalClient(u *redis.UniversalOptions) redis.UniversalClient {
	if !u.IsClusterMode || u.DB == 0 {
		return redis.NewUniversalClient(u)
	}
	opt := u.Cluster()
	opt.NewClient = func(node *redis.Options) *redis.Client {
		node.DB = u.DB
		return redis.NewClient(node)
	}
	return redis.NewClusterClient(opt)
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
