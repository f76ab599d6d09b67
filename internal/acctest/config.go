package acctest

import (
	"fmt"
	"regexp"

	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// The Terraform configuration the tests apply, in HCL.

// ProviderConfig is a provider block that points the provider at srv.
func ProviderConfig(srv *valkeytest.Server) string {
	return fmt.Sprintf("provider \"valkey\" {\n  url = %q\n}\n", srv.URL())
}

// ProviderUserConfig is a provider block that logs in to srv as user with password.
func ProviderUserConfig(srv *valkeytest.Server, user, password string) string {
	return fmt.Sprintf("provider \"valkey\" {\n  url      = %q\n  username = %q\n  password = %q\n}\n", srv.URL(), user, password)
}

// StreamGroupConfig declares valkey_stream_group.test.
func StreamGroupConfig(stream, name, start string) string {
	return NamedGroupConfig("test", stream, name, start)
}

// NamedGroupConfig declares valkey_stream_group.<resource>.
func NamedGroupConfig(resource, stream, name, start string) string {
	return fmt.Sprintf(`
resource "valkey_stream_group" %[1]q {
  stream      = %[2]q
  name        = %[3]q
  group_start = %[4]q
}
`, resource, stream, name, start)
}

// TwoGroupsConfig declares the colliding pair: group "team/a" on stream, and group "a" on
// stream+"/team". Before names were escaped, both had the ID stream+"/team/a".
func TwoGroupsConfig(stream string) string {
	return NamedGroupConfig("team", stream, "team/a", "new") +
		NamedGroupConfig("other", stream+"/team", "a", "new")
}

// GroupNullStartConfig declares valkey_stream_group.test with group_start = null, as
// configuration generated for an import writes it.
func GroupNullStartConfig(stream, name string) string {
	return fmt.Sprintf("resource \"valkey_stream_group\" \"test\" {\n  stream      = %q\n  name        = %q\n  group_start = null\n}\n", stream, name)
}

// StartNotDeclared matches the error a null group_start meets: on the attribute, naming both
// choices.
var StartNotDeclared = regexp.MustCompile(`(?s)Group Start Not Declared.*group_start.*required.*"new".*"head"`)

// StreamGroupDataSourceConfig declares data.valkey_stream_group.test.
func StreamGroupDataSourceConfig(stream, name string) string {
	return fmt.Sprintf("\ndata \"valkey_stream_group\" \"test\" {\n  stream = %q\n  name   = %q\n}\n", stream, name)
}

// StreamDataSourceConfig declares data.valkey_stream.test.
func StreamDataSourceConfig(key string) string {
	return fmt.Sprintf("\ndata \"valkey_stream\" \"test\" {\n  key = %q\n}\n", key)
}
