// Package provider holds the Terraform side of the Valkey provider: schema, plan, state and
// diagnostics. Every Valkey command lives in internal/valkey.
package provider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/objectvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

var _ provider.Provider = (*valkeyProvider)(nil)
var _ provider.ProviderWithFunctions = (*valkeyProvider)(nil)

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

// envTLS lists the variables whose presence turns TLS on when there is no tls block.
var envTLS = []string{envTLSCACert, envTLSCert, envTLSKey, envTLSCACertFile, envTLSCertFile, envTLSKeyFile, envTLSServerName, envTLSInsecureSkipVerify}

type valkeyProvider struct {
	version string
}

type providerModel struct {
	URL               types.String   `tfsdk:"url"`
	Username          types.String   `tfsdk:"username"`
	Password          types.String   `tfsdk:"password"`
	DB                types.Int64    `tfsdk:"db"`
	DialTimeout       types.String   `tfsdk:"dial_timeout"`
	CommandTimeout    types.String   `tfsdk:"command_timeout"`
	MaxRetries        types.Int64    `tfsdk:"max_retries"`
	MinReplicaAcks    types.Int64    `tfsdk:"min_replica_acks"`
	ReplicaAckTimeout types.String   `tfsdk:"replica_ack_timeout"`
	TLS               *tlsModel      `tfsdk:"tls"`
	Cluster           *clusterModel  `tfsdk:"cluster"`
	Sentinel          *sentinelModel `tfsdk:"sentinel"`
}

type tlsModel struct {
	CACert             types.String `tfsdk:"ca_cert"`
	Cert               types.String `tfsdk:"cert"`
	Key                types.String `tfsdk:"key"`
	CACertFile         types.String `tfsdk:"ca_cert_file"`
	CertFile           types.String `tfsdk:"cert_file"`
	KeyFile            types.String `tfsdk:"key_file"`
	ServerName         types.String `tfsdk:"server_name"`
	InsecureSkipVerify types.Bool   `tfsdk:"insecure_skip_verify"`
}

type clusterModel struct {
	Addresses []types.String `tfsdk:"addresses"`
}

type sentinelModel struct {
	MasterName types.String   `tfsdk:"master_name"`
	Addresses  []types.String `tfsdk:"addresses"`
	Username   types.String   `tfsdk:"username"`
	Password   types.String   `tfsdk:"password"`
}

// New returns a constructor for the provider, as providerserver expects.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &valkeyProvider{version: version} }
}

func (p *valkeyProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "valkey"
	resp.Version = p.version
}

// envDoc is the sentence every attribute's description ends with.
func envDoc(env, def string) string {
	if def == "" {
		return fmt.Sprintf(" Defaults to `$%s`.", env)
	}
	return fmt.Sprintf(" Defaults to `$%s`, then `%s`.", env, def)
}

