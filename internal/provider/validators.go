package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

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
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Valkey URL", "The url cannot be used: "+err.Error()+"."+queryAdvice(err))
	}
}

// queryAttributes names the provider setting that replaces each query parameter go-redis
// would read from a URL.
var queryAttributes = map[string]string{
	"dial_timeout":  "the dial_timeout attribute",
	"read_timeout":  "the command_timeout attribute",
	"write_timeout": "the command_timeout attribute",
	"max_retries":   "the max_retries attribute",
	"db":            "the db attribute, or the URL's /db path",
	"skip_verify":   "tls.insecure_skip_verify",
	"protocol":      "nothing: the provider always speaks RESP2",
	"client_name":   "nothing: the provider sends no client name",
}

// queryAdvice says, for a URL refused for its query, which setting to use for each parameter.
func queryAdvice(err error) string {
	var urlErr *valkey.URLError
	if !errors.As(err, &urlErr) || len(urlErr.Params) == 0 {
		return ""
	}
	advice := make([]string, 0, len(urlErr.Params))
	for _, p := range urlErr.Params {
		use, known := queryAttributes[p]
		if !known {
			use = "no provider setting"
		}
		advice = append(advice, fmt.Sprintf("%s: %s", p, use))
	}
	return " Remove the query string and set each value where the provider reads it (" + strings.Join(advice, "; ") + ")."
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
	if _, err := parseDuration(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Duration",
			fmt.Sprintf("The value %q %s.", req.ConfigValue.ValueString(), err))
	}
}

// parseDuration reads a positive Go duration; attributes and variables share it.
func parseDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, errors.New(`is not a positive duration such as "5s" or "500ms"`)
	}
	return d, nil
}
