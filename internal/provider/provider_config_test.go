package provider

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	fwprovider "github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

// object is the provider attribute name (tls, cluster, sentinel) holding model, typed as the
// provider schema says.
func object(t *testing.T, name string, model any) types.Object {
	t.Helper()
	var resp fwprovider.SchemaResponse
	New("test")().Schema(context.Background(), fwprovider.SchemaRequest{}, &resp)
	objType, ok := resp.Schema.Attributes[name].GetType().(types.ObjectType)
	if !ok {
		t.Fatalf("provider attribute %s is not an object", name)
	}
	v, diags := types.ObjectValueFrom(context.Background(), objType.AttrTypes, model)
	if diags.HasError() {
		t.Fatal(diags)
	}
	return v
}

// strs is a list of strings as a provider attribute holds it.
func strs(vs ...string) types.List {
	l, _ := types.ListValueFrom(context.Background(), types.StringType, vs)
	return l
}

// resolve is optionsFrom with getenv reading env; it fails the test on diagnostics.
func resolve(t *testing.T, config providerModel, env map[string]string) valkey.Options {
	t.Helper()
	opts, _, diags := optionsFrom(context.Background(), config, func(k string) string { return env[k] })
	if diags.HasError() {
		t.Fatalf("optionsFrom: %v", diags)
	}
	return opts
}