func (p *valkeyProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	tlsPEM := func(what, file string, sensitive bool, env string) schema.StringAttribute {
		return schema.StringAttribute{
			MarkdownDescription: what + " as a PEM string. Conflicts with `" + file + "`." + envDoc(env, ""),
			Optional:            true,
			Sensitive:           sensitive,
			Validators:          []validator.String{stringvalidator.ConflictsWith(path.MatchRelative().AtParent().AtName(file))},
		}
	}
	tlsFile := func(what, inline, env string) schema.StringAttribute {
		return schema.StringAttribute{
			MarkdownDescription: "Path of a PEM file holding " + what + ". Conflicts with `" + inline + "`." + envDoc(env, ""),
			Optional:            true,
		}
	}
	durationAttr := func(what, env string, def time.Duration) schema.StringAttribute {
		return schema.StringAttribute{
			MarkdownDescription: what + `, a Go duration such as "5s" or "500ms".` + envDoc(env, def.String()),
			Optional:            true,
			Validators:          []validator.String{durationValidator{}},
		}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Declares Valkey stream consumer groups the safe way: create or adopt, never destroy. " +
			"Connects to one server (`url`), a cluster (`cluster` block) or a primary found through Sentinel (`sentinel` block), " +
			"with TLS (`tls` block or a `valkeys://` url) and ACL users. Nothing is dialled until a command needs the server.",
		Attributes: map[string]schema.Attribute{
			"url": schema.StringAttribute{
				MarkdownDescription: fmt.Sprintf("Server URL for a single server: `%s`. The `valkeys://` and `rediss://` forms turn TLS on "+
					"with the system's root certificates unless a `tls` block says otherwise. Conflicts with `cluster` and `sentinel`. "+
					"Sensitive, because it may carry a password.",
					valkey.AcceptedURLForms) + envDoc(envURL, valkey.DefaultURL),
				Optional:  true,
				Sensitive: true,
				Validators: []validator.String{urlValidator{},
					stringvalidator.ConflictsWith(path.MatchRoot("cluster"), path.MatchRoot("sentinel"))},
			},
			"username": schema.StringAttribute{
				MarkdownDescription: "ACL user name for the data nodes; overrides the URL's user." + envDoc(envUsername, "default"),
				Optional:            true,
			},
			"password": schema.StringAttribute{
				MarkdownDescription: "Password for the data nodes; overrides the URL's password. Never logged or stored in state." + envDoc(envPassword, ""),
				Optional:            true,
				Sensitive:           true,
			},
			"db": schema.Int64Attribute{
				MarkdownDescription: "Database number; overrides the URL's `/db`. Not allowed with `cluster` (a cluster has only database 0)." + envDoc(envDB, "0"),
				Optional:            true,
				Validators: []validator.Int64{int64validator.AtLeast(0),
					int64validator.ConflictsWith(path.MatchRoot("cluster"))},
			},
			"dial_timeout":    durationAttr("How long to wait for a connection (TCP and TLS handshake)", envDialTimeout, valkey.DefaultDialTimeout),
			"command_timeout": durationAttr("How long to wait for a command's reply", envCommandTimeout, valkey.DefaultCommandTimeout),
			"max_retries": schema.Int64Attribute{
				MarkdownDescription: "How many times a command is retried after a network error; `0` disables retries." +
					envDoc(envMaxRetries, strconv.Itoa(valkey.DefaultMaxRetries)),
				Optional:   true,
				Validators: []validator.Int64{int64validator.AtLeast(0)},
			},
			"min_replica_acks": schema.Int64Attribute{
				MarkdownDescription: "How many replicas must acknowledge a created group (`WAIT`, in the same round trip as the door) " +
					"before Terraform records it. A group that fewer replicas acknowledged could be lost by a failover, so the apply " +
					"fails and says so; applying again adopts it if it survived. Not available with `cluster`. Defaults to `1` with " +
					"`sentinel`, else `0` (no wait)." + envDoc(envMinReplicaAcks, "1 with sentinel, else 0"),
				Optional: true,
				Validators: []validator.Int64{int64validator.AtLeast(0),
					int64validator.ConflictsWith(path.MatchRoot("cluster"))},
			},
			"replica_ack_timeout": durationAttr("How long the door waits for `min_replica_acks` replicas", envReplicaAckTimeout, valkey.DefaultReplicaAckTimeout),
		},
		Blocks: map[string]schema.Block{
			"tls": schema.SingleNestedBlock{
				MarkdownDescription: "Turns TLS on for every connection (data nodes and sentinels). Without `ca_cert`, the system's roots " +
					"verify the server. Setting any `VALKEY_TLS_*` variable also turns TLS on.",
				Attributes: map[string]schema.Attribute{
					"ca_cert":      tlsPEM("CA certificate(s) that verify the server", "ca_cert_file", false, envTLSCACert),
					"cert":         tlsPEM("Client certificate for mutual TLS", "cert_file", false, envTLSCert),
					"key":          tlsPEM("Client private key for mutual TLS", "key_file", true, envTLSKey),
					"ca_cert_file": tlsFile("the CA certificate(s)", "ca_cert", envTLSCACertFile),
					"cert_file":    tlsFile("the client certificate", "cert", envTLSCertFile),
					"key_file":     tlsFile("the client private key", "key", envTLSKeyFile),
					"server_name": schema.StringAttribute{
						MarkdownDescription: "Name to verify in the server's certificate (and send as SNI). Defaults to the host dialled." + envDoc(envTLSServerName, ""),
						Optional:            true,
					},
					"insecure_skip_verify": schema.BoolAttribute{
						MarkdownDescription: "Skip verification of the server's certificate. For tests only." + envDoc(envTLSInsecureSkipVerify, "false"),
						Optional:            true,
					},
				},
			},
			"cluster": schema.SingleNestedBlock{
				MarkdownDescription: "Connects to a Valkey Cluster: commands are routed by key slot, and MOVED/ASK redirections are followed. " +
					"Conflicts with `url`, `db` and `sentinel`.",
				Attributes: map[string]schema.Attribute{
					"addresses": schema.ListAttribute{
						MarkdownDescription: "Seed nodes as `host:port`; the rest of the cluster is discovered from them." +
							fmt.Sprintf(" Defaults to `$%s` (comma-separated).", envClusterAddresses),
						ElementType: types.StringType,
						Optional:    true,
						Validators:  []validator.List{listvalidator.SizeAtLeast(1)},
					},
				},
				Validators: []validator.Object{objectvalidator.ConflictsWith(path.MatchRoot("sentinel"))},
			},
			"sentinel": schema.SingleNestedBlock{
				MarkdownDescription: "Finds the current primary through Sentinel and follows it across failovers. " +
					"`username` and `password` here are the sentinels' own; the top-level ones authenticate to the data nodes.",
				Attributes: map[string]schema.Attribute{
					"master_name": schema.StringAttribute{
						MarkdownDescription: "Name of the monitored primary." + envDoc(envSentinelMasterName, ""),
						Optional:            true,
					},
					"addresses": schema.ListAttribute{
						MarkdownDescription: "Sentinels as `host:port`." + fmt.Sprintf(" Defaults to `$%s` (comma-separated).", envSentinelAddresses),
						ElementType:         types.StringType,
						Optional:            true,
						Validators:          []validator.List{listvalidator.SizeAtLeast(1)},
					},
					"username": schema.StringAttribute{
						MarkdownDescription: "ACL user for the sentinels." + envDoc(envSentinelUsername, ""),
						Optional:            true,
					},
					"password": schema.StringAttribute{
						MarkdownDescription: "Password for the sentinels." + envDoc(envSentinelPassword, ""),
						Optional:            true,
						Sensitive:           true,
					},
				},
			},
		},
	}
}

