package provider

import (
	"context"
	"errors"
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	fwprovider "github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the table of variables in templates/index.md.tmpl from the settings")

// goTypes is the Go type of the valkey.Options field each kind fills (an object's is a pointer
// to a struct).
var goTypes = map[kind]reflect.Type{
	kindString:   reflect.TypeFor[string](),
	kindURL:      reflect.TypeFor[string](),
	kindInt:      reflect.TypeFor[*int](),
	kindDuration: reflect.TypeFor[time.Duration](),
	kindBool:     reflect.TypeFor[bool](),
	kindList:     reflect.TypeFor[[]string](),
	kindMap:      reflect.TypeFor[map[string]string](),
}

// schemaAttribute is the provider schema's attribute at a setting's path.
func schemaAttribute(t *testing.T, name string) (schema.Attribute, bool) {
	t.Helper()
	var resp fwprovider.SchemaResponse
	New("test")().Schema(context.Background(), fwprovider.SchemaRequest{}, &resp)
	attributes := resp.Schema.Attributes
	parts := strings.Split(name, ".")
	for _, part := range parts[:len(parts)-1] {
		object, ok := attributes[part].(schema.SingleNestedAttribute)
		if !ok {
			return nil, false
		}
		attributes = object.Attributes
	}
	a, ok := attributes[parts[len(parts)-1]]
	return a, ok
}

// TestSettings_EveryRowIsWired: each row's attribute is in the schema with its kind's type and
// its description names the variable; its Options field exists with the kind's Go type; and
// its variable, set alone, fills that field. Names, variables and fields are each used once
// (an object shares the variable that chooses it with its attribute).
func TestSettings_EveryRowIsWired(t *testing.T) {
	seen := map[string]string{}
	for _, s := range settings {
		for _, key := range []string{"attribute " + s.name, "variable " + s.env, "field " + s.field} {
			if strings.HasSuffix(key, " ") || (s.to.kind == kindObject && strings.HasPrefix(key, "variable")) {
				continue
			}
			if other, used := seen[key]; used {
				t.Errorf("%s: %s is %s's too", s.name, key, other)
			}
			seen[key] = s.name
		}

		a, ok := schemaAttribute(t, s.name)
		if !ok {
			t.Errorf("%s: not in the provider schema", s.name)
			continue
		}
		want := map[kind]string{kindString: "StringAttribute", kindURL: "StringAttribute", kindDuration: "StringAttribute",
			kindInt: "Int64Attribute", kindBool: "BoolAttribute", kindList: "ListAttribute", kindMap: "MapAttribute", kindObject: "SingleNestedAttribute"}[s.to.kind]
		if got := reflect.TypeOf(a).Name(); got != want {
			t.Errorf("%s: a %s in the schema, want a %s", s.name, got, want)
		}
		if s.to.kind != kindObject && s.env != "" && !strings.Contains(a.GetMarkdownDescription(), "Defaults to `$"+s.env+"`") {
			t.Errorf("%s: the description %q does not name %s", s.name, a.GetMarkdownDescription(), s.env)
		}
		if a.IsSensitive() != s.sensitive || !a.IsOptional() {
			t.Errorf("%s: sensitive %v, optional %v", s.name, a.IsSensitive(), a.IsOptional())
		}

		if s.field != "" {
			field, _ := optionField(valkey.Options{TLS: &valkey.TLSOptions{}, Sentinel: &valkey.SentinelOptions{}, AWSIAM: &valkey.AWSIAMOptions{}, GCPIAM: &valkey.GCPIAMOptions{}}, s.field)
			switch {
			case !field.IsValid():
				t.Errorf("%s: valkey.Options has no field %s", s.name, s.field)
			case s.to.kind == kindObject && (field.Kind() != reflect.Pointer || field.Type().Elem().Kind() != reflect.Struct):
				t.Errorf("%s: %s is a %s, want a pointer to a struct", s.name, s.field, field.Type())
			case s.to.kind != kindObject && field.Type() != goTypes[s.to.kind]:
				t.Errorf("%s: %s is a %s, want a %s", s.name, s.field, field.Type(), goTypes[s.to.kind])
			}
		}

		if s.env == "" {
			continue
		}
		_, _, variable, _ := sample(s.to.kind)
		filled := s.field
		if filled == "" { // the cluster object: its variable fills its attribute's field
			filled = "ClusterAddrs"
		}
		if got, made := optionField(resolve(t, configOf(t, nil), variablesFor(s, variable)), filled); !made || got.IsZero() {
			t.Errorf("%s: %s set alone leaves %s empty", s.name, s.env, filled)
		}
	}
}

// optionFields are the paths of every field of valkey.Options, the nested ones included
// ("TLS", "TLS.CACert").
func optionFields(typ reflect.Type, prefix string) []string {
	var fields []string
	for field := range typ.Fields() {
		name := prefix + field.Name
		fields = append(fields, name)
		if field.Type.Kind() == reflect.Pointer && field.Type.Elem().Kind() == reflect.Struct {
			fields = append(fields, optionFields(field.Type.Elem(), name+".")...)
		}
	}
	return fields
}

