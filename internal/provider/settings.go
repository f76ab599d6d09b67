package provider

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/boolvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/objectvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

// Each provider setting is one row of settings (settings_table.go): its attribute, the
// environment variable read when the attribute is not set, the valkey.Options field it fills,
// the default its description quotes, its words and its checks. The schema
// (settingAttributes), the resolver (config.go), the diagnostics (addSettingsError,
// queryAdvice) and the documentation's table of variables (environmentTable) all read these
// rows, so a new setting is one row and one field of valkey.Options. Defaults stay
// internal/valkey's: a row only quotes them.

// kind is what a setting holds: its schema type and how its variable is read.
type kind int

const (
	kindString   kind = iota // string
	kindURL                  // string, checked with valkey.ParseURL at plan time
	kindInt                  // 0 or more
	kindDuration             // positive; a string such as "5s" where people write it
	kindBool                 // true or false
	kindList                 // strings; comma-separated in the variable
	kindObject               // nested attributes, each a row named "<object>.<attribute>"
	kindMap                  // string to string; "key=value" pairs, comma-separated, in the variable
)

// setting is one provider setting.
type setting struct {
	name string // the attribute's path: "url", "tls.ca_cert"
	// env is the variable read when the attribute is not set. For the cluster and sentinel
	// objects, it is the variable that chooses them when no url is set.
	env string
	to  target // where the value goes in valkey.Options, and its kind
	// field is the valkey.Options field that to fills, as valkey.OptionError names it: "DB",
	// "TLS.CACertFile". The cluster object has none: its attributes fill ClusterAddrs and AddressMap.
	field string
	doc   string // the description; the kind and the variable add their sentences to it
	// def is the default the description quotes when neither the attribute nor the variable is
	// set: internal/valkey's constant (it applies it), or what the server takes; "" for none.
	def       string
	sensitive bool
	conflicts []string // attributes it cannot be set with
	urlQuery  []string // the parameters of a URL's query it replaces (a URL with a query is refused)
	oneOf     []string // the values a string setting takes; nil for any
}

// target is where a setting's value goes in valkey.Options. It is made by one of the functions
// below from a typed pointer into Options, so its kind and the field's Go type always agree.
type target struct {
	kind kind
	set  func(*valkey.Options, value) // nil for the cluster object, which fills nothing itself
}

// value is a setting's value as read from its attribute or its variable: the field of its
// kind is the one set.
type value struct {
	text     string
	number   int
	duration time.Duration
	flag     bool
	list     []string
	pairs    map[string]string
}

func stringAt(at func(*valkey.Options) *string) target {
	return target{kindString, func(o *valkey.Options, v value) { *at(o) = v.text }}
}

func urlAt(at func(*valkey.Options) *string) target {
	return target{kindURL, stringAt(at).set}
}

func intAt(at func(*valkey.Options) **int) target {
	return target{kindInt, func(o *valkey.Options, v value) { *at(o) = new(v.number) }}
}

func durationAt(at func(*valkey.Options) *time.Duration) target {
	return target{kindDuration, func(o *valkey.Options, v value) { *at(o) = v.duration }}
}

func boolAt(at func(*valkey.Options) *bool) target {
	return target{kindBool, func(o *valkey.Options, v value) { *at(o) = v.flag }}
}

func listAt(at func(*valkey.Options) *[]string) target {
	return target{kindList, func(o *valkey.Options, v value) { *at(o) = v.list }}
}

func mapAt(at func(*valkey.Options) *map[string]string) target {
	return target{kindMap, func(o *valkey.Options, v value) { *at(o) = v.pairs }}
}

// objectAt is an object's target: setting the object, even as `tls = {}`, runs create, which
// makes its struct in Options.
func objectAt(create func(*valkey.Options)) target {
	if create == nil {
		return target{kind: kindObject}
	}
	return target{kindObject, func(o *valkey.Options, _ value) { create(o) }}
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
	if s.to.kind == kindDuration {
		d += `, a Go duration such as "5s" or "500ms".`
	}
	if len(s.oneOf) > 0 {
		d += " One of `" + strings.Join(s.oneOf, "`, `") + "`."
	}
	if s.to.kind == kindObject || s.env == "" {
		return d
	}
	d += " Defaults to `$" + s.env + "`"
	if s.to.kind == kindList {
		d += " (comma-separated)"
	}
	if s.to.kind == kindMap {
		d += " (comma-separated `key=value` pairs)"
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
	switch s.to.kind {
	case kindURL, kindString, kindDuration:
		var own []validator.String
		switch s.to.kind {
		case kindURL:
			own = append(own, urlValidator{})
		case kindDuration:
			own = append(own, durationValidator{})
		}
		if len(s.oneOf) > 0 {
			own = append(own, stringvalidator.OneOf(s.oneOf...))
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
	case kindMap:
		return schema.MapAttribute{MarkdownDescription: description, ElementType: types.StringType, Optional: true, Sensitive: s.sensitive,
			Validators: checks([]validator.Map{mapvalidator.SizeAtLeast(1)}, conflicts, mapvalidator.ConflictsWith)}
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
		if s.to.kind == kindObject {
			continue
		}
		variable, def := "`"+s.env+"`", "none"
		if s.to.kind == kindList {
			variable += " (comma-separated)"
		}
		if s.to.kind == kindMap {
			variable += " (comma-separated `key=value`)"
		}
		if s.def != "" {
			def = "`" + s.def + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", s.name, variable, def)
	}
	return b.String()
}