func (p *valkeyProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var config providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := checkEnv(os.Getenv); err != nil {
		resp.Diagnostics.AddError("Invalid Environment Variable", err.Error())
		return
	}
	opts, source := optionsFrom(config, os.Getenv)
	if len(opts.Unknown) > 0 {
		tflog.Debug(ctx, "provider configuration unknown; the client will not dial", map[string]any{"unknown": opts.Unknown})
	}
	client, err := valkey.NewClient(opts)
	var urlErr *valkey.URLError
	switch {
	case errors.As(err, &urlErr):
		resp.Diagnostics.AddAttributeError(path.Root("url"), "Invalid Valkey URL",
			fmt.Sprintf("The URL taken from %s cannot be used: %s.", source, err))
		return
	case err != nil:
		resp.Diagnostics.AddError("Invalid Valkey Connection Settings",
			fmt.Sprintf("The provider's connection settings cannot be used: %s. Check the provider block and the VALKEY_* environment variables.", err))
		return
	}
	resp.ResourceData = client
	resp.DataSourceData = client
}

// resolver picks each setting: attribute, then environment variable. Unknown attributes are
// recorded by name: the client made from such options never dials.
type resolver struct {
	getenv  func(string) string
	unknown []string
}

func (r *resolver) str(name string, attr types.String, env string) string {
	if attr.IsUnknown() {
		r.unknown = append(r.unknown, name)
		return ""
	}
	if !attr.IsNull() {
		return attr.ValueString()
	}
	return r.getenv(env)
}

