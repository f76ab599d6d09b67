package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// TestAccProvider_CertificateLoginWithoutPassword: on a server that logs TLS clients in as the
// user their certificate names (`tls-auth-clients-user CN`, Valkey 9; 8.1.1 refuses it), a provider
// with a client certificate and no username or password plans, applies, refreshes and imports,
// and the server saw the certificate's user (the default user is off, so nothing else gets in).
func TestAccProvider_CertificateLoginWithoutPassword(t *testing.T) {
	t.Parallel()
	// Valkey 8.1.1 refuses the directive ("Bad directive"); 9.1.2 is the version tested here.
	valkeytest.NeedVersion(t, 9, 0, "certificate login: tls-auth-clients-user")
	pki := valkeytest.NewPKIT(t)
	srv := valkeytest.StartT(t, valkeytest.WithTLS(pki, true), valkeytest.WithArgs("--tls-auth-clients-user", "CN"))
	ctx := context.Background()
	boot := srv.Client()
	for _, args := range [][]any{
		{"ACL", "SETUSER", "admin", "on", ">admin-pw", "~*", "+@all"},
		{"ACL", "SETUSER", valkeytest.ClientCertUser, "on", "resetpass", "~*", "+@all"},
		{"ACL", "SETUSER", "default", "off"},
	} {
		if err := boot.Do(ctx, args...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	_ = boot.Close()
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr(), Username: "admin", Password: "admin-pw", Protocol: 2})
	t.Cleanup(func() { _ = admin.Close() })

	stream := acctest.StreamKey(t)
	config := fmt.Sprintf(`provider "valkey" {
  url         = %q
  max_retries = 0
  tls = {
    ca_cert_file = %q
    cert_file    = %q
    key_file     = %q
  }
}
`, "valkey://"+srv.TLSAddr(), pki.CACertFile, pki.ClientCertFile, pki.ClientKeyFile) + acctest.StreamGroupConfig(stream, "billing", "new")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("valkey_stream_group.test", plancheck.ResourceActionCreate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					acctest.CheckServer(func() error { return valkeytest.CheckGroup(admin, stream, "billing") }),
					acctest.CheckServer(func() error { return loggedInAs(admin, valkeytest.ClientCertUser) }),
				},
			},
			{RefreshState: true},
			{Config: config, PlanOnly: true},
			{
				Config:                  config,
				ResourceName:            "valkey_stream_group.test",
				ImportState:             true,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"group_start", "adopted"},
			},
		},
	})
}

// loggedInAs checks that the server's log of authentications names user, and no failure.
func loggedInAs(admin *redis.Client, user string) error {
	list, err := admin.ClientList(context.Background()).Result()
	if err != nil {
		return err
	}
	if strings.Contains(list, "user="+user) {
		return nil
	}
	return fmt.Errorf("no connection of user %s on the server:\n%s", user, list)
}
