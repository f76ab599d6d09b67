package provider

import (
	"context"
	"errors"
	"fmt"
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
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Valkey URL", "The url cannot be used: "+err.Error()+".")
	}
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
