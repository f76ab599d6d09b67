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
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

// providerObjectType is the provider configuration's type, as the schema says.
func providerObjectType(t *testing.T) types.ObjectType {
	t.Helper()
	var resp fwprovider.SchemaResponse
	New("test")().Schema(context.Background(), fwprovider.SchemaRequest{}, &resp)
	objType, ok := resp.Schema.Type().(types.ObjectType)
	if !ok {
		t.Fatalf("the provider schema's type is a %T", resp.Schema.Type())
	}
	return objType
}

// configOf is a provider configuration holding values at their attributes' paths (such as
// "tls.ca_cert"), every other attribute null; a value for an object (tls) replaces it whole.
func configOf(t *testing.T, values map[string]attr.Value) types.Object {
	t.Helper()
	return objectOf(t, "", providerObjectType(t).AttrTypes, values)
}

func objectOf(t *testing.T, prefix string, attrTypes map[string]attr.Type, values map[string]attr.Value) types.Object {
	t.Helper()
	ctx := context.Background()
	attrs := map[string]attr.Value{}
	for name, typ := range attrTypes {
		full := prefix + name
		objType, isObject := typ.(types.ObjectType)
		nestedSet := false
		for path := range values {
			nestedSet = nestedSet || strings.HasPrefix(path, full+".")
		}
		if v, ok := values[full]; ok {
			attrs[name] = v
			continue
		}
		if isObject && nestedSet {
			attrs[name] = objectOf(t, full+".", objType.AttrTypes, values)
			continue
		}
		null, err := typ.ValueFromTerraform(ctx, tftypes.NewValue(typ.TerraformType(ctx), nil))
		if err != nil {
			t.Fatal(err)
		}
		attrs[name] = null
	}
	obj, diags := types.ObjectValue(attrTypes, attrs)
	if diags.HasError() {
		t.Fatal(diags)
	}
	return obj
}

// unknownObject is the provider attribute name (tls, cluster, sentinel) unknown as a whole, as
// when a module passes `tls = var.tls` built from a resource.
func unknownObject(t *testing.T, name string) types.Object {
	t.Helper()
	objType, ok := providerObjectType(t).AttrTypes[name].(types.ObjectType)
	if !ok {
		t.Fatalf("provider attribute %s is not an object", name)
	}
	return types.ObjectUnknown(objType.AttrTypes)
}

// strs is a list of strings as a provider attribute holds it.
func strs(vs ...string) types.List {
	l, _ := types.ListValueFrom(context.Background(), types.StringType, vs)
	return l
}

// resolveAll is resolveSettings with getenv reading env; it fails the test on diagnostics.
func resolveAll(t *testing.T, config types.Object, env map[string]string) resolvedSettings {
	t.Helper()
	resolved, diags := resolveSettings(config, func(k string) string { return env[k] })
	if diags.HasError() {
		t.Fatalf("resolveSettings: %v", diags)
	}
	return resolved
}

// resolve is the valkey.Options resolveAll makes.
func resolve(t *testing.T, config types.Object, env map[string]string) valkey.Options {
	t.Helper()
	return resolveAll(t, config, env).options
}

// optionField is the valkey.Options field named like "TLS.CACert", and whether every struct on
// the way was made (false for TLS.CACert when TLS is nil).
func optionField(opts valkey.Options, field string) (reflect.Value, bool) {
	v := reflect.ValueOf(opts)
	for _, name := range strings.Split(field, ".") {
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.FieldByName(name)
	}
	return v, true
}

