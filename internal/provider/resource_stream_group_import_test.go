package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
)

// Import, IDs and identity: every ID the resource writes imports back to the group that wrote
// it, an import block can name a group by identity, and the plan shows the ID it will write.

func TestAccStreamGroup_slashInNameImportsTheSameGroup(t *testing.T) {
	t.Parallel()
	rdb, stream := acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	config := acctest.ProviderConfig(acctest.Server(t)) + acctest.TwoGroupsConfig(stream)
	importStep := func(address string) resource.TestStep {
		return resource.TestStep{
			Config:            config,
			ResourceName:      address,
			ImportState:       true,
			ImportStateVerify: true, // the imported stream and name are the ones in state
			// The server does not know group_start, and an import is an adoption.
			ImportStateVerifyIgnore: []string{"group_start", "adopted"},
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             testAccCheckGroupsStay(rdb, stream, "team/a"),
		Steps: []resource.TestStep{{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("valkey_stream_group.team", tfjsonpath.New("id"), knownvalue.StringExact(stream+"/team%2Fa")),
				statecheck.ExpectKnownValue("valkey_stream_group.other", tfjsonpath.New("id"), knownvalue.StringExact(stream+"/team/a")),
			},
		}, importStep("valkey_stream_group.team"), importStep("valkey_stream_group.other")},
	})
}

func TestAccStreamGroup_idKnownAtPlan(t *testing.T) {
	t.Parallel()
	stream := acctest.StreamKey(t)
	id := knownvalue.StringExact(stream + "/team%2Fbilling")
	config := func(start string) string {
		return acctest.ProviderConfig(acctest.Server(t)) + acctest.StreamGroupConfig(stream, "team/billing", start)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: config("new"),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectKnownValue("valkey_stream_group.test", tfjsonpath.New("id"), id),
			}},
		}, {
			// A replacement: the reviewer sees the ID the new instance will have.
			Config: config("head"),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("valkey_stream_group.test", plancheck.ResourceActionDestroyBeforeCreate),
				plancheck.ExpectKnownValue("valkey_stream_group.test", tfjsonpath.New("id"), id),
			}},
		}},
	})
}

func TestAccStreamGroup_nullGroupStartFailsAtPlan(t *testing.T) {
	t.Parallel()
	rdb, stream := acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      acctest.ProviderConfig(acctest.Server(t)) + acctest.GroupNullStartConfig(stream, "billing"),
			PlanOnly:    true,
			ExpectError: acctest.StartNotDeclared,
		}},
	})
	if keyExists(t, rdb, stream) {
		t.Errorf("the plan wrote %s", stream)
	}
}

func TestAccStreamGroup_importByIdentity(t *testing.T) {
	t.Parallel()
	stream := acctest.StreamKey(t)
	config := acctest.ProviderConfig(acctest.Server(t)) + acctest.StreamGroupConfig(stream, "team/billing", "new")
	// The imported group with its start declared, as the user writes it after generating
	// configuration: the import records it in place.
	imported := acctest.ProviderConfig(acctest.Server(t)) + acctest.StreamGroupConfig(stream, "team/billing", "new")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_12_0)},
		Steps: []resource.TestStep{{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectIdentity("valkey_stream_group.test", map[string]knownvalue.Check{
					"stream": knownvalue.StringExact(stream),
					"name":   knownvalue.StringExact("team/billing"), // as it is: identities need no escaping
				}),
			},
		}, {
			Config:          imported,
			ResourceName:    "valkey_stream_group.test",
			ImportState:     true,
			ImportStateKind: resource.ImportBlockWithResourceIdentity,
			// The import records the declared start in place: an update, never a replacement.
			ExpectNonEmptyPlan: true,
			ImportPlanChecks: resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("valkey_stream_group.test", plancheck.ResourceActionUpdate),
				plancheck.ExpectKnownValue("valkey_stream_group.test", tfjsonpath.New("group_start"), knownvalue.StringExact("new")),
			}},
		}},
	})
}
