package provider

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/boolvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/objectvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

// Each provider setting is one row of settings: its attribute, the environment variable read
// when the attribute is not set, the valkey.Options field it fills, the default its
// description quotes, its words and its checks. The schema (settingAttributes), the resolver
// (config.go), the diagnostics (addSettingsError, queryAdvice) and the documentation's table
// of variables (environmentTable) all read these rows, so a new setting is one row here and
// one field of valkey.Options. Defaults stay internal/valkey's: a row only quotes them.

// kind is what a setting holds: its schema type, how its variable is read, and the Go type of
// its valkey.Options field.
type kind int

const (
	kindString   kind = iota // string
	kindURL                  // string, checked with valkey.ParseURL at plan time
	kindInt                  // *int, 0 or more
	kindDuration             // time.Duration, positive; a string such as "5s" where people write it
	kindBool                 // bool
	kindList                 // []string; comma-separated in the variable
	kindObject               // nested attributes, each a row named "<object>.<attribute>"; a *struct field
)

// setting is one provider setting.
type setting struct {
	name string // the attribute's path: "url", "tls.ca_cert"
	// env is the variable read when the attribute is not set. For the cluster and sentinel
	// objects, it is the variable that chooses them when no url is set.
	env string
	// field is the valkey.Options field it fills, as valkey.OptionError names it: "DB",
	// "TLS.CACertFile". The cluster object has none: its one attribute fills ClusterAddrs.
	field string
	kind  kind
	doc   string // the description; the kind and the variable add their sentences to it
	// def is the default the description quotes when neither the attribute nor the variable is
	// set: internal/valkey's constant (it applies it), or what the server takes; "" for none.
	def       string
	sensitive bool
	conflicts []string // attributes it cannot be set with
	urlQuery  []string // the parameters of a URL's query it replaces (a URL with a query is refused)
}

