package provider

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
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
					acctest.CheckServer(func() error { return certHolderIs(srv.TLSAddr(), pki, valkeytest.ClientCertUser) }),
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

// certHolderIs checks that the server logs a client presenting pki's client certificate, and
// no password, in as user. The default user is off, so a group the provider created with that
// certificate and no password was created as user. (The provider's own connection cannot be
// looked up afterwards: CLIENT LIST shows live connections only, and the provider instance of a
// finished command is garbage, its connections closed whenever Go collects them.)
func certHolderIs(addr string, pki *valkeytest.PKI, user string) error {
	cert, err := tls.X509KeyPair(pki.ClientCert, pki.ClientKey)
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pki.CACert)
	rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, TLSConfig: &tls.Config{
		Certificates: []tls.Certificate{cert}, RootCAs: roots, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12,
	}})
	defer func() { _ = rdb.Close() }()
	got, err := rdb.Do(context.Background(), "ACL", "WHOAMI").Text()
	if err != nil {
		return fmt.Errorf("ACL WHOAMI with the client certificate: %w", err)
	}
	if got != user {
		return fmt.Errorf("a client with the certificate is logged in as %q, want %q", got, user)
	}
	return nil
}
