package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

func TestAccProvider_MinimalACL(t *testing.T) {
	t.Parallel()
	stream := acctest.StreamKey(t)
	user, pw := acctest.Server(t).ACLUser(t, valkeytest.TagPattern(stream), valkeytest.MinimalACL)
	config := acctest.ProviderUserConfig(acctest.Server(t), user, pw) + acctest.StreamGroupConfig(stream, "billing", "new")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					acctest.CheckServer(func() error { return valkeytest.CheckGroup(acctest.Admin(t, acctest.Server(t)), stream, "billing") }),
				},
			},
			{Config: config, ResourceName: "valkey_stream_group.test", ImportState: true, ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"group_start", "adopted"}},
			{Config: config, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
		},
	})
	// Every command the provider sent was allowed: the server logs each denial.
	for _, e := range acctest.Server(t).ACLDenials(t, user) {
		t.Errorf("ACL LOG records a denial for %s: %+v", user, *e)
	}
}

func TestAccProvider_ACLWithoutXgroupNamesPermission(t *testing.T) {
	t.Parallel()
	stream := acctest.StreamKey(t)
	user, pw := acctest.Server(t).ACLUser(t, valkeytest.TagPattern(stream), "+xinfo|groups +type")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      acctest.ProviderUserConfig(acctest.Server(t), user, pw) + acctest.StreamGroupConfig(stream, "billing", "new"),
			ExpectError: regexp.MustCompile(`(?s)NOPERM.*'xgroup\|create'.*minimal\s+ACL`),
		}},
	})
	if keyExists(t, acctest.Admin(t, acctest.Server(t)), stream) {
		t.Errorf("stream %s exists after a refused create", stream)
	}
}

func TestAccProvider_MutualTLS(t *testing.T) {
	t.Parallel()
	pki := valkeytest.NewPKIT(t)
	wrong := valkeytest.NewPKIT(t)
	srv := valkeytest.StartT(t, valkeytest.WithTLS(pki, true))
	stream := acctest.StreamKey(t)
	tlsConfig := func(caFile string) string {
		return fmt.Sprintf(`provider "valkey" {
  url         = %q
  max_retries = 0
  tls = {
    ca_cert_file = %q
    cert_file    = %q
    key          = %q
  }
}
`, srv.TLSURL(), caFile, pki.ClientCertFile, string(pki.ClientKey)) + acctest.StreamGroupConfig(stream, "billing", "new")
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      tlsConfig(wrong.CACertFile),
				ExpectError: regexp.MustCompile(`(?s)` + regexp.QuoteMeta(srv.TLSAddr()) + `.*TLS\s+verification\s+of\s+the\s+server's\s+certificate\s+failed`),
			},
			{
				Config: tlsConfig(pki.CACertFile),
				ConfigStateChecks: []statecheck.StateCheck{
					acctest.CheckServer(func() error { return valkeytest.CheckGroup(acctest.Admin(t, srv), stream, "billing") }),
				},
			},
		},
	})
}

func TestAccProvider_ConnectionRefusedIsClear(t *testing.T) {
	t.Parallel()
	port, err := valkeytest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf("provider \"valkey\" {\n  url = \"valkey://u:hunter2@%s/0\"\n  max_retries = 0\n}\n", addr) +
				acctest.StreamGroupConfig(acctest.StreamKey(t), "g", "new"),
			ExpectError: regexp.MustCompile(`(?s)Consumer Group Not Created.*` + regexp.QuoteMeta(addr) + `.*Nothing\s+is\s+listening`),
		}},
	})
}

// testAccLazyConfig takes the provider's url from a resource that does not exist before apply.
func testAccLazyConfig(url, stream string) string {
	return fmt.Sprintf(`resource "terraform_data" "server" {
  input = %q
}

provider "valkey" {
  url = terraform_data.server.output
}
`, url) + acctest.StreamGroupConfig(stream, "billing", "new")
}

func TestAccProvider_UnknownURLPlansAndAppliesLazily(t *testing.T) {
	t.Parallel()
	srv := valkeytest.StartT(t)
	admin := acctest.Admin(t, srv)
	connections := func() string { return connectionsReceived(t, admin) }
	before := connections()
	stream := acctest.StreamKey(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				// The url is unknown at plan: planning the create needs no server, and nothing dials.
				Config:             testAccLazyConfig(srv.URL(), stream),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("valkey_stream_group.test", plancheck.ResourceActionCreate),
				}},
			},
			{
				PreConfig: func() {
					if after := connections(); after != before {
						t.Errorf("planning with an unknown url dialled the server: %s, then %s", before, after)
					}
				},
				// At apply the url is known: the group is created.
				Config: testAccLazyConfig(srv.URL(), stream),
				ConfigStateChecks: []statecheck.StateCheck{
					acctest.CheckServer(func() error { return valkeytest.CheckGroup(admin, stream, "billing") }),
				},
			},
			{
				// A new url value is unknown again; refreshing the existing group needs the
				// server, so that is where the clear error appears.
				Config:      testAccLazyConfig(strings.TrimSuffix(srv.URL(), "/0"), stream),
				ExpectError: regexp.MustCompile(`(?s)provider\s+configuration\s+was\s+unknown.*Apply\s+the\s+resources\s+it\s+depends\s+on\s+first`),
			},
		},
	})
}
