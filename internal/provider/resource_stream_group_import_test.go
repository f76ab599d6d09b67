package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
)

// Import, IDs and identity: every ID the resource writes imports back to the group that wrote
// it, an import block can name a group by identity, and the plan shows the ID it will write.

// testAccTwoGroupsConfig declares the colliding pair: group "team/a" on stream, and group "a" on
// stream+"/team". Before names were escaped, both had the ID stream+"/team/a".
func testAccTwoGroupsConfig(stream string) string {
	return testAccNamedGroupConfig("team", stream, "team/a", "new") +
		testAccNamedGroupConfig("other", stream+"/team", "a", "new")
}

// testAccGroupWithoutStartConfig declares valkey_stream_group.test with no group_start, as
// configuration generated for an import has it.
func testAccGroupWithoutStartConfig(stream, name string) string {
	return fmt.Sprintf("resource \"valkey_stream_group\" \"test\" {\n  stream = %q\n  name   = %q\n}\n", stream, name)
}

func TestAccStreamGroup_slashInNameImportsTheSameGroup(t *testing.T) {
	t.Parallel()
	rdb, stream := testAdmin(t, testServer(t)), testKey(t)
	config := testAccProviderConfig(testServer(t)) + testAccTwoGroupsConfig(stream)
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
	stream := testKey(t)
	id := knownvalue.StringExact(stream + "/team%2Fbilling")
	config := func(start string) string {
		return testAccProviderConfig(testServer(t)) + testAccStreamGroupConfig(stream, "team/billing", start)
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

func TestAccStreamGroup_creatingWithoutGroupStartFailsAtPlan(t *testing.T) {
	t.Parallel()
	rdb, stream := testAdmin(t, testServer(t)), testKey(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      testAccProviderConfig(testServer(t)) + testAccGroupWithoutStartConfig(stream, "billing"),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)Group Start Not Declared.*group_start.*"new".*"head"`),
		}},
	})
	if n := rdb.Exists(context.Background(), stream).Val(); n != 0 {
		t.Errorf("the plan wrote %s", stream)
	}
}

func TestAccStreamGroup_importByIdentity(t *testing.T) {
	t.Parallel()
	stream := testKey(t)
	config := testAccProviderConfig(testServer(t)) + testAccStreamGroupConfig(stream, "team/billing", "new")
	// The configuration an import by identity generates: no group_start, which the server does
	// not know, so the import is a no-op.
	imported := testAccProviderConfig(testServer(t)) + testAccGroupWithoutStartConfig(stream, "team/billing")
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
		}},
	})
}

// cliVersion is the version the CLI under test reports.
func cliVersion(t *testing.T) *version.Version {
	t.Helper()
	out, err := exec.Command(os.Getenv("TF_ACC_TERRAFORM_PATH"), "version", "-json").Output()
	if err != nil {
		t.Fatalf("terraform version: %v", err)
	}
	var v struct {
		Version string `json:"terraform_version"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	return version.Must(version.NewVersion(v.Version))
}

// TestCLIStreamGroup_slashInNameStateRmImportAndGenerate drives the real CLI through what a
// user does: create, `state rm`, import by the ID from state, and an import block with
// -generate-config-out, with the colliding group "a" of stream+"/team" on the server too.
func TestCLIStreamGroup_slashInNameStateRmImportAndGenerate(t *testing.T) {
	t.Parallel()
	stream := testKey(t)
	provider := testAccProviderConfig(testServer(t))
	r := newCLIRun(t, provider+testAccTwoGroupsConfig(stream))
	r.run(true, "apply", "-auto-approve")
	id := r.stateGroup("team").ID
	if id != stream+"/team%2Fa" {
		t.Fatalf("id in state = %q, want %q", id, stream+"/team%2Fa")
	}

	r.run(true, "state", "rm", "valkey_stream_group.team")
	r.run(true, "import", "valkey_stream_group.team", id)
	if got := r.stateGroup("team"); got.Stream != stream || got.Name != "team/a" {
		t.Errorf("import of %q took group %q of stream %q; want group team/a of stream %s", id, got.Name, got.Stream, stream)
	}

	// An import block for each group, with configuration generated from what was imported.
	r.run(true, "state", "rm", "valkey_stream_group.team", "valkey_stream_group.other")
	r.write(provider + fmt.Sprintf(`
import {
  to = valkey_stream_group.team
  id = %q
}

import {
  to = valkey_stream_group.other
  id = %q
}
`, id, stream+"/team/a"))
	r.run(true, "plan", "-generate-config-out=generated.tf")
	generated, err := os.ReadFile(filepath.Join(r.dir, "generated.tf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		fmt.Sprintf("resource \"valkey_stream_group\" \"team\" {\n  group_start = null\n  name        = \"team/a\"\n  stream      = %q", stream),
		fmt.Sprintf("resource \"valkey_stream_group\" \"other\" {\n  group_start = null\n  name        = \"a\"\n  stream      = %q", stream+"/team"),
	} {
		if !strings.Contains(string(generated), want) {
			t.Errorf("generated.tf does not hold\n%s\n---\n%s", want, generated)
		}
	}
	r.run(true, "apply", "-auto-approve")
	// The generated configuration is the state: a second plan has nothing to do.
	r.run(true, "plan", "-detailed-exitcode")
}

// TestCLIStreamGroup_importByIdentityGeneratesConfig: an import block with an identity (no ID
// to parse), -generate-config-out, apply, and a clean re-plan. Terraform 1.12+ and OpenTofu
// 1.12+ know identities; older CLIs skip.
func TestCLIStreamGroup_importByIdentityGeneratesConfig(t *testing.T) {
	t.Parallel()
	rdb, stream := testAdmin(t, testServer(t)), testKey(t)
	r := newCLIRun(t, "")
	if v := cliVersion(t); v.LessThan(tfversion.Version1_12_0) {
		t.Skipf("CLI version %s does not import by resource identity (1.12 and later do)", v)
	}
	if err := rdb.XGroupCreateMkStream(context.Background(), stream, "team/billing", "$").Err(); err != nil {
		t.Fatal(err)
	}
	r.write(testAccProviderConfig(testServer(t)) + fmt.Sprintf(`
import {
  to       = valkey_stream_group.billing
  identity = { stream = %q, name = "team/billing" }
}
`, stream))
	r.run(true, "plan", "-generate-config-out=generated.tf")
	generated, err := os.ReadFile(filepath.Join(r.dir, "generated.tf"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(generated), `name        = "team/billing"`) || !strings.Contains(string(generated), fmt.Sprintf("stream      = %q", stream)) {
		t.Fatalf("generated.tf does not name the group:\n%s", generated)
	}
	r.run(true, "apply", "-auto-approve")
	got := r.stateGroup("billing")
	if got.ID != stream+"/team%2Fbilling" || !got.Adopted {
		t.Errorf("imported state = %+v, want id %s and adopted", got, stream+"/team%2Fbilling")
	}
	if got.Identity["stream"] != stream || got.Identity["name"] != "team/billing" {
		t.Errorf("identity in state = %v", got.Identity)
	}
	r.run(true, "plan", "-detailed-exitcode")
}

// TestCLIStreamGroup_updateWithoutRefreshSetsIdentity: a state written before the resource had
// an identity, updated with -refresh=false (so no Read runs first), must come out of Update
// with an identity and no error, on every CLI: OpenTofu requires one from Update, and Terraform
// 1.5 ignores it.
func TestCLIStreamGroup_updateWithoutRefreshSetsIdentity(t *testing.T) {
	t.Parallel()
	stream := testKey(t)
	provider := testAccProviderConfig(testServer(t))
	r := newCLIRun(t, provider+testAccStreamGroupConfig(stream, "billing", "new"))
	r.run(true, "apply", "-auto-approve")

	// Drop the identity from the state file, as a state from an earlier release has none.
	path := filepath.Join(r.dir, "terraform.tfstate")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var state map[string]any
	if err := json.Unmarshal(raw, &state); err != nil {
		t.Fatal(err)
	}
	resources, _ := state["resources"].([]any)
	for _, res := range resources {
		resource, _ := res.(map[string]any)
		instances, _ := resource["instances"].([]any)
		for _, inst := range instances {
			if instance, ok := inst.(map[string]any); ok {
				delete(instance, "identity")
				delete(instance, "identity_schema_version")
			}
		}
	}
	if raw, err = json.Marshal(state); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(raw))

	// Dropping group_start is an in-place Update that sends nothing to the server.
	r.write(provider + testAccGroupWithoutStartConfig(stream, "billing"))
	r.run(true, "apply", "-auto-approve", "-refresh=false")
	got := r.stateGroup("test")
	if got.GroupStart != nil {
		t.Errorf("group_start = %q after dropping it, want null", *got.GroupStart)
	}
	if v := cliVersion(t); !v.LessThan(tfversion.Version1_12_0) && got.Identity["name"] != "billing" {
		t.Errorf("identity after Update = %v, want stream and name", got.Identity)
	}
	r.run(true, "plan", "-detailed-exitcode")
}

// TestCLIStreamGroup_refreshRewritesOldIDs: a state written before names were escaped holds the
// ID "s/team/a" for group "team/a" (the ID of another group); a refresh writes the right one.
func TestCLIStreamGroup_refreshRewritesOldIDs(t *testing.T) {
	t.Parallel()
	stream := testKey(t)
	r := newCLIRun(t, testAccProviderConfig(testServer(t))+testAccStreamGroupConfig(stream, "team/a", "new"))
	r.run(true, "apply", "-auto-approve")
	path := filepath.Join(r.dir, "terraform.tfstate")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	escaped, old := strconv.Quote(stream+"/team%2Fa"), strconv.Quote(stream+"/team/a")
	if !strings.Contains(string(raw), escaped) {
		t.Fatalf("state does not hold the ID %s", escaped)
	}
	writeFile(t, path, strings.ReplaceAll(string(raw), escaped, old))

	r.run(true, "apply", "-refresh-only", "-auto-approve")
	if got := r.stateGroup("test").ID; got != stream+"/team%2Fa" {
		t.Errorf("id after refresh = %q, want %q", got, stream+"/team%2Fa")
	}
}