// sample is a value for a setting of kind k: as the attribute and the variable hold it, and as
// the Options field then holds it. The attribute's numbers and booleans are zero, to check that
// an explicit 0 or false still beats the variable.
func sample(k kind) (attribute attr.Value, fromAttribute any, variable string, fromVariable any) {
	switch k {
	case kindInt:
		return types.Int64Value(0), new(0), "7", new(7)
	case kindDuration:
		return types.StringValue("250ms"), 250 * time.Millisecond, "7s", 7 * time.Second
	case kindBool:
		return types.BoolValue(false), false, "true", true
	case kindList:
		return strs("127.0.0.1:3"), []string{"127.0.0.1:3"}, "127.0.0.1:1, 127.0.0.1:2", []string{"127.0.0.1:1", "127.0.0.1:2"}
	case kindMap:
		return types.MapValueMust(types.StringType, map[string]attr.Value{"10.0.0.1:6379": types.StringValue("127.0.0.1:3")}),
			map[string]string{"10.0.0.1:6379": "127.0.0.1:3"}, "10.0.0.1:6379=127.0.0.1:1, 10.0.0.2:6379=127.0.0.1:2",
			map[string]string{"10.0.0.1:6379": "127.0.0.1:1", "10.0.0.2:6379": "127.0.0.1:2"}
	}
	return types.StringValue("from-attribute"), "from-attribute", "from-variable", "from-variable"
}

// variablesFor sets the variable of s to value, and the variable that chooses the connection
// mode s belongs to (sentinel.* are read only in Sentinel mode).
func variablesFor(s setting, value string) map[string]string {
	env := map[string]string{s.env: value}
	if mode, ok := settingNamed(s.parent()); ok && mode.env != "" && mode.env != s.env {
		env[mode.env] = "chosen"
	}
	return env
}

// TestResolveSettings_EachSettingPrecedence checks attribute > environment variable > default for
// every setting of the table, one at a time: with the attribute set, with only the variable
// set, with neither.
func TestResolveSettings_EachSettingPrecedence(t *testing.T) {
	for _, s := range settings {
		if s.to.kind == kindObject {
			continue
		}
		t.Run(s.name, func(t *testing.T) {
			attribute, fromAttribute, variable, fromVariable := sample(s.to.kind)
			env := variablesFor(s, variable)
			got, made := optionField(resolve(t, configOf(t, map[string]attr.Value{s.name: attribute}), env), s.field)
			if !made || !reflect.DeepEqual(got.Interface(), fromAttribute) {
				t.Errorf("attribute and %s both set: %s is %v, want the attribute's %v", s.env, s.field, got, fromAttribute)
			}
			got, made = optionField(resolve(t, configOf(t, nil), env), s.field)
			if !made || !reflect.DeepEqual(got.Interface(), fromVariable) {
				t.Errorf("only %s set: %s is %v, want the variable's %v", s.env, s.field, got, fromVariable)
			}
			// Neither: the field stays zero (internal/valkey applies the default), and so does the
			// object holding it (no TLS, no Sentinel).
			if got, made = optionField(resolve(t, configOf(t, nil), nil), s.field); made && !got.IsZero() {
				t.Errorf("neither set: %s is %v, want it left to the default", s.field, got)
			}
			if parent, ok := settingNamed(s.parent()); ok && parent.field != "" {
				if got, _ := optionField(resolve(t, configOf(t, nil), nil), parent.field); !got.IsNil() {
					t.Errorf("neither set: %s is %v, want nil", parent.field, got)
				}
			}
		})
	}
}