// settings are every provider setting, an object before its attributes.
var settings = []setting{
	{name: "url", env: "VALKEY_URL", field: "URL", kind: kindURL, def: valkey.DefaultURL, sensitive: true,
		conflicts: []string{"cluster", "sentinel"},
		doc: "Server URL for a single server: `" + valkey.AcceptedURLForms + "`. The `valkeys://` and `rediss://` forms turn TLS on " +
			"with the system's root certificates unless `tls` says otherwise. Conflicts with `cluster` and `sentinel`. " +
			"Sensitive, because it may carry a password."},
	{name: "username", env: "VALKEY_USERNAME", field: "Username", def: "default", // the server's default user
		doc: "ACL user name for the data nodes; overrides the URL's user."},
	{name: "password", env: "VALKEY_PASSWORD", field: "Password", sensitive: true,
		doc: "Password for the data nodes; overrides the URL's password. Never logged or stored in state."},
	{name: "db", env: "VALKEY_DB", field: "DB", kind: kindInt, def: "0", conflicts: []string{"cluster"}, urlQuery: []string{"db"},
		doc: "Database number; overrides the URL's `/db`. Not allowed with `cluster` (a cluster has only database 0)."},
	{name: "dial_timeout", env: "VALKEY_DIAL_TIMEOUT", field: "DialTimeout", kind: kindDuration,
		def: valkey.DefaultDialTimeout.String(), urlQuery: []string{"dial_timeout"},
		doc: "How long to wait for a connection (TCP and TLS handshake)"},
	{name: "command_timeout", env: "VALKEY_COMMAND_TIMEOUT", field: "CommandTimeout", kind: kindDuration,
		def: valkey.DefaultCommandTimeout.String(), urlQuery: []string{"read_timeout", "write_timeout"},
		doc: "How long to wait for a command's reply"},
	{name: "max_retries", env: "VALKEY_MAX_RETRIES", field: "MaxRetries", kind: kindInt,
		def: strconv.Itoa(valkey.DefaultMaxRetries), urlQuery: []string{"max_retries"},
		doc: "How many times a command is retried after a network error; `0` disables retries."},
	{name: "min_replica_acks", env: "VALKEY_MIN_REPLICA_ACKS", field: "MinReplicaAcks", kind: kindInt,
		def: fmt.Sprintf("%d with sentinel, else 0", valkey.DefaultSentinelReplicaAcks), conflicts: []string{"cluster"},
		doc: "How many replicas must acknowledge a created group (`WAIT`, in the same round trip as `XGROUP CREATE`) " +
			"before Terraform records it. A group that fewer replicas acknowledged could be lost by a failover, so the apply " +
			"fails and says so; applying again adopts it if it survived. Not available with `cluster`. " +
			fmt.Sprintf("Defaults to `%d` with `sentinel`, else `0` (no wait).", valkey.DefaultSentinelReplicaAcks)},
	{name: "replica_ack_timeout", env: "VALKEY_REPLICA_ACK_TIMEOUT", field: "ReplicaAckTimeout", kind: kindDuration,
		def: valkey.DefaultReplicaAckTimeout.String(),
		doc: "How long `WAIT` waits for `min_replica_acks` replicas after `XGROUP CREATE`"},

	{name: "tls", field: "TLS", kind: kindObject,
		doc: "Turns TLS on for every connection (data nodes and sentinels): `tls = { ca_cert_file = \"...\" }`. " +
			"Without `ca_cert`, the system's roots verify the server. Setting any `VALKEY_TLS_*` variable also turns TLS on."},
	{name: "tls.ca_cert", env: "VALKEY_TLS_CA_CERT", field: "TLS.CACert", conflicts: []string{"tls.ca_cert_file"},
		doc: "CA certificate(s) that verify the server as a PEM string. Conflicts with `ca_cert_file`."},
	{name: "tls.cert", env: "VALKEY_TLS_CERT", field: "TLS.Cert", conflicts: []string{"tls.cert_file"},
		doc: "Client certificate for mutual TLS as a PEM string. Conflicts with `cert_file`."},
	{name: "tls.key", env: "VALKEY_TLS_KEY", field: "TLS.Key", sensitive: true, conflicts: []string{"tls.key_file"},
		doc: "Client private key for mutual TLS as a PEM string. Conflicts with `key_file`."},
	{name: "tls.ca_cert_file", env: "VALKEY_TLS_CA_CERT_FILE", field: "TLS.CACertFile",
		doc: "Path of a PEM file holding the CA certificate(s). Conflicts with `ca_cert`."},
	{name: "tls.cert_file", env: "VALKEY_TLS_CERT_FILE", field: "TLS.CertFile",
		doc: "Path of a PEM file holding the client certificate. Conflicts with `cert`."},
	{name: "tls.key_file", env: "VALKEY_TLS_KEY_FILE", field: "TLS.KeyFile",
		doc: "Path of a PEM file holding the client private key. Conflicts with `key`."},
	{name: "tls.server_name", env: "VALKEY_TLS_SERVER_NAME", field: "TLS.ServerName",
		doc: "Name to verify in the server's certificate (and send as SNI). Defaults to the host dialled."},
	{name: "tls.insecure_skip_verify", env: "VALKEY_TLS_INSECURE_SKIP_VERIFY", field: "TLS.InsecureSkipVerify", kind: kindBool,
		def: "false", urlQuery: []string{"skip_verify"},
		doc: "Skip verification of the server's certificate. For tests only."},

	{name: "cluster", env: "VALKEY_CLUSTER_ADDRESSES", kind: kindObject, conflicts: []string{"sentinel"},
		doc: "Connects to a Valkey Cluster: `cluster = { addresses = [\"node1:6379\"] }`. Commands are routed by " +
			"key slot, and MOVED/ASK redirections are followed. Conflicts with `url`, `db`, `min_replica_acks` and `sentinel`."},
	{name: "cluster.addresses", env: "VALKEY_CLUSTER_ADDRESSES", field: "ClusterAddrs", kind: kindList,
		doc: "Seed nodes as `host:port`; the rest of the cluster is discovered from them."},

	{name: "sentinel", env: "VALKEY_SENTINEL_MASTER_NAME", field: "Sentinel", kind: kindObject,
		doc: "Finds the current primary through Sentinel and follows it across failovers: " +
			"`sentinel = { master_name = \"primary\", addresses = [\"s1:26379\"] }`. " +
			"`username` and `password` here are the sentinels' own; the top-level ones authenticate to the data nodes."},
	{name: "sentinel.master_name", env: "VALKEY_SENTINEL_MASTER_NAME", field: "Sentinel.MasterName",
		doc: "Name of the monitored primary."},
	{name: "sentinel.addresses", env: "VALKEY_SENTINEL_ADDRESSES", field: "Sentinel.Addrs", kind: kindList,
		doc: "Sentinels as `host:port`."},
	{name: "sentinel.username", env: "VALKEY_SENTINEL_USERNAME", field: "Sentinel.Username",
		doc: "ACL user for the sentinels."},
	{name: "sentinel.password", env: "VALKEY_SENTINEL_PASSWORD", field: "Sentinel.Password", sensitive: true,
		doc: "Password for the sentinels."},
}

// settingNamed is the row of the attribute at name ("tls.ca_cert").
func settingNamed(name string) (setting, bool) {
	i := slices.IndexFunc(settings, func(s setting) bool { return s.name == name })
	if i < 0 {
		return setting{}, false
	}
	return settings[i], true
}

// envOf is the variable of the setting name, which must be a row.
func envOf(name string) string {
	s, ok := settingNamed(name)
	if !ok {
		panic("no provider setting " + name)
	}
	return s.env
}

// settingFilling is the row that fills the valkey.Options field named like "TLS.CACert".
func settingFilling(field string) (setting, bool) {
	i := slices.IndexFunc(settings, func(s setting) bool { return s.field == field })
	if i < 0 {
		return setting{}, false
	}
	return settings[i], true
}

