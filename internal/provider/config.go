package provider

import (
	"fmt"
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
		if s.to.kind != kindObject {
			if raw := r.getenv(s.env); raw != "" {
				if v, ok := r.fromVariable(s, raw); ok {
					s.to.set(&r.options, v)
				}
			}
		}
		return
	}
	if s.to.kind == kindObject {
		if s.to.set != nil {
			s.to.set(&r.options, value{})
		}
		return
	}
	if v, ok := r.fromAttribute(s, r.attribute(s.name)); ok {
		s.to.set(&r.options, v)
	}
}

// fromAttribute is the value of a known attribute.
func (r *resolver) fromAttribute(s setting, a attr.Value) (value, bool) {
	switch a := a.(type) {
	case types.Int64:
		return value{number: int(a.ValueInt64())}, true
	case types.Bool:
		return value{flag: a.ValueBool()}, true
	case types.List:
		out := make([]string, 0, len(a.Elements()))
		for _, e := range a.Elements() {
			if e.IsUnknown() {
				r.recordUnknown(s.name)
				return value{}, false
			}
			str, _ := e.(types.String)
			out = append(out, str.ValueString())
		}
		return value{list: out}, true
	case types.Map:
		out := make(map[string]string, len(a.Elements()))
		for k, e := range a.Elements() {
			if e.IsUnknown() {
				r.recordUnknown(s.name)
				return value{}, false
			}
			str, _ := e.(types.String)
			out[k] = str.ValueString()
		}
		return value{pairs: out}, true
	case types.String:
		if s.to.kind != kindDuration {
			return value{text: a.ValueString()}, true
		}
		if a.ValueString() == "" {
			return value{}, false
		}
		d, err := parseDuration(a.ValueString())
		if err != nil {
			r.diags.AddAttributeError(attributePath(s.name), "Invalid Provider Attribute", fmt.Sprintf("%s = %q %s.", s.name, a.ValueString(), err))
			return value{}, false
		}
		return value{duration: d}, true
	}
	r.diags.AddAttributeError(attributePath(s.name), "Unexpected Provider Attribute",
		fmt.Sprintf("The provider cannot read %s, a %T. This is a bug in the provider; please report it.", s.name, a))
	return value{}, false
}

// fromVariable is the value of a variable that is set. One that does not parse is an error
// naming it, and fills nothing.
func (r *resolver) fromVariable(s setting, raw string) (value, bool) {
	switch s.to.kind {
	case kindInt:
		n, err := strconv.Atoi(raw)
		if err != nil || n < 0 {
			r.badVariable(s.env, raw, "is not a whole number of 0 or more")
			return value{}, false
		}
		return value{number: n}, true
	case kindDuration:
		d, err := parseDuration(raw)
		if err != nil {
			r.badVariable(s.env, raw, err.Error())
			return value{}, false
		}
		return value{duration: d}, true
	case kindBool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			r.badVariable(s.env, raw, "is not true or false")
			return value{}, false
		}
		return value{flag: b}, true
	case kindList:
		return value{list: splitList(raw)}, true
	case kindMap:
		pairs := map[string]string{}
		for _, pair := range splitList(raw) {
			k, v, ok := strings.Cut(pair, "=")
			if !ok {
				r.badVariable(s.env, raw, "is not comma-separated key=value pairs")
				return value{}, false
			}
			pairs[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
		return value{pairs: pairs}, true
	}
	return value{text: raw}, true
}

func (r *resolver) badVariable(env, value, problem string) {
	r.diags.AddError("Invalid Environment Variable",
		fmt.Sprintf("%s=%q %s. Fix or unset the variable, or set the matching provider attribute.", env, value, problem))
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