// settingsError is the one diagnostic addSettingsError makes of err.
func settingsError(t *testing.T, err error) diag.Diagnostic {
	t.Helper()
	var diags diag.Diagnostics
	addSettingsError(&diags, err, "the url attribute")
	if len(diags) != 1 {
		t.Fatalf("%v: %d diagnostics", err, len(diags))
	}
	return diags[0]
}

// TestAddSettingsError_NamesTheAttributeOfEveryField: an OptionError names a field of
// valkey.Options, so each field has a row, and the diagnostic of an OptionError on it is on the
// row's attribute and names its variable. The failures below are every kind NewClient reports.
func TestAddSettingsError_NamesTheAttributeOfEveryField(t *testing.T) {
	missing := t.TempDir() + "/missing.pem"
	var fields []string
	for name, opts := range map[string]valkey.Options{
		"two modes":        {ClusterAddrs: []string{"a:1"}, Sentinel: &valkey.SentinelOptions{MasterName: "m", Addrs: []string{"a:2"}}},
		"cluster address":  {ClusterAddrs: []string{"a"}},
		"no primary":       {Sentinel: &valkey.SentinelOptions{Addrs: []string{"a:1"}}},
		"no sentinels":     {Sentinel: &valkey.SentinelOptions{MasterName: "m"}},
		"ca twice":         {TLS: &valkey.TLSOptions{CACert: "x", CACertFile: "y"}},
		"ca not PEM":       {TLS: &valkey.TLSOptions{CACert: "x"}},
		"ca file":          {TLS: &valkey.TLSOptions{CACertFile: missing}},
		"cert file":        {TLS: &valkey.TLSOptions{CertFile: missing}},
		"key file":         {TLS: &valkey.TLSOptions{KeyFile: missing}},
		"cert without key": {TLS: &valkey.TLSOptions{Cert: "x"}},
		"key without cert": {TLS: &valkey.TLSOptions{Key: "x"}},
		"no pair":          {TLS: &valkey.TLSOptions{Cert: "x", Key: "y"}},
	} {
		_, err := valkey.NewClient(opts)
		var optionErr *valkey.OptionError
		if !errors.As(err, &optionErr) {
			t.Errorf("%s: NewClient returned %v, want an OptionError", name, err)
			continue
		}
		fields = append(fields, optionErr.Field)
	}
	for _, field := range append(fields, optionFields(reflect.TypeFor[valkey.Options](), "")...) {
		s, ok := settingFilling(field)
		if !ok {
			t.Errorf("valkey.Options.%s: no setting fills it", field)
			continue
		}
		want := "The connection setting " + s.name + " (or " + s.env + ") is wrong."
		if s.env == "" {
			want = "The connection setting " + s.name + " is wrong."
		}
		d := settingsError(t, &valkey.OptionError{Field: field, Reason: "is wrong"})
		withPath, _ := d.(diag.DiagnosticWithPath)
		if withPath == nil || !withPath.Path().Equal(attributePath(s.name)) || !strings.HasPrefix(d.Detail(), want) {
			t.Errorf("%s: diagnostic %q on %v, want it on %s, saying %q", field, d.Detail(), withPath, s.name, want)
		}
	}
}

// TestQueryAdvice_NamesTheSettingOfEachParameter: a URL refused for its query names, for each
// parameter, the setting that replaces it.
func TestQueryAdvice_NamesTheSettingOfEachParameter(t *testing.T) {
	_, err := valkey.ParseURL("valkey://127.0.0.1:6379/0?read_timeout=1s&skip_verify=true&protocol=3&min_idle_conns=9")
	advice := queryAdvice(err)
	for _, want := range []string{"read_timeout: the command_timeout attribute", "skip_verify: the tls.insecure_skip_verify attribute",
		"protocol: nothing: the provider always speaks RESP2", "min_idle_conns: no provider setting"} {
		if !strings.Contains(advice, want) {
			t.Errorf("advice %q does not say %q", advice, want)
		}
	}
}

// TestSettings_DocumentationTableIsCurrent: the table of variables in the provider's page is
// the settings table's. `go test ./internal/provider -run TestSettings_DocumentationTableIsCurrent
// -update-docs` (scripts/generate.sh runs it) rewrites it.
func TestSettings_DocumentationTableIsCurrent(t *testing.T) {
	const template = "../../templates/index.md.tmpl"
	raw, err := os.ReadFile(template)
	if err != nil {
		t.Fatal(err)
	}
	page := string(raw)
	start := strings.Index(page, "| attribute | environment variable | default |\n")
	if start < 0 {
		t.Fatalf("%s has no table of variables", template)
	}
	end := start
	for end < len(page) && page[end] == '|' {
		end += strings.Index(page[end:], "\n") + 1
	}
	want := environmentTable()
	if page[start:end] == want {
		return
	}
	if !*updateDocs {
		t.Fatalf("the table of variables in %s is not the settings': run scripts/generate.sh. Want:\n%s", template, want)
	}
	if err := os.WriteFile(template, []byte(page[:start]+want+page[end:]), 0o644); err != nil {
		t.Fatal(err)
	}
}
