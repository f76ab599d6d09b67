package provider

import (
	"fmt"
	"strconv"
	"time"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

// settings are every provider setting, an object before its attributes. Each row's `to` takes
// a typed pointer into valkey.Options, so a row that fills a field of another type does not
// compile; `field` is the name valkey.OptionError gives that field, which diagnostics look up
// (TestResolveSettings_EachSettingPrecedence checks that `to` fills the field `field` names).
var settings = []setting{
	{name: "url", env: "VALKEY_URL", field: "URL", def: valkey.DefaultURL, sensitive: true,
		to:        urlAt(func(o *valkey.Options) *string { return &o.URL }),
		conflicts: []string{"cluster", "sentinel"},
		doc: "Server URL for a single server: `" + valkey.AcceptedURLForms + "`. The `valkeys://` and `rediss://` forms turn TLS on " +
			"with the system's root certificates unless `tls` says otherwise. Conflicts with `cluster` and `sentinel`. " +
			"Sensitive, because it may carry a password."},
	{name: "username", env: "VALKEY_USERNAME", field: "Username", def: "default", // the server's default user
		to: stringAt(func(o *valkey.Options) *string { return &o.Username }),
		doc: "ACL user name for the data nodes; overrides the URL's user. With `aws_iam` there is no default: the IAM-enabled " +
			"user is required, and a plan without one fails."},
	{name: "password", env: "VALKEY_PASSWORD", field: "Password", sensitive: true,
		to:  stringAt(func(o *valkey.Options) *string { return &o.Password }),
		doc: "Password for the data nodes; overrides the URL's password. Never logged or stored in state."},
	{name: "db", env: "VALKEY_DB", field: "DB", def: "0", urlQuery: []string{"db"},
		to: intAt(func(o *valkey.Options) **int { return &o.DB }),
		doc: "Database number; overrides the URL's `/db`. With `cluster`, the database on every node: Valkey 9.0 and later " +
			"serve databases below their `cluster-databases` setting (1 unless raised) in Cluster mode, and earlier versions only 0."},
	{name: "dial_timeout", env: "VALKEY_DIAL_TIMEOUT", field: "DialTimeout",
		def: valkey.DefaultDialTimeout.String(), urlQuery: []string{"dial_timeout"},
		to:  durationAt(func(o *valkey.Options) *time.Duration { return &o.DialTimeout }),
		doc: "How long to wait for a connection (TCP and TLS handshake)"},
	{name: "command_timeout", env: "VALKEY_COMMAND_TIMEOUT", field: "CommandTimeout",
		def: valkey.DefaultCommandTimeout.String(), urlQuery: []string{"read_timeout", "write_timeout"},
		to:  durationAt(func(o *valkey.Options) *time.Duration { return &o.CommandTimeout }),
		doc: "How long to wait for a command's reply"},
	{name: "max_retries", env: "VALKEY_MAX_RETRIES", field: "MaxRetries",
		def: strconv.Itoa(valkey.DefaultMaxRetries), urlQuery: []string{"max_retries"},
		to: intAt(func(o *valkey.Options) **int { return &o.MaxRetries }),
		doc: "How many times a command is retried after a network error; `0` disables retries. `XGROUP CREATE` is never " +
			"resent once it was written, since a second one would answer `BUSYGROUP` and the group would read as adopted: " +
			"it is tried again only when nothing was sent (no connection could be opened in time), and a lost reply fails the apply instead."},
	{name: "min_replica_acks", env: "VALKEY_MIN_REPLICA_ACKS", field: "MinReplicaAcks",
		def: fmt.Sprintf("%d with sentinel or cluster, else 0", valkey.DefaultFailoverReplicaAcks),
		to:  intAt(func(o *valkey.Options) **int { return &o.MinReplicaAcks }),
		doc: "How many replicas must acknowledge a created group (`WAIT`, in the same round trip as `XGROUP CREATE`, on the " +
			"primary that ran it) before Terraform records it. A group that fewer replicas acknowledged could be lost by a failover, so " +
			"the apply fails and says so; applying again adopts it if it survived. " +
			fmt.Sprintf("Defaults to `%d` with `sentinel` and `cluster`, which fail over to replicas by themselves, ", valkey.DefaultFailoverReplicaAcks) +
			"else `0` (no wait); set `0` for a cluster whose primaries have no replicas."},
	{name: "replica_ack_timeout", env: "VALKEY_REPLICA_ACK_TIMEOUT", field: "ReplicaAckTimeout",
		def: valkey.DefaultReplicaAckTimeout.String(),
		to:  durationAt(func(o *valkey.Options) *time.Duration { return &o.ReplicaAckTimeout }),
		doc: "How long `WAIT` waits for `min_replica_acks` replicas after `XGROUP CREATE`"},

	{name: "proxy", env: "VALKEY_PROXY", field: "Proxy", sensitive: true,
		to: stringAt(func(o *valkey.Options) *string { return &o.Proxy }),
		doc: "SOCKS5 proxy that carries every connection (the server, every cluster node, the sentinels): " +
			"`socks5://[user:password@]host:port`, such as `ssh -D 1080 bastion` gives. Host names are resolved by the proxy " +
			"(`socks5h://` means the same), so a private endpoint's name need only resolve inside its network. Sensitive, because " +
			"it may carry a password."},

	{name: "tls", field: "TLS", to: objectAt(func(o *valkey.Options) { tlsOf(o) }),
		doc: "Turns TLS on for every connection (data nodes and sentinels): `tls = { ca_cert_file = \"...\" }`. " +
			"Without `ca_cert`, the system's roots verify the server. Setting any `VALKEY_TLS_*` variable also turns TLS on."},
	{name: "tls.ca_cert", env: "VALKEY_TLS_CA_CERT", field: "TLS.CACert", conflicts: []string{"tls.ca_cert_file"},
		to:  stringAt(func(o *valkey.Options) *string { return &tlsOf(o).CACert }),
		doc: "CA certificate(s) that verify the server as a PEM string. Conflicts with `ca_cert_file`."},
	{name: "tls.cert", env: "VALKEY_TLS_CERT", field: "TLS.Cert", conflicts: []string{"tls.cert_file"},
		to:  stringAt(func(o *valkey.Options) *string { return &tlsOf(o).Cert }),
		doc: "Client certificate for mutual TLS as a PEM string. Conflicts with `cert_file`."},
	{name: "tls.key", env: "VALKEY_TLS_KEY", field: "TLS.Key", sensitive: true, conflicts: []string{"tls.key_file"},
		to:  stringAt(func(o *valkey.Options) *string { return &tlsOf(o).Key }),
		doc: "Client private key for mutual TLS as a PEM string. Conflicts with `key_file`."},
	{name: "tls.ca_cert_file", env: "VALKEY_TLS_CA_CERT_FILE", field: "TLS.CACertFile",
		to:  stringAt(func(o *valkey.Options) *string { return &tlsOf(o).CACertFile }),
		doc: "Path of a PEM file holding the CA certificate(s). Conflicts with `ca_cert`."},
	{name: "tls.cert_file", env: "VALKEY_TLS_CERT_FILE", field: "TLS.CertFile",
		to:  stringAt(func(o *valkey.Options) *string { return &tlsOf(o).CertFile }),
		doc: "Path of a PEM file holding the client certificate. Conflicts with `cert`."},
	{name: "tls.key_file", env: "VALKEY_TLS_KEY_FILE", field: "TLS.KeyFile",
		to:  stringAt(func(o *valkey.Options) *string { return &tlsOf(o).KeyFile }),
		doc: "Path of a PEM file holding the client private key. Conflicts with `key`."},
	{name: "tls.server_name", env: "VALKEY_TLS_SERVER_NAME", field: "TLS.ServerName",
		to: stringAt(func(o *valkey.Options) *string { return &tlsOf(o).ServerName }),
		doc: "Name to verify in the server's certificate (and send as SNI). When unset, the host of the address as written " +
			"(`url`, a seed) or as announced (a cluster node, the primary the sentinels name) is verified, never the address " +
			"`cluster.address_map` dials instead."},
	{name: "tls.insecure_skip_verify", env: "VALKEY_TLS_INSECURE_SKIP_VERIFY", field: "TLS.InsecureSkipVerify",
		def: "false", urlQuery: []string{"skip_verify"},
		to:  boolAt(func(o *valkey.Options) *bool { return &tlsOf(o).InsecureSkipVerify }),
		doc: "Skip verification of the server's certificate. For tests only."},

	// The cluster object fills nothing itself: its attributes fill ClusterAddrs and AddressMap.
	{name: "cluster", env: "VALKEY_CLUSTER_ADDRESSES", to: objectAt(nil), conflicts: []string{"sentinel"},
		doc: "Connects to a Valkey Cluster: `cluster = { addresses = [\"node1:6379\"] }`. Commands are routed by " +
			"key slot, and MOVED/ASK redirections are followed. Conflicts with `url` and `sentinel`."},
	{name: "cluster.addresses", env: "VALKEY_CLUSTER_ADDRESSES", field: "ClusterAddrs",
		to:  listAt(func(o *valkey.Options) *[]string { return &o.ClusterAddrs }),
		doc: "Seed nodes as `host:port`; the rest of the cluster is discovered from them."},
	{name: "cluster.address_map", env: "VALKEY_CLUSTER_ADDRESS_MAP", field: "AddressMap",
		to: mapAt(func(o *valkey.Options) *map[string]string { return &o.AddressMap }),
		doc: "Turns the `host:port` a node announces into the `host:port` dialled, for a runner that reaches the nodes through " +
			"forwards: `address_map = { \"10.0.1.5:6379\" = \"127.0.0.1:7001\" }`. Seeds are mapped too. With `proxy`, the map is " +
			"applied first: the proxy is asked to dial the mapped address. TLS still verifies the " +
			"announced host (or `tls.server_name`), so certificates stay checked through a forward."},

	{name: "sentinel", env: "VALKEY_SENTINEL_MASTER_NAME", field: "Sentinel", to: objectAt(func(o *valkey.Options) { sentinelOf(o) }),
		doc: "Finds the current primary through Sentinel and follows it across failovers: " +
			"`sentinel = { master_name = \"primary\", addresses = [\"s1:26379\"] }`. " +
			"`username` and `password` here are the sentinels' own; the top-level ones authenticate to the data nodes."},
	{name: "sentinel.master_name", env: "VALKEY_SENTINEL_MASTER_NAME", field: "Sentinel.MasterName",
		to:  stringAt(func(o *valkey.Options) *string { return &sentinelOf(o).MasterName }),
		doc: "Name of the monitored primary."},
	{name: "sentinel.addresses", env: "VALKEY_SENTINEL_ADDRESSES", field: "Sentinel.Addrs",
		to:  listAt(func(o *valkey.Options) *[]string { return &sentinelOf(o).Addrs }),
		doc: "Sentinels as `host:port`."},
	{name: "sentinel.username", env: "VALKEY_SENTINEL_USERNAME", field: "Sentinel.Username",
		to:  stringAt(func(o *valkey.Options) *string { return &sentinelOf(o).Username }),
		doc: "ACL user for the sentinels."},
	{name: "sentinel.password", env: "VALKEY_SENTINEL_PASSWORD", field: "Sentinel.Password", sensitive: true,
		to:  stringAt(func(o *valkey.Options) *string { return &sentinelOf(o).Password }),
		doc: "Password for the sentinels."},

	{name: "aws_iam", field: "AWSIAM", to: objectAt(func(o *valkey.Options) { awsIAMOf(o) }), conflicts: []string{"password"},
		doc: "Authenticates with AWS IAM (ElastiCache node-based or serverless, MemoryDB): every new connection's password is a " +
			"fresh IAM token, a SigV4-presigned `connect` request valid for 15 minutes, signed with the standard AWS credential " +
			"chain (environment variables, shared config with profiles and SSO, web identity, container or instance metadata). " +
			"`username` is the IAM-enabled user (on ElastiCache its user id, which must equal its user name). Needs TLS (`tls`, or a " +
			"`valkeys://` url); connections are replaced after 11 hours, before the services close them at 12. Conflicts with " +
			"`password`. Setting any `VALKEY_AWS_IAM_*` variable also turns it on: " +
			"`aws_iam = { service = \"elasticache-serverless\", cache_name = \"my-cache\" }`."},
	{name: "aws_iam.service", env: "VALKEY_AWS_IAM_SERVICE", field: "AWSIAM.Service", oneOf: valkey.AWSIAMServices,
		to: stringAt(func(o *valkey.Options) *string { return &awsIAMOf(o).Service }),
		doc: "What the token is for: `elasticache` (a node-based cache), `elasticache-serverless` (signed with " +
			"`ResourceType=ServerlessCache`) or `memorydb`."},
	{name: "aws_iam.cache_name", env: "VALKEY_AWS_IAM_CACHE_NAME", field: "AWSIAM.CacheName",
		to:  stringAt(func(o *valkey.Options) *string { return &awsIAMOf(o).CacheName }),
		doc: "The replication group id (node-based ElastiCache), the serverless cache's name, or the MemoryDB cluster's name, in lower case."},
	{name: "aws_iam.region", env: "VALKEY_AWS_IAM_REGION", field: "AWSIAM.Region", def: "$AWS_REGION, then the profile's region",
		to:  stringAt(func(o *valkey.Options) *string { return &awsIAMOf(o).Region }),
		doc: "The AWS region of the cache."},
	{name: "aws_iam.profile", env: "VALKEY_AWS_IAM_PROFILE", field: "AWSIAM.Profile", def: "$AWS_PROFILE, then default",
		to:  stringAt(func(o *valkey.Options) *string { return &awsIAMOf(o).Profile }),
		doc: "The shared config profile whose credentials sign the tokens (`~/.aws/config`, SSO included)."},

	{name: "gcp_iam", field: "GCPIAM", to: objectAt(func(o *valkey.Options) { gcpIAMOf(o) }), conflicts: []string{"password", "aws_iam"},
		doc: "Authenticates with Google IAM (Memorystore for Valkey): every new connection's password is an OAuth2 access token of " +
			"the principal, which needs `roles/memorystore.dbConnectionUser`, from Application Default Credentials " +
			"(`GOOGLE_APPLICATION_CREDENTIALS`, `gcloud auth application-default login`, workload identity federation, the " +
			"metadata server), fetched again when it is about to expire. Needs TLS with the instance's CA. Conflicts with " +
			"`password` and `aws_iam`: `gcp_iam = {}`."},
	{name: "gcp_iam.credentials_file", env: "VALKEY_GCP_IAM_CREDENTIALS_FILE", field: "GCPIAM.CredentialsFile",
		def: "Application Default Credentials",
		to:  stringAt(func(o *valkey.Options) *string { return &gcpIAMOf(o).CredentialsFile }),
		doc: "A Google credentials file (service account key, authorized user or external account) to use instead of Application Default Credentials."},
}

// gcpIAMOf is the Google IAM options of o, made when o has none.
func gcpIAMOf(o *valkey.Options) *valkey.GCPIAMOptions {
	if o.GCPIAM == nil {
		o.GCPIAM = &valkey.GCPIAMOptions{}
	}
	return o.GCPIAM
}

// awsIAMOf is the AWS IAM options of o, made when o has none: an aws_iam setting turns IAM on.
func awsIAMOf(o *valkey.Options) *valkey.AWSIAMOptions {
	if o.AWSIAM == nil {
		o.AWSIAM = &valkey.AWSIAMOptions{}
	}
	return o.AWSIAM
}

// tlsOf is the TLS options of o, made when o has none: a TLS setting turns TLS on.
func tlsOf(o *valkey.Options) *valkey.TLSOptions {
	if o.TLS == nil {
		o.TLS = &valkey.TLSOptions{}
	}
	return o.TLS
}

// sentinelOf is the Sentinel options of o, made when o has none.
func sentinelOf(o *valkey.Options) *valkey.SentinelOptions {
	if o.Sentinel == nil {
		o.Sentinel = &valkey.SentinelOptions{}
	}
	return o.Sentinel
}