// TestOptionsFrom_EachSettingPrecedence checks attribute > environment variable > default for
// every setting, one at a time: with the attribute set, with only the variable set, with neither.
func TestOptionsFrom_EachSettingPrecedence(t *testing.T) {
	type setting struct {
		env, envValue string
		attr          func(*testing.T, *providerModel)
		fromAttr      func(valkey.Options) bool
		fromEnv       func(valkey.Options) bool
		byDefault     func(valkey.Options) bool
	}
	noTLS := func(o valkey.Options) bool { return o.TLS == nil }
	tlsAttr := func(f func(*tlsModel)) func(*testing.T, *providerModel) {
		return func(t *testing.T, m *providerModel) { var tm tlsModel; f(&tm); m.TLS = object(t, "tls", tm) }
	}
	isInt := func(p *int, n int) bool { return p != nil && *p == n }
	for name, s := range map[string]setting{
		"url": {envURL, "valkey://env:1/0",
			func(_ *testing.T, m *providerModel) { m.URL = types.StringValue("valkey://attr:1/0") },
			func(o valkey.Options) bool { return o.URL == "valkey://attr:1/0" },
			func(o valkey.Options) bool { return o.URL == "valkey://env:1/0" },
			func(o valkey.Options) bool { return o.URL == "" }}, // valkey.NewClient applies DefaultURL
		"username": {envUsername, "env-user",
			func(_ *testing.T, m *providerModel) { m.Username = types.StringValue("attr-user") },
			func(o valkey.Options) bool { return o.Username == "attr-user" },
			func(o valkey.Options) bool { return o.Username == "env-user" },
			func(o valkey.Options) bool { return o.Username == "" }},
		"password": {envPassword, "env-pw",
			func(_ *testing.T, m *providerModel) { m.Password = types.StringValue("attr-pw") },
			func(o valkey.Options) bool { return o.Password == "attr-pw" },
			func(o valkey.Options) bool { return o.Password == "env-pw" },
			func(o valkey.Options) bool { return o.Password == "" }},
		"db": {envDB, "7",
			func(_ *testing.T, m *providerModel) { m.DB = types.Int64Value(0) }, // an explicit 0 still beats the variable
			func(o valkey.Options) bool { return isInt(o.DB, 0) },
			func(o valkey.Options) bool { return isInt(o.DB, 7) },
			func(o valkey.Options) bool { return o.DB == nil }},
		"dial_timeout": {envDialTimeout, "7s",
			func(_ *testing.T, m *providerModel) { m.DialTimeout = types.StringValue("250ms") },
			func(o valkey.Options) bool { return o.DialTimeout == 250*time.Millisecond },
			func(o valkey.Options) bool { return o.DialTimeout == 7*time.Second },
			func(o valkey.Options) bool { return o.DialTimeout == 0 }},
		"min_replica_acks": {envMinReplicaAcks, "2",
			func(_ *testing.T, m *providerModel) { m.MinReplicaAcks = types.Int64Value(0) }, // an explicit 0 still beats the variable
			func(o valkey.Options) bool { return isInt(o.MinReplicaAcks, 0) },
			func(o valkey.Options) bool { return isInt(o.MinReplicaAcks, 2) },
			func(o valkey.Options) bool { return o.MinReplicaAcks == nil }},
		"replica_ack_timeout": {envReplicaAckTimeout, "3s",
			func(_ *testing.T, m *providerModel) { m.ReplicaAckTimeout = types.StringValue("150ms") },
			func(o valkey.Options) bool { return o.ReplicaAckTimeout == 150*time.Millisecond },
			func(o valkey.Options) bool { return o.ReplicaAckTimeout == 3*time.Second },
			func(o valkey.Options) bool { return o.ReplicaAckTimeout == 0 }},
		"command_timeout": {envCommandTimeout, "9s",
			func(_ *testing.T, m *providerModel) { m.CommandTimeout = types.StringValue("1m") },
			func(o valkey.Options) bool { return o.CommandTimeout == time.Minute },
			func(o valkey.Options) bool { return o.CommandTimeout == 9*time.Second },
			func(o valkey.Options) bool { return o.CommandTimeout == 0 }},
		"max_retries": {envMaxRetries, "5",
			func(_ *testing.T, m *providerModel) { m.MaxRetries = types.Int64Value(0) }, // an explicit 0 (none) still beats the variable
			func(o valkey.Options) bool { return isInt(o.MaxRetries, 0) },
			func(o valkey.Options) bool { return isInt(o.MaxRetries, 5) },
			func(o valkey.Options) bool { return o.MaxRetries == nil }},
		"tls.ca_cert": {envTLSCACert, "env-ca",
			tlsAttr(func(t *tlsModel) { t.CACert = types.StringValue("attr-ca") }),
			func(o valkey.Options) bool { return o.TLS != nil && o.TLS.CACert == "attr-ca" },
			func(o valkey.Options) bool { return o.TLS != nil && o.TLS.CACert == "env-ca" },
			noTLS},
		"tls.cert": {envTLSCert, "env-cert",
			tlsAttr(func(t *tlsModel) { t.Cert = types.StringValue("attr-cert") }),
			func(o valkey.Options) bool { return o.TLS.Cert == "attr-cert" },
			func(o valkey.Options) bool { return o.TLS.Cert == "env-cert" },
			noTLS},
		"tls.key": {envTLSKey, "env-key",
			tlsAttr(func(t *tlsModel) { t.Key = types.StringValue("attr-key") }),
			func(o valkey.Options) bool { return o.TLS.Key == "attr-key" },
			func(o valkey.Options) bool { return o.TLS.Key == "env-key" },
			noTLS},
		"tls.ca_cert_file": {envTLSCACertFile, "/env/ca",
			tlsAttr(func(t *tlsModel) { t.CACertFile = types.StringValue("/attr/ca") }),
			func(o valkey.Options) bool { return o.TLS.CACertFile == "/attr/ca" },
			func(o valkey.Options) bool { return o.TLS.CACertFile == "/env/ca" },
			noTLS},
		"tls.cert_file": {envTLSCertFile, "/env/cert",
			tlsAttr(func(t *tlsModel) { t.CertFile = types.StringValue("/attr/cert") }),
			func(o valkey.Options) bool { return o.TLS.CertFile == "/attr/cert" },
			func(o valkey.Options) bool { return o.TLS.CertFile == "/env/cert" },
			noTLS},
		"tls.key_file": {envTLSKeyFile, "/env/key",
			tlsAttr(func(t *tlsModel) { t.KeyFile = types.StringValue("/attr/key") }),
			func(o valkey.Options) bool { return o.TLS.KeyFile == "/attr/key" },
			func(o valkey.Options) bool { return o.TLS.KeyFile == "/env/key" },
			noTLS},
		"tls.server_name": {envTLSServerName, "env.example",
			tlsAttr(func(t *tlsModel) { t.ServerName = types.StringValue("attr.example") }),
			func(o valkey.Options) bool { return o.TLS.ServerName == "attr.example" },
			func(o valkey.Options) bool { return o.TLS.ServerName == "env.example" },
			noTLS},
		"tls.insecure_skip_verify": {envTLSInsecureSkipVerify, "true",
			tlsAttr(func(t *tlsModel) { t.InsecureSkipVerify = types.BoolValue(false) }),
			func(o valkey.Options) bool { return o.TLS != nil && !o.TLS.InsecureSkipVerify },
			func(o valkey.Options) bool { return o.TLS != nil && o.TLS.InsecureSkipVerify },
			noTLS},
		"cluster.addresses": {envClusterAddresses, "127.0.0.1:1, 127.0.0.1:2",
			func(t *testing.T, m *providerModel) {
				m.Cluster = object(t, "cluster", clusterModel{Addresses: strs("127.0.0.1:3")})
			},
			func(o valkey.Options) bool {
				return reflect.DeepEqual(o.ClusterAddrs, []string{"127.0.0.1:3"}) && o.URL == ""
			},
			func(o valkey.Options) bool {
				return reflect.DeepEqual(o.ClusterAddrs, []string{"127.0.0.1:1", "127.0.0.1:2"}) && o.URL == ""
			},
			func(o valkey.Options) bool { return o.ClusterAddrs == nil && o.URL == "" }},
		"sentinel.master_name": {envSentinelMasterName, "env-primary",
			func(t *testing.T, m *providerModel) {
				m.Sentinel = object(t, "sentinel", sentinelModel{MasterName: types.StringValue("attr-primary"), Addresses: types.ListNull(types.StringType)})
			},
			func(o valkey.Options) bool { return o.Sentinel != nil && o.Sentinel.MasterName == "attr-primary" },
			func(o valkey.Options) bool { return o.Sentinel != nil && o.Sentinel.MasterName == "env-primary" },
			func(o valkey.Options) bool { return o.Sentinel == nil }},
	} {
		t.Run(name, func(t *testing.T) {
			env := map[string]string{s.env: s.envValue}
			var withAttr providerModel
			s.attr(t, &withAttr)
			if got := resolve(t, withAttr, env); !s.fromAttr(got) {
				t.Errorf("attribute and %s both set: got %+v, want the attribute's value", s.env, got)
			}
			if got := resolve(t, providerModel{}, env); !s.fromEnv(got) {
				t.Errorf("only %s set: got %+v, want the variable's value", s.env, got)
			}
			if got := resolve(t, providerModel{}, nil); !s.byDefault(got) {
				t.Errorf("neither set: got %+v, want it left to the default", got)
			}
		})
	}
}