// TestResolveSettings_ModeChoosesWhatIsRead: the cluster and sentinel attributes choose their mode;
// without them or a url attribute, their variables do; only the chosen mode's settings are read.
func TestResolveSettings_ModeChoosesWhatIsRead(t *testing.T) {
	cluster := map[string]attr.Value{"cluster.addresses": strs("127.0.0.1:3")}
	for name, tc := range map[string]struct {
		config            map[string]attr.Value
		env               map[string]string
		url               string
		cluster, sentinel bool
		source            string
	}{
		"cluster attribute":        {cluster, map[string]string{envOf("url"): "valkey://env:1/0"}, "", true, false, "the cluster attribute"},
		"cluster variable":         {nil, map[string]string{envOf("cluster"): "127.0.0.1:1", envOf("url"): "valkey://env:1/0"}, "", true, false, "the cluster attribute"},
		"cluster before sentinel":  {nil, map[string]string{envOf("cluster"): "127.0.0.1:1", envOf("sentinel"): "p"}, "", true, false, "the cluster attribute"},
		"sentinel variable":        {nil, map[string]string{envOf("sentinel"): "p"}, "", false, true, "the sentinel attribute"},
		"url attribute beats both": {map[string]attr.Value{"url": types.StringValue("valkey://attr:1/0")}, map[string]string{envOf("cluster"): "127.0.0.1:1", envOf("sentinel"): "p"}, "valkey://attr:1/0", false, false, "the url attribute"},
		"url variable":             {nil, map[string]string{envOf("url"): "valkey://env:1/0"}, "valkey://env:1/0", false, false, "the VALKEY_URL environment variable"},
		"default":                  {nil, nil, "", false, false, "the default, " + valkey.DefaultURL},
	} {
		got := resolveAll(t, configOf(t, tc.config), tc.env)
		if got.options.URL != tc.url || (got.options.ClusterAddrs != nil) != tc.cluster || (got.options.Sentinel != nil) != tc.sentinel || got.urlSource != tc.source {
			t.Errorf("%s: url %q, cluster %v, sentinel %+v, source %q", name, got.options.URL, got.options.ClusterAddrs, got.options.Sentinel, got.urlSource)
		}
	}
}

// TestResolveSettings_ObjectWithoutAttributesIsSet: `tls = {}` turns TLS on, and `sentinel = {}`
// chooses Sentinel (valkey.NewClient then says that master_name is empty).
func TestResolveSettings_ObjectWithoutAttributesIsSet(t *testing.T) {
	empty := func(name string) attr.Value {
		objType, _ := providerObjectType(t).AttrTypes[name].(types.ObjectType)
		return objectOf(t, name+".", objType.AttrTypes, nil)
	}
	got := resolve(t, configOf(t, map[string]attr.Value{"tls": empty("tls"), "sentinel": empty("sentinel")}), nil)
	if got.TLS == nil || got.Sentinel == nil {
		t.Errorf("tls = {} and sentinel = {}: TLS %v, Sentinel %v; want both set", got.TLS, got.Sentinel)
	}
}

// The sentinel attribute's other fields follow the same rule; checked together to keep the table short.
func TestResolveSettings_SentinelFields(t *testing.T) {
	env := map[string]string{
		envOf("sentinel.master_name"): "p", envOf("sentinel.addresses"): "127.0.0.1:26379,127.0.0.1:26380",
		envOf("sentinel.username"): "env-su", envOf("sentinel.password"): "env-sp",
	}
	got := resolve(t, configOf(t, nil), env)
	want := &valkey.SentinelOptions{MasterName: "p", Addrs: []string{"127.0.0.1:26379", "127.0.0.1:26380"}, Username: "env-su", Password: "env-sp"}
	if !reflect.DeepEqual(got.Sentinel, want) {
		t.Errorf("from env: %+v, want %+v", got.Sentinel, want)
	}
	got = resolve(t, configOf(t, map[string]attr.Value{
		"sentinel.master_name": types.StringValue("q"), "sentinel.addresses": strs("127.0.0.1:1"),
		"sentinel.username": types.StringValue("attr-su"), "sentinel.password": types.StringValue("attr-sp"),
	}), env)
	want = &valkey.SentinelOptions{MasterName: "q", Addrs: []string{"127.0.0.1:1"}, Username: "attr-su", Password: "attr-sp"}
	if !reflect.DeepEqual(got.Sentinel, want) {
		t.Errorf("from attributes: %+v, want %+v", got.Sentinel, want)
	}
	// A url attribute means a single server, whatever the environment says about Sentinel.
	got = resolve(t, configOf(t, map[string]attr.Value{"url": types.StringValue("valkey://127.0.0.1:1/0")}), env)
	if got.Sentinel != nil || got.URL != "valkey://127.0.0.1:1/0" {
		t.Errorf("url attribute with sentinel env: %+v", got)
	}
}

