package provider

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

func strs(vs ...string) []types.String {
	out := make([]types.String, len(vs))
	for i, v := range vs {
		out[i] = types.StringValue(v)
	}
	return out
}

// TestOptionsFrom_EachSettingPrecedence checks attribute > environment variable > default for
// every setting, one at a time: with the attribute set, with only the variable set, with neither.
func TestOptionsFrom_EachSettingPrecedence(t *testing.T) {
	type setting struct {
		env, envValue string
		attr          func(*providerModel)
		fromAttr      func(valkey.Options) bool
		fromEnv       func(valkey.Options) bool
		byDefault     func(valkey.Options) bool
	}
	noTLS := func(o valkey.Options) bool { return o.TLS == nil }
	tlsBlock := func(f func(*tlsModel)) func(*providerModel) {
		return func(m *providerModel) { m.TLS = &tlsModel{}; f(m.TLS) }
	}
	for name, s := range map[string]setting{
		"url": {envURL, "valkey://env:1/0",
			func(m *providerModel) { m.URL = types.StringValue("valkey://attr:1/0") },
			func(o valkey.Options) bool { return o.URL == "valkey://attr:1/0" },
			func(o valkey.Options) bool { return o.URL == "valkey://env:1/0" },
			func(o valkey.Options) bool { return o.URL == valkey.DefaultURL }},
		"username": {envUsername, "env-user",
			func(m *providerModel) { m.Username = types.StringValue("attr-user") },
			func(o valkey.Options) bool { return o.Username == "attr-user" },
			func(o valkey.Options) bool { return o.Username == "env-user" },
			func(o valkey.Options) bool { return o.Username == "" }},
		"password": {envPassword, "env-pw",
			func(m *providerModel) { m.Password = types.StringValue("attr-pw") },
			func(o valkey.Options) bool { return o.Password == "attr-pw" },
			func(o valkey.Options) bool { return o.Password == "env-pw" },
			func(o valkey.Options) bool { return o.Password == "" }},
		"db": {envDB, "7",
			func(m *providerModel) { m.DB = types.Int64Value(0) }, // an explicit 0 still beats the variable
			func(o valkey.Options) bool { return o.DB != nil && *o.DB == 0 },
			func(o valkey.Options) bool { return o.DB != nil && *o.DB == 7 },
			func(o valkey.Options) bool { return o.DB == nil }},
		"dial_timeout": {envDialTimeout, "7s",
			func(m *providerModel) { m.DialTimeout = types.StringValue("250ms") },
			func(o valkey.Options) bool { return o.DialTimeout == 250*time.Millisecond },
			func(o valkey.Options) bool { return o.DialTimeout == 7*time.Second },
			func(o valkey.Options) bool { return o.DialTimeout == 0 }},
		"min_replica_acks": {envMinReplicaAcks, "2",
			func(m *providerModel) { m.MinReplicaAcks = types.Int64Value(0) }, // an explicit 0 still beats the variable
			func(o valkey.Options) bool { return o.MinReplicaAcks == 0 },
			func(o valkey.Options) bool { return o.MinReplicaAcks == 2 },
			func(o valkey.Options) bool { return o.MinReplicaAcks == 0 }},
		"replica_ack_timeout": {envReplicaAckTimeout, "3s",
			func(m *providerModel) { m.ReplicaAckTimeout = types.StringValue("150ms") },
			func(o valkey.Options) bool { return o.ReplicaAckTimeout == 150*time.Millisecond },
			func(o valkey.Options) bool { return o.ReplicaAckTimeout == 3*time.Second },
			func(o valkey.Options) bool { return o.ReplicaAckTimeout == 0 }},
		"command_timeout": {envCommandTimeout, "9s",
			func(m *providerModel) { m.CommandTimeout = types.StringValue("1m") },
			func(o valkey.Options) bool { return o.CommandTimeout == time.Minute },
			func(o valkey.Options) bool { return o.CommandTimeout == 9*time.Second },
			func(o valkey.Options) bool { return o.CommandTimeout == 0 }},
		"max_retries": {envMaxRetries, "5",
			func(m *providerModel) { m.MaxRetries = types.Int64Value(0) }, // 0 = none, which valkey spells -1
			func(o valkey.Options) bool { return o.MaxRetries == -1 },
			func(o valkey.Options) bool { return o.MaxRetries == 5 },
			func(o valkey.Options) bool { return o.MaxRetries == 0 }},
		"tls.ca_cert": {envTLSCACert, "env-ca",
			tlsBlock(func(t *tlsModel) { t.CACert = types.StringValue("attr-ca") }),
			func(o valkey.Options) bool { return o.TLS != nil && o.TLS.CACert == "attr-ca" },
			func(o valkey.Options) bool { return o.TLS != nil && o.TLS.CACert == "env-ca" },
			noTLS},
		"tls.cert": {envTLSCert, "env-cert",
			tlsBlock(func(t *tlsModel) { t.Cert = types.StringValue("attr-cert") }),
			func(o valkey.Options) bool { return o.TLS.Cert == "attr-cert" },
			func(o valkey.Options) bool { return o.TLS.Cert == "env-cert" },
			noTLS},
		"tls.key": {envTLSKey, "env-key",
			tlsBlock(func(t *tlsModel) { t.Key = types.StringValue("attr-key") }),
			func(o valkey.Options) bool { return o.TLS.Key == "attr-key" },
			func(o valkey.Options) bool { return o.TLS.Key == "env-key" },
			noTLS},
		"tls.ca_cert_file": {envTLSCACertFile, "/env/ca",
			tlsBlock(func(t *tlsModel) { t.CACertFile = types.StringValue("/attr/ca") }),
			func(o valkey.Options) bool { return o.TLS.CACertFile == "/attr/ca" },
			func(o valkey.Options) bool { return o.TLS.CACertFile == "/env/ca" },
			noTLS},
		"tls.cert_file": {envTLSCertFile, "/env/cert",
			tlsBlock(func(t *tlsModel) { t.CertFile = types.StringValue("/attr/cert") }),
			func(o valkey.Options) bool { return o.TLS.CertFile == "/attr/cert" },
			func(o valkey.Options) bool { return o.TLS.CertFile == "/env/cert" },
			noTLS},
		"tls.key_file": {envTLSKeyFile, "/env/key",
			tlsBlock(func(t *tlsModel) { t.KeyFile = types.StringValue("/attr/key") }),
			func(o valkey.Options) bool { return o.TLS.KeyFile == "/attr/key" },
			func(o valkey.Options) bool { return o.TLS.KeyFile == "/env/key" },
			noTLS},
		"tls.server_name": {envTLSServerName, "env.example",
			tlsBlock(func(t *tlsModel) { t.ServerName = types.StringValue("attr.example") }),
			func(o valkey.Options) bool { return o.TLS.ServerName == "attr.example" },
			func(o valkey.Options) bool { return o.TLS.ServerName == "env.example" },
			noTLS},
		"tls.insecure_skip_verify": {envTLSInsecureSkipVerify, "true",
			tlsBlock(func(t *tlsModel) { t.InsecureSkipVerify = types.BoolValue(false) }),
			func(o valkey.Options) bool { return o.TLS != nil && !o.TLS.InsecureSkipVerify },
			func(o valkey.Options) bool { return o.TLS != nil && o.TLS.InsecureSkipVerify },
			noTLS},
		"cluster.addresses": {envClusterAddresses, "127.0.0.1:1, 127.0.0.1:2",
			func(m *providerModel) { m.Cluster = &clusterModel{Addresses: strs("127.0.0.1:3")} },
			func(o valkey.Options) bool {
				return reflect.DeepEqual(o.ClusterAddrs, []string{"127.0.0.1:3"}) && o.URL == ""
			},
			func(o valkey.Options) bool {
				return reflect.DeepEqual(o.ClusterAddrs, []string{"127.0.0.1:1", "127.0.0.1:2"}) && o.URL == ""
			},
			func(o valkey.Options) bool { return o.ClusterAddrs == nil && o.URL == valkey.DefaultURL }},
		"sentinel.master_name": {envSentinelMasterName, "env-primary",
			func(m *providerModel) { m.Sentinel = &sentinelModel{MasterName: types.StringValue("attr-primary")} },
			func(o valkey.Options) bool { return o.Sentinel != nil && o.Sentinel.MasterName == "attr-primary" },
			func(o valkey.Options) bool { return o.Sentinel != nil && o.Sentinel.MasterName == "env-primary" },
			func(o valkey.Options) bool { return o.Sentinel == nil }},
	} {
		t.Run(name, func(t *testing.T) {
			env := map[string]string{s.env: s.envValue}
			getenv := func(k string) string { return env[k] }
			none := func(string) string { return "" }
			var withAttr providerModel
			s.attr(&withAttr)
			if got, _ := optionsFrom(withAttr, getenv); !s.fromAttr(got) {
				t.Errorf("attribute and %s both set: got %+v, want the attribute's value", s.env, got)
			}
			if got, _ := optionsFrom(providerModel{}, getenv); !s.fromEnv(got) {
				t.Errorf("only %s set: got %+v, want the variable's value", s.env, got)
			}
			if got, _ := optionsFrom(providerModel{}, none); !s.byDefault(got) {
				t.Errorf("neither set: got %+v, want the default", got)
			}
		})
	}
}