// The sentinel attribute's other fields follow the same rule; checked together to keep the table short.
func TestOptionsFrom_SentinelFields(t *testing.T) {
	env := map[string]string{
		envSentinelMasterName: "p", envSentinelAddresses: "127.0.0.1:26379,127.0.0.1:26380",
		envSentinelUsername: "env-su", envSentinelPassword: "env-sp",
	}
	got := resolve(t, providerModel{}, env)
	want := &valkey.SentinelOptions{MasterName: "p", Addrs: []string{"127.0.0.1:26379", "127.0.0.1:26380"}, Username: "env-su", Password: "env-sp"}
	if !reflect.DeepEqual(got.Sentinel, want) {
		t.Errorf("from env: %+v, want %+v", got.Sentinel, want)
	}
	got = resolve(t, providerModel{Sentinel: object(t, "sentinel", sentinelModel{
		MasterName: types.StringValue("q"), Addresses: strs("127.0.0.1:1"),
		Username: types.StringValue("attr-su"), Password: types.StringValue("attr-sp"),
	})}, env)
	want = &valkey.SentinelOptions{MasterName: "q", Addrs: []string{"127.0.0.1:1"}, Username: "attr-su", Password: "attr-sp"}
	if !reflect.DeepEqual(got.Sentinel, want) {
		t.Errorf("from attributes: %+v, want %+v", got.Sentinel, want)
	}
	// A url attribute means a single server, whatever the environment says about Sentinel.
	got = resolve(t, providerModel{URL: types.StringValue("valkey://127.0.0.1:1/0")}, env)
	if got.Sentinel != nil || got.URL != "valkey://127.0.0.1:1/0" {
		t.Errorf("url attribute with sentinel env: %+v", got)
	}
}