func TestResolveSettings_UnknownValuesAreRecorded(t *testing.T) {
	for want, config := range map[string]types.Object{
		"tls.ca_cert,url": configOf(t, map[string]attr.Value{"url": types.StringUnknown(), "password": types.StringValue("pw"),
			"tls.ca_cert": types.StringUnknown()}),
		"cluster.addresses": configOf(t, map[string]attr.Value{"cluster.addresses": types.ListValueMust(types.StringType,
			[]attr.Value{types.StringValue("a:1"), types.StringUnknown()})}),
		// A whole object unknown, as when a module passes `tls = var.tls` built from a resource.
		"tls":     configOf(t, map[string]attr.Value{"tls": unknownObject(t, "tls")}),
		"cluster": configOf(t, map[string]attr.Value{"cluster": unknownObject(t, "cluster")}),
	} {
		got := resolveAll(t, config, nil)
		if strings.Join(got.unknown, ",") != want {
			t.Errorf("unknown = %q, want %s", got.unknown, want)
		}
	}
	if got := resolveAll(t, configOf(t, nil), nil); got.unknown != nil {
		t.Errorf("unknown = %q for a known configuration", got.unknown)
	}
}

// TestResolveSettings_BadVariablesAreErrors: a variable that is set but does not parse is an
// error naming it, never a silent zero.
func TestResolveSettings_BadVariablesAreErrors(t *testing.T) {
	for _, bad := range []map[string]string{
		{envOf("db"): "two"}, {envOf("max_retries"): "-1"}, {envOf("min_replica_acks"): "1.5"}, {envOf("dial_timeout"): "5"},
		{envOf("command_timeout"): "0s"}, {envOf("replica_ack_timeout"): "soon"}, {envOf("tls.insecure_skip_verify"): "maybe"},
	} {
		_, diags := resolveSettings(configOf(t, nil), func(k string) string { return bad[k] })
		for name := range bad {
			if !diags.HasError() || !strings.Contains(diags.Errors()[0].Detail(), name) {
				t.Errorf("%v: diagnostics %v do not name %s", bad, diags, name)
			}
		}
	}
	good := map[string]string{envOf("db"): "2", envOf("max_retries"): "0", envOf("dial_timeout"): "5s",
		envOf("command_timeout"): "150ms", envOf("tls.insecure_skip_verify"): "false"}
	if _, diags := resolveSettings(configOf(t, nil), func(k string) string { return good[k] }); diags.HasError() {
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
					Config:      fmt.Sprintf("provider \"valkey\" {\n  %s\n}\n", tc.block) + acctest.StreamGroupConfig("s", "g", "new"),
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
` + acctest.StreamGroupConfig("s", "g", "new"),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
		}},
	})
}

// TestAccProvider_URLQueryIsRefusedAtPlan: go-redis would read settings from a URL's query and
// the provider's own would then override them without a word, so a URL with a query fails the
// plan on url, naming the setting to use for each parameter.
func TestAccProvider_URLQueryIsRefusedAtPlan(t *testing.T) {
	t.Parallel()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: "provider \"valkey\" {\n  url = \"valkey://127.0.0.1:6379/0?dial_timeout=42s&max_retries=9&protocol=3\"\n}\n" +
				acctest.StreamGroupConfig("s", "g", "new"),
			PlanOnly: true,
			ExpectError: regexp.MustCompile(`(?s)Invalid Valkey URL.*query\s+parameters\s+\(dial_timeout,\s+max_retries,\s+protocol\).*dial_timeout:\s+the\s+dial_timeout\s+attribute.*` +
				`max_retries:\s+the\s+max_retries\s+attribute.*protocol:\s+nothing`),
		}},
	})
}

// The same URL from VALKEY_URL fails when the provider is configured, naming the variable.
func TestAccProvider_URLQueryFromEnvironmentIsRefused(t *testing.T) {
	t.Setenv(envOf("url"), "valkey://127.0.0.1:6379/0?dial_timeout=42s")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      acctest.StreamGroupConfig("s", "g", "new"),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)Invalid Valkey URL.*VALKEY_URL\s+environment\s+variable.*dial_timeout:\s+the\s+dial_timeout\s+attribute`),
		}},
	})
}