func (r *resolver) list(name string, attr []types.String, env string) []string {
	if attr == nil {
		return splitList(r.getenv(env))
	}
	out := make([]string, 0, len(attr))
	for _, a := range attr {
		if a.IsUnknown() {
			r.unknown = append(r.unknown, name)
			return nil
		}
		out = append(out, a.ValueString())
	}
	return out
}

// int64 returns the value and whether it was set at all; checkEnv has vetted the variable.
func (r *resolver) int64(name string, attr types.Int64, env string) (int64, bool) {
	if attr.IsUnknown() {
		r.unknown = append(r.unknown, name)
		return 0, false
	}
	if !attr.IsNull() {
		return attr.ValueInt64(), true
	}
	if v := r.getenv(env); v != "" {
		n, _ := strconv.ParseInt(v, 10, 64)
		return n, true
	}
	return 0, false
}

func (r *resolver) duration(name string, attr types.String, env string) time.Duration {
	d, _ := time.ParseDuration(r.str(name, attr, env))
	return d
}

func (r *resolver) bool(name string, attr types.Bool, env string) bool {
	if attr.IsUnknown() {
		r.unknown = append(r.unknown, name)
		return false
	}
	if !attr.IsNull() {
		return attr.ValueBool()
	}
	b, _ := strconv.ParseBool(r.getenv(env))
	return b
}

// optionsFrom resolves each setting: attribute, then environment variable, then default
// (left to internal/valkey as zero values). It also says where the URL came from, for messages.
func optionsFrom(config providerModel, getenv func(string) string) (valkey.Options, string) {
	r := &resolver{getenv: getenv}
	opts := valkey.Options{
		Username:       r.str("username", config.Username, envUsername),
		Password:       r.str("password", config.Password, envPassword),
		DialTimeout:    r.duration("dial_timeout", config.DialTimeout, envDialTimeout),
		CommandTimeout: r.duration("command_timeout", config.CommandTimeout, envCommandTimeout),
	}
	if db, set := r.int64("db", config.DB, envDB); set {
		n := int(db)
		opts.DB = &n
	}
	if n, set := r.int64("max_retries", config.MaxRetries, envMaxRetries); set {
		opts.MaxRetries = int(n)
		if n == 0 {
			opts.MaxRetries = -1 // valkey.Options: 0 is the default, -1 is none
		}
	}
	if config.TLS != nil || anySet(getenv, envTLS) {
		t := config.TLS
		if t == nil {
			t = &tlsModel{}
		}
		opts.TLS = &valkey.TLSOptions{
			CACert:             r.str("tls.ca_cert", t.CACert, envTLSCACert),
			Cert:               r.str("tls.cert", t.Cert, envTLSCert),
			Key:                r.str("tls.key", t.Key, envTLSKey),
			CACertFile:         r.str("tls.ca_cert_file", t.CACertFile, envTLSCACertFile),
			CertFile:           r.str("tls.cert_file", t.CertFile, envTLSCertFile),
			KeyFile:            r.str("tls.key_file", t.KeyFile, envTLSKeyFile),
			ServerName:         r.str("tls.server_name", t.ServerName, envTLSServerName),
			InsecureSkipVerify: r.bool("tls.insecure_skip_verify", t.InsecureSkipVerify, envTLSInsecureSkipVerify),
		}
	}

	source := "the url attribute"
	urlSet := !config.URL.IsNull()
	switch {
	case config.Cluster != nil || (!urlSet && config.Sentinel == nil && getenv(envClusterAddresses) != ""):
		c := config.Cluster
		if c == nil {
			c = &clusterModel{}
		}
		opts.ClusterAddrs = r.list("cluster.addresses", c.Addresses, envClusterAddresses)
		source = "the cluster block"
	case config.Sentinel != nil || (!urlSet && getenv(envSentinelMasterName) != ""):
		s := config.Sentinel
		if s == nil {
			s = &sentinelModel{}
		}
		opts.Sentinel = &valkey.SentinelOptions{
			MasterName: r.str("sentinel.master_name", s.MasterName, envSentinelMasterName),
			Addrs:      r.list("sentinel.addresses", s.Addresses, envSentinelAddresses),
			Username:   r.str("sentinel.username", s.Username, envSentinelUsername),
			Password:   r.str("sentinel.password", s.Password, envSentinelPassword),
		}
		source = "the sentinel block"
	default:
		opts.URL = r.str("url", config.URL, envURL)
		switch {
		case config.URL.IsNull() && opts.URL != "":
			source = "the " + envURL + " environment variable"
		case opts.URL == "" && !config.URL.IsUnknown():
			opts.URL = valkey.DefaultURL
			source = "the default"
		}
	}
	opts.ReplicaAckTimeout = r.duration("replica_ack_timeout", config.ReplicaAckTimeout, envReplicaAckTimeout)
	if n, set := r.int64("min_replica_acks", config.MinReplicaAcks, envMinReplicaAcks); set {
		opts.MinReplicaAcks = int(n)
	} else if opts.Sentinel != nil {
		opts.MinReplicaAcks = 1 // a Sentinel deployment has replicas, and fails over to them
	}
	opts.Unknown = r.unknown
	return opts, source
}