// The sentinel block's other fields follow the same rule; checked together to keep the table short.
func TestOptionsFrom_SentinelFields(t *testing.T) {
	env := map[string]string{
		envSentinelMasterName: "p", envSentinelAddresses: "127.0.0.1:26379,127.0.0.1:26380",
		envSentinelUsername: "env-su", envSentinelPassword: "env-sp",
	}
	getenv := func(k string) string { return env[k] }
	got, _ := optionsFrom(providerModel{}, getenv)
	want := &valkey.SentinelOptions{MasterName: "p", Addrs: []string{"127.0.0.1:26379", "127.0.0.1:26380"}, Username: "env-su", Password: "env-sp"}
	if !reflect.DeepEqual(got.Sentinel, want) {
		t.Errorf("from env: %+v, want %+v", got.Sentinel, want)
	}
	if got.MinReplicaAcks != 1 {
		t.Errorf("sentinel mode waits for %d replica acks by default, want 1", got.MinReplicaAcks)
	}
	got, _ = optionsFrom(providerModel{Sentinel: &sentinelModel{
		MasterName: types.StringValue("q"), Addresses: strs("127.0.0.1:1"),
		Username: types.StringValue("attr-su"), Password: types.StringValue("attr-sp"),
	}}, getenv)
	want = &valkey.SentinelOptions{MasterName: "q", Addrs: []string{"127.0.0.1:1"}, Username: "attr-su", Password: "attr-sp"}
	if !reflect.DeepEqual(got.Sentinel, want) {
		t.Errorf("from attributes: %+v, want %+v", got.Sentinel, want)
	}
	// A url attribute means a single server, whatever the environment says about Sentinel.
	got, _ = optionsFrom(providerModel{URL: types.StringValue("valkey://127.0.0.1:1/0")}, getenv)
	if got.Sentinel != nil || got.URL != "valkey://127.0.0.1:1/0" {
		t.Errorf("url attribute with sentinel env: %+v", got)
	}
}

