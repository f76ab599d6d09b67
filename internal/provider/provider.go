// Package provider holds the Terraform side of the Valkey provider: schema, plan, state and
// diagnostics. Every Valkey command lives in internal/valkey.
package provider

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/objectvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/list"
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
var _ provider.ProviderWithListResources = (*valkeyProvider)(nil)

type valkeyProvider struct {
	version string
}

// providerModel is the provider configuration; the nested attributes stay objects so that an
// unknown one (a module passing `tls = var.tls` built from a resource) can be told apart.
type providerModel struct {
	URL               types.String `tfsdk:"url"`
	Username          types.String `tfsdk:"username"`
	Password          types.String `tfsdk:"password"`
	DB                types.Int64  `tfsdk:"db"`
	DialTimeout       types.String `tfsdk:"dial_timeout"`
	CommandTimeout    types.String `tfsdk:"command_timeout"`
	MaxRetries        types.Int64  `tfsdk:"max_retries"`
	MinReplicaAcks    types.Int64  `tfsdk:"min_replica_acks"`
	ReplicaAckTimeout types.String `tfsdk:"replica_ack_timeout"`
	TLS               types.Object `tfsdk:"tls"`
	Cluster           types.Object `tfsdk:"cluster"`
	Sentinel          types.Object `tfsdk:"sentinel"`
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
	Addresses types.List `tfsdk:"addresses"`
}

type sentinelModel struct {
	MasterName types.String `tfsdk:"master_name"`
	Addresses  types.List   `tfsdk:"addresses"`
	Username   types.String `tfsdk:"username"`
	Password   types.String `tfsdk:"password"`
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
	envString := func(description string, sensitive bool) schema.StringAttribute {
		return schema.StringAttribute{MarkdownDescription: description, Optional: true, Sensitive: sensitive}
	}
	tlsPEM := func(what, file string, sensitive bool, env string) schema.StringAttribute {
		return schema.StringAttribute{
			MarkdownDescription: what + " as a PEM string. Conflicts with `" + file + "`." + envDoc(env, ""),
			Optional:            true,
			Sensitive:           sensitive,
			Validators:          []validator.String{stringvalidator.ConflictsWith(path.MatchRelative().AtParent().AtName(file))},
		}
	}
	tlsFile := func(what, inline, env string) schema.StringAttribute {
		return envString("Path of a PEM file holding "+what+". Conflicts with `"+inline+"`."+envDoc(env, ""), false)
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
			"Connects to one server (`url`), a cluster (`cluster`) or a primary found through Sentinel (`sentinel`), " +
			"with TLS (`tls`, or a `valkeys://` url) and ACL users. Nothing is dialled until a command needs the server.",
		Attributes: map[string]schema.Attribute{
			"url": schema.StringAttribute{
				MarkdownDescription: fmt.Sprintf("Server URL for a single server: `%s`. The `valkeys://` and `rediss://` forms turn TLS on "+
					"with the system's root certificates unless `tls` says otherwise. Conflicts with `cluster` and `sentinel`. "+
					"Sensitive, because it may carry a password.",
					valkey.AcceptedURLForms) + envDoc(envURL, valkey.DefaultURL),
				Optional:  true,
				Sensitive: true,
				Validators: []validator.String{urlValidator{},
					stringvalidator.ConflictsWith(path.MatchRoot("cluster"), path.MatchRoot("sentinel"))},
			},
			"username": envString("ACL user name for the data nodes; overrides the URL's user."+envDoc(envUsername, "default"), false),
			"password": envString("Password for the data nodes; overrides the URL's password. Never logged or stored in state."+envDoc(envPassword, ""), true),
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
			"tls": schema.SingleNestedAttribute{
				MarkdownDescription: "Turns TLS on for every connection (data nodes and sentinels): `tls = { ca_cert_file = \"...\" }`. " +
					"Without `ca_cert`, the system's roots verify the server. Setting any `VALKEY_TLS_*` variable also turns TLS on.",
				Optional: true,
				Attributes: map[string]schema.Attribute{
					"ca_cert":      tlsPEM("CA certificate(s) that verify the server", "ca_cert_file", false, envTLSCACert),
					"cert":         tlsPEM("Client certificate for mutual TLS", "cert_file", false, envTLSCert),
					"key":          tlsPEM("Client private key for mutual TLS", "key_file", true, envTLSKey),
					"ca_cert_file": tlsFile("the CA certificate(s)", "ca_cert", envTLSCACertFile),
					"cert_file":    tlsFile("the client certificate", "cert", envTLSCertFile),
					"key_file":     tlsFile("the client private key", "key", envTLSKeyFile),
					"server_name":  envString("Name to verify in the server's certificate (and send as SNI). Defaults to the host dialled."+envDoc(envTLSServerName, ""), false),
					"insecure_skip_verify": schema.BoolAttribute{
						MarkdownDescription: "Skip verification of the server's certificate. For tests only." + envDoc(envTLSInsecureSkipVerify, "false"),
						Optional:            true,
					},
				},
			},
			"cluster": schema.SingleNestedAttribute{
				MarkdownDescription: "Connects to a Valkey Cluster: `cluster = { addresses = [\"node1:6379\"] }`. Commands are routed by " +
					"key slot, and MOVED/ASK redirections are followed. Conflicts with `url`, `db`, `min_replica_acks` and `sentinel`.",
				Optional: true,
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
			"sentinel": schema.SingleNestedAttribute{
				MarkdownDescription: "Finds the current primary through Sentinel and follows it across failovers: " +
					"`sentinel = { master_name = \"primary\", addresses = [\"s1:26379\"] }`. " +
					"`username` and `password` here are the sentinels' own; the top-level ones authenticate to the data nodes.",
				Optional: true,
				Attributes: map[string]schema.Attribute{
					"master_name": envString("Name of the monitored primary."+envDoc(envSentinelMasterName, ""), false),
					"addresses": schema.ListAttribute{
						MarkdownDescription: "Sentinels as `host:port`." + fmt.Sprintf(" Defaults to `$%s` (comma-separated).", envSentinelAddresses),
						ElementType:         types.StringType,
						Optional:            true,
						Validators:          []validator.List{listvalidator.SizeAtLeast(1)},
					},
					"username": envString("ACL user for the sentinels."+envDoc(envSentinelUsername, ""), false),
					"password": envString("Password for the sentinels."+envDoc(envSentinelPassword, ""), true),
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
	opts, source, diags := optionsFrom(ctx, config, os.Getenv)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if len(opts.Unknown) > 0 {
		tflog.Debug(ctx, "provider configuration unknown; the client will not dial", map[string]any{"unknown": opts.Unknown})
	}
	client, err := valkey.NewClient(opts)
	if err != nil {
		addSettingsError(&resp.Diagnostics, err, source)
		return
	}
	data := &providerData{client: client, plan: &planSession{}}
	resp.ResourceData = data
	resp.DataSourceData = data
	resp.ListResourceData = data
}

func (p *valkeyProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{NewStreamGroupResource}
}

func (p *valkeyProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{NewStreamDataSource, NewStreamGroupDataSource}
}

func (p *valkeyProvider) ListResources(context.Context) []func() list.ListResource {
	return []func() list.ListResource{NewStreamGroupListResource}
}

func (p *valkeyProvider) Functions(context.Context) []func() function.Function {
	return []func() function.Function{NewHashSlotFunction}
}