func TestOptionsFrom_UnknownValuesAreRecorded(t *testing.T) {
	for want, config := range map[string]providerModel{
		"tls.ca_cert,url": {URL: types.StringUnknown(), Password: types.StringValue("pw"),
			TLS: object(t, "tls", tlsModel{CACert: types.StringUnknown()})},
		"cluster.addresses": {Cluster: object(t, "cluster", clusterModel{Addresses: types.ListValueMust(types.StringType,
			[]attr.Value{types.StringValue("a:1"), types.StringUnknown()})})},
		// A whole object unknown, as when a module passes `tls = var.tls` built from a resource.
		"tls":     {TLS: types.ObjectUnknown(object(t, "tls", tlsModel{}).AttributeTypes(context.Background()))},
		"cluster": {Cluster: types.ObjectUnknown(object(t, "cluster", clusterModel{Addresses: strs()}).AttributeTypes(context.Background()))},
	} {
		got := resolve(t, config, nil)
		if strings.Join(got.Unknown, ",") != want {
			t.Errorf("Unknown = %q, want %s", got.Unknown, want)
		}
	}
	if got := resolve(t, providerModel{}, nil); got.Unknown != nil {
		t.Errorf("Unknown = %q for a known configuration", got.Unknown)
	}
}

// TestOptionsFrom_BadVariablesAreErrors: a variable that is set but does not parse is an
// error naming it, never a silent zero.
func TestOptionsFrom_BadVariablesAreErrors(t *testing.T) {
	for _, bad := range []map[string]string{
		{envDB: "two"}, {envMaxRetries: "-1"}, {envMinReplicaAcks: "1.5"}, {envDialTimeout: "5"},
		{envCommandTimeout: "0s"}, {envReplicaAckTimeout: "soon"}, {envTLSInsecureSkipVerify: "maybe"},
	} {
		_, _, diags := optionsFrom(context.Background(), providerModel{}, func(k string) string { return bad[k] })
		for name := range bad {
			if !diags.HasError() || !strings.Contains(diags.Errors()[0].Detail(), name) {
				t.Errorf("%v: diagnostics %v do not name %s", bad, diags, name)
			}
		}
	}
	good := map[string]string{envDB: "2", envMaxRetries: "0", envDialTimeout: "5s", envCommandTimeout: "150ms", envTLSInsecureSkipVerify: "false"}
	if _, _, diags := optionsFrom(context.Background(), providerModel{}, func(k string) string { return good[k] }); diags.HasError() {
		t.Errorf("good variables refused: %v", diags)
	}
}

func TestAccProvider_ConflictingSettingsFailAtPlan(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ block, want string }{
		"ca_cert and ca_cert_file": {`tls = {
    ca_cert      = "x"
    ca_cert_file = "/x"
  }`, `(?s)Invalid Attribute Combination.*ca_cert_file`},
		"cert and cert_file": {`tls = {
    cert      = "x"
    cert_file = "/x"
  }`, `(?s)Invalid Attribute Combination.*cert_file`},
		"key and key_file": {`tls = {
    key      = "x"
    key_file = "/x"
  }`, `(?s)Invalid Attribute Combination.*key_file`},
		"db with cluster": {`db = 1
  cluster = {
    addresses = ["127.0.0.1:7000"]
  }`, `(?s)Invalid Attribute Combination.*cluster`},
		"url with cluster": {`url = "valkey://127.0.0.1:1"
  cluster = {
    addresses = ["127.0.0.1:7000"]
  }`, `(?s)Invalid Attribute Combination.*cluster`},
		"cluster with sentinel": {`cluster = {
    addresses = ["127.0.0.1:7000"]
  }
  sentinel = {
    master_name = "m"
  }`, `(?s)Invalid Attribute Combination.*sentinel`},
		"bad dial_timeout":     {`dial_timeout = "5"`, `(?s)Invalid Duration.*"5" is not a positive\s+duration`},
		"bad command_timeout":  {`command_timeout = "-1s"`, `(?s)Invalid Duration.*"-1s"`},
		"negative max_retries": {`max_retries = -1`, `(?s)max_retries.*at least 0`},
		"negative db":          {`db = -1`, `(?s)db.*at least 0`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      fmt.Sprintf("provider \"valkey\" {\n  %s\n}\n", tc.block) + testAccStreamGroupConfig("s", "g", "new"),
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(tc.want),
				}},
			})
		})
	}
}

// TestAccProvider_WholeObjectFromAResourcePlans: a module can pass the whole tls object, and
// when it comes from a resource not created yet the plan still succeeds without dialling (an
// unknown block could not even be decoded).
func TestAccProvider_WholeObjectFromAResourcePlans(t *testing.T) {
	t.Parallel()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
resource "terraform_data" "tls" {
  input = { ca_cert_file = "/etc/valkey/ca.crt", server_name = "valkey.internal" }
}

provider "valkey" {
  url = "valkeys://127.0.0.1:1/0"
  tls = terraform_data.tls.output
}
` + testAccStreamGroupConfig("s", "g", "new"),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
		}},
	})
}