func anySet(getenv func(string) string, names []string) bool {
	for _, n := range names {
		if getenv(n) != "" {
			return true
		}
	}
	return false
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

// checkEnv rejects environment variables that are set but cannot be read, naming them.
func checkEnv(getenv func(string) string) error {
	var problems []string
	for _, name := range []string{envDB, envMaxRetries, envMinReplicaAcks} {
		if v := getenv(name); v != "" {
			if n, err := strconv.ParseInt(v, 10, 64); err != nil || n < 0 {
				problems = append(problems, fmt.Sprintf("%s=%q is not a whole number of 0 or more", name, v))
			}
		}
	}
	for _, name := range []string{envDialTimeout, envCommandTimeout, envReplicaAckTimeout} {
		if v := getenv(name); v != "" {
			if err := checkDuration(v); err != nil {
				problems = append(problems, fmt.Sprintf("%s=%q %s", name, v, err))
			}
		}
	}
	if v := getenv(envTLSInsecureSkipVerify); v != "" {
		if _, err := strconv.ParseBool(v); err != nil {
			problems = append(problems, fmt.Sprintf("%s=%q is not true or false", envTLSInsecureSkipVerify, v))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s. Fix or unset the variable", strings.Join(problems, "; "))
	}
	return nil
}

func checkDuration(v string) error {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return errors.New(`is not a positive duration such as "5s" or "500ms"`)
	}
	return nil
}

func (p *valkeyProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{NewStreamGroupResource}
}

func (p *valkeyProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{NewStreamDataSource, NewStreamGroupDataSource}
}

func (p *valkeyProvider) Functions(context.Context) []func() function.Function {
	return []func() function.Function{NewHashSlotFunction}
}

// urlValidator rejects a malformed url at plan time, naming the accepted forms.
type urlValidator struct{}

func (urlValidator) Description(context.Context) string {
	return "must be a URL of the form " + valkey.AcceptedURLForms
}

func (v urlValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (urlValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := valkey.ParseURL(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Valkey URL", "The url cannot be used: "+err.Error()+".")
	}
}

// durationValidator accepts positive Go durations such as "5s".
type durationValidator struct{}

func (durationValidator) Description(context.Context) string {
	return `must be a positive duration such as "5s" or "500ms"`
}

func (v durationValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (durationValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := checkDuration(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Duration",
			fmt.Sprintf("The value %q %s.", req.ConfigValue.ValueString(), err))
	}
}
