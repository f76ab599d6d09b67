package valkey

import (
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultURL is where the client connects when Options names no server.
const DefaultURL = "valkey://127.0.0.1:6379/0"

// Defaults for the Options left unset. They are go-redis's own where go-redis has one,
// written down here so that they are set in one place and documented as they are.
const (
	DefaultDialTimeout    = 5 * time.Second
	DefaultCommandTimeout = 3 * time.Second
	DefaultMaxRetries     = 3
	// DefaultReplicaAckTimeout bounds EnsureGroup's WAIT when replica acknowledgements are asked for.
	DefaultReplicaAckTimeout = time.Second
	// DefaultFailoverReplicaAcks is MinReplicaAcks with Sentinel and with a cluster: both fail
	// over to a replica by themselves, so a write only the primary held when it died is lost.
	DefaultFailoverReplicaAcks = 1
)

// Options say how to reach the server. The zero value of each field means "default", and the
// defaults above are applied by NewClient only. At most one of ClusterAddrs and Sentinel is
// set; with neither, URL names one server.
type Options struct {
	URL      string // one server; "" means DefaultURL. Not used with ClusterAddrs or Sentinel
	Username string // overrides the URL's user when set
	Password string // overrides the URL's password when set
	DB       *int   // overrides the URL's database when set; in a cluster, the database of every node

	TLS          *TLSOptions // nil: TLS only for valkeys:// and rediss:// URLs
	ClusterAddrs []string    // seed nodes, host:port
	Sentinel     *SentinelOptions

	DialTimeout    time.Duration // 0: DefaultDialTimeout
	CommandTimeout time.Duration // 0: DefaultCommandTimeout
	MaxRetries     *int          // nil: DefaultMaxRetries; 0: no retries

	// MinReplicaAcks > 0 makes EnsureGroup confirm its write with WAIT, on the connection that
	// carried the create (in a cluster, on the primary that ran it): at least this many replicas
	// must acknowledge it within ReplicaAckTimeout. nil: DefaultFailoverReplicaAcks with Sentinel
	// or a cluster, else none.
	MinReplicaAcks    *int
	ReplicaAckTimeout time.Duration // 0: DefaultReplicaAckTimeout

	// AWSIAM makes each new connection's password an AWS IAM token (ElastiCache, MemoryDB).
	AWSIAM *AWSIAMOptions
	// GCPIAM makes each new connection's password a Google OAuth2 access token (Memorystore).
	GCPIAM *GCPIAMOptions

	// Proxy, socks5://[user:password@]host:port, carries every connection; the proxy resolves host names.
	Proxy string
	// AddressMap turns the host:port a node announces (or a seed) into the host:port dialled; TLS
	// still verifies the announced host unless TLS.ServerName is set.
	AddressMap map[string]string
}

// TLSOptions turn TLS on. PEM strings and file paths are alternatives for the same thing.
type TLSOptions struct {
	CACert, Cert, Key             string // PEM
	CACertFile, CertFile, KeyFile string
	ServerName                    string // default: the host asked for (written or announced), before AddressMap
	InsecureSkipVerify            bool
}

// SentinelOptions find the current primary through Sentinel.
type SentinelOptions struct {
	MasterName string
	Addrs      []string
	Username   string // for the sentinels; the data nodes' user is Options.Username
	Password   string
}

// dialAttempts is one: go-redis would otherwise dial five times per command attempt, and a
// dial timeout of 5s would become 25s. Command retries (MaxRetries) still redial.
const dialAttempts = 1

// resolved is Options with every default applied, ready for go-redis.
type resolved struct {
	universal  *redis.UniversalOptions
	addr       string // where commands go, for messages; never a password
	acks       int    // replica acknowledgements EnsureGroup waits for
	ackTimeout time.Duration
	token      string  // the cloud whose tokens are the password ("AWS IAM"), for messages; "" for none
	aws        *awsIAM // the signer of AWS IAM tokens, when AWSIAM is set
}

// resolve checks opts and applies the defaults: the one place that does either. go-redis's
// UniversalOptions then builds the client for the mode (standalone, cluster or sentinel).
func resolve(opts Options) (resolved, error) {
	tlsConfig, err := opts.TLS.config()
	if err != nil {
		return resolved{}, err
	}
	u := &redis.UniversalOptions{
		Username:      opts.Username,
		Password:      opts.Password,
		TLSConfig:     tlsConfig,
		DialTimeout:   orDefault(opts.DialTimeout, DefaultDialTimeout),
		ReadTimeout:   orDefault(opts.CommandTimeout, DefaultCommandTimeout),
		WriteTimeout:  orDefault(opts.CommandTimeout, DefaultCommandTimeout),
		MaxRetries:    DefaultMaxRetries,
		DialerRetries: dialAttempts,
		// RESP2 keeps replies identical on Valkey and Redis 7.0 (the parsers read RESP2), and no
		// CLIENT SETINFO is sent, so the minimal ACL need not allow it.
		Protocol:        2,
		DisableIdentity: true,
	}
	if opts.MaxRetries != nil {
		u.MaxRetries = *opts.MaxRetries
		if u.MaxRetries == 0 {
			u.MaxRetries = -1 // go-redis reads 0 as its default and -1 as none
		}
	}
	if opts.DB != nil {
		u.DB = *opts.DB
	}
	s := resolved{universal: u, ackTimeout: orDefault(opts.ReplicaAckTimeout, DefaultReplicaAckTimeout)}
	switch {
	case len(opts.ClusterAddrs) > 0 && opts.Sentinel != nil:
		return resolved{}, &OptionError{Field: "Sentinel", Reason: "cannot be used together with a cluster: choose one mode"}
	case len(opts.ClusterAddrs) > 0:
		if err := clusterOptions(opts, u); err != nil {
			return resolved{}, err
		}
		s.addr = "cluster " + strings.Join(opts.ClusterAddrs, ",")
		s.acks = DefaultFailoverReplicaAcks
	case opts.Sentinel != nil:
		if err := sentinelOptions(opts, u); err != nil {
			return resolved{}, err
		}
		s.addr = "primary " + strconv.Quote(opts.Sentinel.MasterName) + " via sentinel " + strings.Join(opts.Sentinel.Addrs, ",")
		s.acks = DefaultFailoverReplicaAcks
	default:
		if err := urlOptions(opts, u); err != nil {
			return resolved{}, err
		}
		s.addr = u.Addrs[0]
	}
	if opts.MinReplicaAcks != nil {
		s.acks = *opts.MinReplicaAcks
	}
	if s.acks > 0 {
		u.ReadTimeout += s.ackTimeout // EnsureGroup's WAIT may hold its reply that long
	}
	if err := dialOptions(opts, u); err != nil {
		return resolved{}, err
	}
	if err := tokenOptions(opts, u, &s); err != nil {
		return resolved{}, err
	}
	return s, nil
}

// clusterOptions names the seeds. The database (u.DB) is not a cluster option in go-redis:
// newUniversalClient gives it to every node.
func clusterOptions(opts Options, u *redis.UniversalOptions) error {
	if err := checkAddrs("ClusterAddrs", opts.ClusterAddrs); err != nil {
		return err
	}
	u.Addrs, u.IsClusterMode = opts.ClusterAddrs, true
	return nil
}

func sentinelOptions(opts Options, u *redis.UniversalOptions) error {
	st := opts.Sentinel
	if st.MasterName == "" {
		return &OptionError{Field: "Sentinel.MasterName", Reason: "is empty"}
	}
	if err := checkAddrs("Sentinel.Addrs", st.Addrs); err != nil {
		return err
	}
	u.MasterName, u.Addrs = st.MasterName, st.Addrs
	u.SentinelUsername, u.SentinelPassword = st.Username, st.Password
	return nil
}

// urlOptions fills in one server from the URL; the other options win over the URL's parts.
func urlOptions(opts Options, u *redis.UniversalOptions) error {
	raw := opts.URL
	if raw == "" {
		raw = DefaultURL
	}
	o, err := ParseURL(raw)
	if err != nil {
		return err
	}
	u.Addrs = []string{o.Addr}
	if u.Username == "" {
		u.Username = o.Username
	}
	if u.Password == "" {
		u.Password = o.Password
	}
	if opts.DB == nil {
		u.DB = o.DB
	}
	switch {
	case u.TLSConfig != nil && u.TLSConfig.ServerName == "" && o.TLSConfig != nil:
		u.TLSConfig.ServerName = o.TLSConfig.ServerName
	case u.TLSConfig == nil:
		u.TLSConfig = o.TLSConfig
	}
	return nil
}

func checkAddrs(field string, addrs []string) error {
	if len(addrs) == 0 {
		return &OptionError{Field: field, Reason: "has no address"}
	}
	for _, a := range addrs {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return &OptionError{Field: field, Reason: "has " + strconv.Quote(a) + ", which is not host:port"}
		}
	}
	return nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
