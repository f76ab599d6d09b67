package provider

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

// resolvedSettings are the provider's settings, resolved.
type resolvedSettings struct {
	options   valkey.Options
	urlSource string   // where the URL came from, for errors about it
	unknown   []string // the settings not known yet (they depend on values known only after apply)
}

// modes are the three ways to reach the server, of which one is read: a single server (url), a
// cluster, or a primary found through Sentinel.
var modes = []string{"url", "cluster", "sentinel"}

// resolver reads each row of settings: the attribute, then its environment variable; what
// neither sets stays zero, and internal/valkey applies the default. Unknown attributes are
// recorded by name (no client is made from them), and variables that do not parse are errors.
type resolver struct {
	config  types.Object // the provider configuration
	getenv  func(string) string
	options valkey.Options
	unknown []string
	diags   diag.Diagnostics
}

// resolveSettings resolves every setting of the provider configuration and says where the URL
// came from. The settings of url, cluster and sentinel are read only for the one that mode
// chooses, after the others.
func resolveSettings(config types.Object, getenv func(string) string) (resolvedSettings, diag.Diagnostics) {
	r := &resolver{config: config, getenv: getenv}
	for _, s := range settings {
		if modeOf(s) == "" {
			r.resolve(s)
		}
	}
	mode := r.mode()
	for _, s := range settings {
		if modeOf(s) == mode {
			r.resolve(s)
		}
	}
	return resolvedSettings{options: r.options, urlSource: r.urlSource(mode), unknown: r.unknown}, r.diags
}

// modeOf is the mode whose settings s is one of, or "" for a setting every mode reads.
func modeOf(s setting) string {
	top, _, _ := strings.Cut(s.name, ".")
	if slices.Contains(modes, top) {
		return top
	}
	return ""
}

// mode chooses what is read: the cluster or the sentinel attribute when one is set (cluster
// first); without them or a url attribute, the variable that chooses one; else url.
func (r *resolver) mode() string {
	urlSet := r.attribute("url") != nil
	switch {
	case r.set("cluster") || (!urlSet && r.attribute("sentinel") == nil && r.getenv(envOf("cluster")) != ""):
		return "cluster"
	case r.set("sentinel") || (!urlSet && r.getenv(envOf("sentinel")) != ""):
		return "sentinel"
	}
	return "url"
}

// urlSource names where the URL came from, for errors about it.
func (r *resolver) urlSource(mode string) string {
	url := r.attribute("url")
	switch {
	case mode != "url":
		return "the " + mode + " attribute"
	case url == nil && r.options.URL != "":
		return "the " + envOf("url") + " environment variable"
	case r.options.URL == "" && (url == nil || !url.IsUnknown()):
		return "the default, " + valkey.DefaultURL
	}
	return "the url attribute"
}

// attribute is the configured value of the setting name, or nil when it is null or an object
// on the way is null or unknown (that object's own row records it).
func (r *resolver) attribute(name string) attr.Value {
	object := r.config
	parts := strings.Split(name, ".")
	for _, part := range parts[:len(parts)-1] {
		nested, ok := object.Attributes()[part].(types.Object)
		if !ok || nested.IsNull() || nested.IsUnknown() {
			return nil
		}
		object = nested
	}
	v := object.Attributes()[parts[len(parts)-1]]
	if v == nil || v.IsNull() {
		return nil
	}
	return v
}

// set reports whether the attribute name is set; an unknown one is recorded and is not.
func (r *resolver) set(name string) bool {
	v := r.attribute(name)
	if v != nil && v.IsUnknown() {
		r.recordUnknown(name)
		return false
	}
	return v != nil
}

func (r *resolver) recordUnknown(name string) {
	if !slices.Contains(r.unknown, name) {
		r.unknown = append(r.unknown, name)
	}
}

// resolve fills the Options field of s from its attribute, else from its variable. An object
// set without any of its attributes still makes its field (`tls = {}` turns TLS on).
func (r *resolver) resolve(s setting) {
	if !r.set(s.name) {
		if s.kind != kindObject {
			if raw := r.getenv(s.env); raw != "" {
				r.fill(s, r.fromVariable(s, raw))
			}
		}
		return
	}
	if s.kind == kindObject {
		if s.field != "" {
			r.fill(s, nil)
		}
		return
	}
	if value, ok := r.fromAttribute(s, r.attribute(s.name)); ok {
		r.fill(s, value)
	}
}

// fromAttribute is the Go value of a known attribute, as its Options field holds it.
func (r *resolver) fromAttribute(s setting, v attr.Value) (any, bool) {
	switch v := v.(type) {
	case types.Int64:
		return new(int(v.ValueInt64())), true
	case types.Bool:
		return v.ValueBool(), true
	case types.List:
		out := make([]string, 0, len(v.Elements()))
		for _, e := range v.Elements() {
			if e.IsUnknown() {
				r.recordUnknown(s.name)
				return nil, false
			}
			str, _ := e.(types.String)
			out = append(out, str.ValueString())
		}
		return out, true
	case types.String:
		if s.kind != kindDuration {
			return v.ValueString(), true
		}
		if v.ValueString() == "" {
			return nil, false
		}
		d, err := parseDuration(v.ValueString())
		if err != nil {
			r.diags.AddAttributeError(attributePath(s.name), "Invalid Provider Attribute", fmt.Sprintf("%s = %q %s.", s.name, v.ValueString(), err))
		}
		return d, true
	}
	r.diags.AddAttributeError(attributePath(s.name), "Unexpected Provider Attribute",
		fmt.Sprintf("The provider cannot read %s, a %T. This is a bug in the provider; please report it.", s.name, v))
	return nil, false
}

// fromVariable is the Go value of a variable that is set, as the Options field of s holds it.
// One that does not parse is an error naming it, never a silent zero.
func (r *resolver) fromVariable(s setting, raw string) any {
	switch s.kind {
	case kindInt:
		n, err := strconv.Atoi(raw)
		if err != nil || n < 0 {
			r.badVariable(s.env, raw, "is not a whole number of 0 or more")
			return (*int)(nil)
		}
		return &n
	case kindDuration:
		d, err := parseDuration(raw)
		if err != nil {
			r.badVariable(s.env, raw, err.Error())
		}
		return d
	case kindBool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			r.badVariable(s.env, raw, "is not true or false")
		}
		return b
	case kindList:
		return splitList(raw)
	}
	return raw
}

func (r *resolver) badVariable(env, value, problem string) {
	r.diags.AddError("Invalid Environment Variable",
		fmt.Sprintf("%s=%q %s. Fix or unset the variable, or set the matching provider attribute.", env, value, problem))
}

// fill sets the Options field of s to value, making the structs on the way (a TLS variable
// turns TLS on); a nil value only makes them.
func (r *resolver) fill(s setting, value any) {
	field := reflect.ValueOf(&r.options).Elem()
	for _, name := range strings.Split(s.field, ".") {
		field = made(field).FieldByName(name)
	}
	if value == nil {
		made(field)
		return
	}
	field.Set(reflect.ValueOf(value))
}

// made is the struct v holds, made first when v is a nil pointer.
func made(v reflect.Value) reflect.Value {
	if v.Kind() != reflect.Pointer {
		return v
	}
	if v.IsNil() {
		v.Set(reflect.New(v.Type().Elem()))
	}
	return v.Elem()
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