func TestOptionsFrom_UnknownValuesAreRecorded(t *testing.T) {
	got, _ := optionsFrom(providerModel{URL: types.StringUnknown(), Password: types.StringValue("pw"),
		TLS: &tlsModel{CACert: types.StringUnknown()}}, func(string) string { return "" })
	if !reflect.DeepEqual(got.Unknown, []string{"tls.ca_cert", "url"}) {
		t.Errorf("Unknown = %q, want tls.ca_cert and url", got.Unknown)
	}
	got, _ = optionsFrom(providerModel{Cluster: &clusterModel{Addresses: []types.String{types.StringValue("a:1"), types.StringUnknown()}}},
		func(string) string { return "" })
	if !reflect.DeepEqual(got.Unknown, []string{"cluster.addresses"}) {
		t.Errorf("Unknown = %q, want cluster.addresses", got.Unknown)
	}
	if got, _ := optionsFrom(providerModel{}, func(string) string { return "" }); got.Unknown != nil {
		t.Errorf("Unknown = %q for a known configuration", got.Unknown)
	}
}

func TestCheckEnv_NamesBadVariables(t *testing.T) {
	env := map[string]string{envDB: "two", envMaxRetries: "-1", envDialTimeout: "5", envCommandTimeout: "0s", envTLSInsecureSkipVerify: "maybe"}
	err := checkEnv(func(k string) string { return env[k] })
	if err == nil {
		t.Fatal("bad variables accepted")
	}
	for name := range env {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name %s", err, name)
		}
	}
	good := map[string]string{envDB: "2", envMaxRetries: "0", envDialTimeout: "5s", envCommandTimeout: "150ms", envTLSInsecureSkipVerify: "false"}
	if err := checkEnv(func(k string) string { return good[k] }); err != nil {
		t.Errorf("good variables refused: %v", err)
	}
}

func TestAccProvider_ConflictingSettingsFailAtPlan(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ block, want string }{
		"ca_cert and ca_cert_file": {`tls {
    ca_cert      = "x"
    ca_cert_file = "/x"
  }`, `(?s)Invalid Attribute Combination.*ca_cert_file`},
		"cert and cert_file": {`tls {
    cert      = "x"
    cert_file = "/x"
  }`, `(?s)Invalid Attribute Combination.*cert_file`},
		"key and key_file": {`tls {
    key      = "x"
    key_file = "/x"
  }`, `(?s)Invalid Attribute Combination.*key_file`},
		"db with cluster": {`db = 1
  cluster {
    addresses = ["127.0.0.1:7000"]
  }`, `(?s)Invalid Attribute Combination.*cluster`},
		"url with cluster": {`url = "valkey://127.0.0.1:1"
  cluster {
    addresses = ["127.0.0.1:7000"]
  }`, `(?s)Invalid Attribute Combination.*cluster`},
		"cluster with sentinel": {`cluster {
    addresses = ["127.0.0.1:7000"]
  }
  sentinel {
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
