package provider

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

// Environment variables read when an attribute is not set.
const (
	envURL               = "VALKEY_URL"
	envUsername          = "VALKEY_USERNAME"
	envPassword          = "VALKEY_PASSWORD"
	envDB                = "VALKEY_DB"
	envDialTimeout       = "VALKEY_DIAL_TIMEOUT"
	envCommandTimeout    = "VALKEY_COMMAND_TIMEOUT"
	envMaxRetries        = "VALKEY_MAX_RETRIES"
	envMinReplicaAcks    = "VALKEY_MIN_REPLICA_ACKS"
	envReplicaAckTimeout = "VALKEY_REPLICA_ACK_TIMEOUT"

	envTLSCACert             = "VALKEY_TLS_CA_CERT"
	envTLSCert               = "VALKEY_TLS_CERT"
	envTLSKey                = "VALKEY_TLS_KEY"
	envTLSCACertFile         = "VALKEY_TLS_CA_CERT_FILE"
	envTLSCertFile           = "VALKEY_TLS_CERT_FILE"
	envTLSKeyFile            = "VALKEY_TLS_KEY_FILE"
	envTLSServerName         = "VALKEY_TLS_SERVER_NAME"
	envTLSInsecureSkipVerify = "VALKEY_TLS_INSECURE_SKIP_VERIFY"

	envClusterAddresses = "VALKEY_CLUSTER_ADDRESSES"

	envSentinelMasterName = "VALKEY_SENTINEL_MASTER_NAME"
	envSentinelAddresses  = "VALKEY_SENTINEL_ADDRESSES"
	envSentinelUsername   = "VALKEY_SENTINEL_USERNAME"
	envSentinelPassword   = "VALKEY_SENTINEL_PASSWORD"
)

// resolver picks each setting: the attribute, then its environment variable; what neither
// sets stays zero, and internal/valkey applies the default. Unknown attributes are recorded by
// name (a client made from such options never dials), and so are variables that do not parse.
type resolver struct {
	ctx     context.Context
	getenv  func(string) string
	unknown []string
	envUsed int // how many variables were read with a value: tls uses it to see any VALKEY_TLS_* set
	diags   diag.Diagnostics
}

// env reads a variable and remembers that it was used.
func (r *resolver) env(name string) string {
	v := r.getenv(name)
	if v != "" {
		r.envUsed++
	}
	return v
}

// known reports whether value can be read; an unknown one is recorded under name.
func (r *resolver) known(name string, value unknowable) bool {
	if value.IsUnknown() {
		r.unknown = append(r.unknown, name)
		return false
	}
	return true
}

type unknowable interface{ IsUnknown() bool }

func (r *resolver) str(name string, attr types.String, env string) string {
	switch {
	case !r.known(name, attr):
		return ""
	case !attr.IsNull():
		return attr.ValueString()
	}
	return r.env(env)
}

func (r *resolver) list(name string, attr types.List, env string) []string {
	switch {
	case !r.known(name, attr):
		return nil
	case attr.IsNull():
		return splitList(r.env(env))
	}
	var values []types.String
	r.diags.Append(attr.ElementsAs(r.ctx, &values, false)...)
	out := make([]string, 0, len(values))
	for _, v := range values {
		if !r.known(name, v) {
			return nil
		}
		out = append(out, v.ValueString())
	}
	return out
}

// int is nil when neither the attribute nor the variable is set.
func (r *resolver) int(name string, attr types.Int64, env string) *int {
	switch {
	case !r.known(name, attr):
		return nil
	case !attr.IsNull():
		return new(int(attr.ValueInt64()))
	}
	v := r.env(env)
	if v == "" {
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		r.badEnv(env, v, "is not a whole number of 0 or more")
		return nil
	}
	return &n
}

func (r *resolver) duration(name string, attr types.String, env string) time.Duration {
	v := r.str(name, attr, env)
	if v == "" {
		return 0
	}
	d, err := parseDuration(v)
	if err != nil {
		r.badSetting(name, env, attr, v, err.Error())
	}
	return d
}

func (r *resolver) bool(name string, attr types.Bool, env string) bool {
	switch {
	case !r.known(name, attr):
		return false
	case !attr.IsNull():
		return attr.ValueBool()
	}
	v := r.env(env)
	if v == "" {
		return false
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		r.badEnv(env, v, "is not true or false")
	}
	return b
}

// object decodes a nested attribute into target; set is false when it is null or unknown.
func (r *resolver) object(name string, attr types.Object, target any) (set bool) {
	if !r.known(name, attr) || attr.IsNull() {
		return false
	}
	r.diags.Append(attr.As(r.ctx, target, basetypes.ObjectAsOptions{})...)
	return true
}