// settingReplacing is the row that stands for a URL query parameter, such as dial_timeout.
func settingReplacing(param string) (setting, bool) {
	i := slices.IndexFunc(settings, func(s setting) bool { return slices.Contains(s.urlQuery, param) })
	if i < 0 {
		return setting{}, false
	}
	return settings[i], true
}

// parent is the object a setting belongs to ("tls" for "tls.ca_cert"), or "" at the top.
func (s setting) parent() string {
	parent, _, nested := strings.Cut(s.name, ".")
	if !nested {
		return ""
	}
	return parent
}

// leaf is the attribute's own name ("ca_cert" for "tls.ca_cert").
func (s setting) leaf() string { return s.name[strings.LastIndex(s.name, ".")+1:] }

// description is the attribute's documentation: its words, then what its kind and its
// variable add ("Defaults to `$VALKEY_DB`, then `0`.").
func (s setting) description() string {
	d := s.doc
	if s.kind == kindDuration {
		d += `, a Go duration such as "5s" or "500ms".`
	}
	if s.kind == kindObject || s.env == "" {
		return d
	}
	d += " Defaults to `$" + s.env + "`"
	if s.kind == kindList {
		d += " (comma-separated)"
	}
	if s.def != "" {
		d += ", then `" + s.def + "`"
	}
	return d + "."
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

// conflictPaths are the attributes s cannot be set with, as validators name them: an
// attribute of the same object relative to s, any other from the root.
func (s setting) conflictPaths() []path.Expression {
	paths := make([]path.Expression, 0, len(s.conflicts))
	for _, name := range s.conflicts {
		other, _ := settingNamed(name)
		if p := s.parent(); p != "" && other.parent() == p {
			paths = append(paths, path.MatchRelative().AtParent().AtName(other.leaf()))
			continue
		}
		paths = append(paths, attributePath(name).Expression())
	}
	return paths
}

// settingAttributes is the provider schema of the settings in the object parent ("" for the
// top level).
func settingAttributes(parent string) map[string]schema.Attribute {
	attributes := map[string]schema.Attribute{}
	for _, s := range settings {
		if s.parent() == parent {
			attributes[s.leaf()] = s.attribute()
		}
	}
	return attributes
}

// attribute is the schema attribute of s: optional, with its kind's type and checks.
func (s setting) attribute() schema.Attribute {
	conflicts, description := s.conflictPaths(), s.description()
	switch s.kind {
	case kindURL, kindString, kindDuration:
		var own []validator.String
		switch s.kind {
		case kindURL:
			own = append(own, urlValidator{})
		case kindDuration:
			own = append(own, durationValidator{})
		}
		return schema.StringAttribute{MarkdownDescription: description, Optional: true, Sensitive: s.sensitive,
			Validators: checks(own, conflicts, stringvalidator.ConflictsWith)}
	case kindInt:
		return schema.Int64Attribute{MarkdownDescription: description, Optional: true, Sensitive: s.sensitive,
			Validators: checks([]validator.Int64{int64validator.AtLeast(0)}, conflicts, int64validator.ConflictsWith)}
	case kindBool:
		return schema.BoolAttribute{MarkdownDescription: description, Optional: true, Sensitive: s.sensitive,
			Validators: checks(nil, conflicts, boolvalidator.ConflictsWith)}
	case kindList:
		return schema.ListAttribute{MarkdownDescription: description, ElementType: types.StringType, Optional: true, Sensitive: s.sensitive,
			Validators: checks([]validator.List{listvalidator.SizeAtLeast(1)}, conflicts, listvalidator.ConflictsWith)}
	}
	return schema.SingleNestedAttribute{MarkdownDescription: description, Optional: true, Sensitive: s.sensitive,
		Attributes: settingAttributes(s.name), Validators: checks(nil, conflicts, objectvalidator.ConflictsWith)}
}

// checks are a kind's own validators, then one that refuses the conflicting attributes when
// there are any.
func checks[V any](own []V, conflicts []path.Expression, conflictsWith func(...path.Expression) V) []V {
	if len(conflicts) > 0 {
		own = append(own, conflictsWith(conflicts...))
	}
	return own
}

// environmentTable is the documentation's table of variables (templates/index.md.tmpl, kept
// current by TestSettings_DocumentationTableIsCurrent).
func environmentTable() string {
	var b strings.Builder
	b.WriteString("| attribute | environment variable | default |\n|---|---|---|\n")
	for _, s := range settings {
		if s.kind == kindObject {
			continue
		}
		variable, def := "`"+s.env+"`", "none"
		if s.kind == kindList {
			variable += " (comma-separated)"
		}
		if s.def != "" {
			def = "`" + s.def + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", s.name, variable, def)
	}
	return b.String()
}