// attributePath is the path of a setting named like "tls.ca_cert".
func attributePath(name string) path.Path {
	parts := strings.Split(name, ".")
	p := path.Root(parts[0])
	for _, part := range parts[1:] {
		p = p.AtName(part)
	}
	return p
}

func (r *resolver) badEnv(env, value, problem string) {
	r.diags.AddError("Invalid Environment Variable",
		fmt.Sprintf("%s=%q %s. Fix or unset the variable, or set the matching provider attribute.", env, value, problem))
}

// badSetting reports a value that does not parse, on the attribute or on its variable.
func (r *resolver) badSetting(name, env string, attr types.String, value, problem string) {
	if attr.IsNull() {
		r.badEnv(env, value, problem)
		return
	}
	r.diags.AddAttributeError(attributePath(name), "Invalid Provider Attribute", fmt.Sprintf("%s = %q %s.", name, value, problem))
}

// optionsFrom resolves every setting of the provider configuration (attribute, then
// environment variable; defaults are internal/valkey's) and says where the URL came from.
func optionsFrom(ctx context.Context, config providerModel, getenv func(string) string) (valkey.Options, string, diag.Diagnostics) {
	r := &resolver{ctx: ctx, getenv: getenv}
	opts := valkey.Options{
		Username:          r.str("username", config.Username, envUsername),
		Password:          r.str("password", config.Password, envPassword),
		DB:                r.int("db", config.DB, envDB),
		DialTimeout:       r.duration("dial_timeout", config.DialTimeout, envDialTimeout),
		CommandTimeout:    r.duration("command_timeout", config.CommandTimeout, envCommandTimeout),
		MaxRetries:        r.int("max_retries", config.MaxRetries, envMaxRetries),
		MinReplicaAcks:    r.int("min_replica_acks", config.MinReplicaAcks, envMinReplicaAcks),
		ReplicaAckTimeout: r.duration("replica_ack_timeout", config.ReplicaAckTimeout, envReplicaAckTimeout),
	}
	opts.TLS = r.tls(config.TLS)
	source := "the url attribute"
	var cluster clusterModel
	var sentinel sentinelModel
	urlSet := !config.URL.IsNull()
	switch {
	case r.object("cluster", config.Cluster, &cluster) || (!urlSet && config.Sentinel.IsNull() && getenv(envClusterAddresses) != ""):
		opts.ClusterAddrs = r.list("cluster.addresses", cluster.Addresses, envClusterAddresses)
		source = "the cluster attribute"
	case r.object("sentinel", config.Sentinel, &sentinel) || (!urlSet && getenv(envSentinelMasterName) != ""):
		opts.Sentinel = &valkey.SentinelOptions{
			MasterName: r.str("sentinel.master_name", sentinel.MasterName, envSentinelMasterName),
			Addrs:      r.list("sentinel.addresses", sentinel.Addresses, envSentinelAddresses),
			Username:   r.str("sentinel.username", sentinel.Username, envSentinelUsername),
			Password:   r.str("sentinel.password", sentinel.Password, envSentinelPassword),
		}
		source = "the sentinel attribute"
	default:
		opts.URL = r.str("url", config.URL, envURL)
		switch {
		case !urlSet && opts.URL != "":
			source = "the " + envURL + " environment variable"
		case opts.URL == "" && !config.URL.IsUnknown():
			source = "the default, " + valkey.DefaultURL
		}
	}
	opts.Unknown = r.unknown
	return opts, source, r.diags
}

// tls resolves the tls attribute; any VALKEY_TLS_* variable turns TLS on without it.
func (r *resolver) tls(attr types.Object) *valkey.TLSOptions {
	var m tlsModel
	set := r.object("tls", attr, &m)
	used := r.envUsed
	t := &valkey.TLSOptions{
		CACert:             r.str("tls.ca_cert", m.CACert, envTLSCACert),
		Cert:               r.str("tls.cert", m.Cert, envTLSCert),
		Key:                r.str("tls.key", m.Key, envTLSKey),
		CACertFile:         r.str("tls.ca_cert_file", m.CACertFile, envTLSCACertFile),
		CertFile:           r.str("tls.cert_file", m.CertFile, envTLSCertFile),
		KeyFile:            r.str("tls.key_file", m.KeyFile, envTLSKeyFile),
		ServerName:         r.str("tls.server_name", m.ServerName, envTLSServerName),
		InsecureSkipVerify: r.bool("tls.insecure_skip_verify", m.InsecureSkipVerify, envTLSInsecureSkipVerify),
	}
	if !set && r.envUsed == used {
		return nil
	}
	return t
}

// splitList reads a comma-separated environment variable; empty means none.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
