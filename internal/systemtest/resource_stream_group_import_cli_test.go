package systemtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/diagtest"
)

// Import, IDs and identity on the real CLI: validate, state rm and import, import blocks with
// generated configuration, and state files written by earlier releases.

// testAccGroupWithoutStartConfig declares valkey_stream_group.test with no group_start at all.
func testAccGroupWithoutStartConfig(stream, name string) string {
	return fmt.Sprintf("resource \"valkey_stream_group\" \"test\" {\n  stream = %q\n  name   = %q\n}\n", stream, name)
}

// TestCLIStreamGroup_groupStartRequiredByValidate: a configuration without group_start fails
// `validate` (so editors and linters see it too), and the schema says it is required.
func TestCLIStreamGroup_groupStartRequiredByValidate(t *testing.T) {
	t.Parallel()
	r := newCLIRun(t, testAccGroupWithoutStartConfig("s", "billing"))
	out := read(r, "validate", r.tf.Validate)
	missing := diagtest.Find(asCLIDiagnostics(out.Diagnostics), tfjson.DiagnosticSeverityError, "Missing required argument")
	if out.Valid || len(missing) != 1 || !strings.Contains(missing[0].Detail, `"group_start" is required`) {
		t.Errorf("validate without group_start: %+v, want the CLI's missing required argument error", out)
	}
	r.write(acctest.GroupNullStartConfig("s", "billing"))
	if out := read(r, "validate", r.tf.Validate); out.Valid || len(diagtest.Find(asCLIDiagnostics(out.Diagnostics), tfjson.DiagnosticSeverityError, "Group Start Not Declared")) != 1 {
		t.Errorf("validate with group_start = null: %+v, want Group Start Not Declared", out)
	}
	for name, p := range read(r, "providers schema", r.tf.ProvidersSchema).Schemas {
		if group := p.ResourceSchemas["valkey_stream_group"]; group == nil || !group.Block.Attributes["group_start"].Required {
			t.Errorf("providers schema -json lists group_start of %s as not required", name)
		}
	}
}

// expectImportOnly fails unless the plan run res imports, and adds and removes nothing:
// declaring the start of an imported group records it in place.
func expectImportOnly(t *testing.T, res cliResult) {
	t.Helper()
	switch c := res.summary; {
	case c == nil:
		t.Errorf("plan printed no change summary:\n%s", res.stdout)
	case c.Add != 0 || c.Remove != 0 || c.Import == 0:
		t.Errorf("plan changes %+v; want imports only, nothing added or removed", *c)
	}
}

// declareGeneratedStart checks that generated.tf left group_start null for every imported
// group, as the CLI writes a required attribute it cannot read back, that the plan then fails
// on it with the choices, and declares start in its place.
func declareGeneratedStart(t *testing.T, r *cliRun, groups int, start string) {
	t.Helper()
	path := filepath.Join(r.dir, "generated.tf")
	generated, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	nulls := regexp.MustCompile(`(?m)^(\s*group_start\s*=\s*)null\b.*$`)
	if n := len(nulls.FindAll(generated, -1)); n != groups {
		t.Fatalf("generated.tf has %d null group_start lines, want %d:\n%s", n, groups, generated)
	}
	res := r.plan().must(t, false)
	if got := diagtest.Find(res.diags, tfjson.DiagnosticSeverityError, "Group Start Not Declared"); len(got) != groups || !acctest.StartNotDeclared.MatchString(got[0].Summary+diagtest.Unwrap(got[0].Detail)) {
		t.Fatalf("plan of the generated configuration: %+v, want %d Group Start Not Declared errors naming new and head", res.diags, groups)
	}
	writeFile(t, path, string(nulls.ReplaceAll(generated, []byte(`${1}"`+start+`"`))))
}

// TestCLIStreamGroup_slashInNameStateRmImportAndGenerate drives the real CLI through what a
// user does: create, `state rm`, import by the ID from state, and an import block with
// -generate-config-out, with the colliding group "a" of stream+"/team" on the server too.
func TestCLIStreamGroup_slashInNameStateRmImportAndGenerate(t *testing.T) {
	t.Parallel()
	stream := acctest.StreamKey(t)
	provider := acctest.ProviderConfig(acctest.Server(t))
	r := newCLIRun(t, provider+acctest.TwoGroupsConfig(stream))
	r.apply().must(t, true)
	id := r.stateGroup("team").ID
	if id != stream+"/team%2Fa" {
		t.Fatalf("id in state = %q, want %q", id, stream+"/team%2Fa")
	}

	r.stateRm("valkey_stream_group.team")
	r.importID("valkey_stream_group.team", id).must(t, true)
	if got := r.stateGroup("team"); got.Stream != stream || got.Name != "team/a" {
		t.Errorf("import of %q took group %q of stream %q; want group team/a of stream %s", id, got.Name, got.Stream, stream)
	}

	// An import block for each group, with configuration generated from what was imported.
	r.stateRm("valkey_stream_group.team", "valkey_stream_group.other")
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
	r.plan(tfexec.GenerateConfigOut("generated.tf")).must(t, false)
	generated, err := os.ReadFile(filepath.Join(r.dir, "generated.tf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(fmt.Sprintf(`resource "valkey_stream_group" "team" \{\s+group_start = null.*\n\s+name\s+= "team/a"\n\s+stream\s+= %s`, regexp.QuoteMeta(strconv.Quote(stream)))),
		regexp.MustCompile(fmt.Sprintf(`resource "valkey_stream_group" "other" \{\s+group_start = null.*\n\s+name\s+= "a"\n\s+stream\s+= %s`, regexp.QuoteMeta(strconv.Quote(stream+"/team")))),
	} {
		if !want.Match(generated) {
			t.Errorf("generated.tf does not match\n%s\n---\n%s", want, generated)
		}
	}
	declareGeneratedStart(t, r, 2, "new")
	expectImportOnly(t, r.plan().must(t, true))
	r.apply().must(t, true)
	if g := r.stateGroup("team"); g.GroupStart == nil || *g.GroupStart != "new" || !g.Adopted {
		t.Errorf("after the import and the declared start: %+v, want group_start new and adopted", g)
	}
	// The configuration is the state now: a second plan has nothing to do.
	r.expectEmptyPlan()
}

// TestCLIStreamGroup_importByIdentityGeneratesConfig: an import block with an identity (no ID
// to parse), -generate-config-out, apply, and a clean re-plan. Terraform 1.12+ and OpenTofu
// 1.12+ know identities; older CLIs skip.
func TestCLIStreamGroup_importByIdentityGeneratesConfig(t *testing.T) {
	t.Parallel()
	rdb, stream := acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	r := newCLIRun(t, "")
	if v := cliVersion(t); v.LessThan(tfversion.Version1_12_0) {
		t.Skipf("CLI version %s does not import by resource identity (1.12 and later do)", v)
	}
	if err := rdb.XGroupCreateMkStream(context.Background(), stream, "team/billing", "$").Err(); err != nil {
		t.Fatal(err)
	}
	r.write(acctest.ProviderConfig(acctest.Server(t)) + fmt.Sprintf(`
import {
  to       = valkey_stream_group.billing
  identity = { stream = %q, name = "team/billing" }
}
`, stream))
	r.plan(tfexec.GenerateConfigOut("generated.tf")).must(t, false)
	generated, err := os.ReadFile(filepath.Join(r.dir, "generated.tf"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(generated), `name        = "team/billing"`) || !strings.Contains(string(generated), fmt.Sprintf("stream      = %q", stream)) {
		t.Fatalf("generated.tf does not name the group:\n%s", generated)
	}
	declareGeneratedStart(t, r, 1, "head")
	expectImportOnly(t, r.plan().must(t, true))
	r.apply().must(t, true)

	got := r.stateGroup("billing")
	if got.ID != stream+"/team%2Fbilling" || !got.Adopted || got.GroupStart == nil || *got.GroupStart != "head" {
		t.Errorf("imported state = %+v, want id %s, adopted, and the declared group_start head", got, stream+"/team%2Fbilling")
	}
	if got.Identity["stream"] != stream || got.Identity["name"] != "team/billing" {
		t.Errorf("identity in state = %v", got.Identity)
	}
	r.expectEmptyPlan()
}

// TestCLIStreamGroup_updateWithoutRefreshSetsIdentity: a state written before the resource had
// an identity, updated with -refresh=false (so no Read runs first), must come out of Update
// with an identity and no error, on every CLI: OpenTofu requires one from Update, and Terraform
// 1.5 ignores it.
func TestCLIStreamGroup_updateWithoutRefreshSetsIdentity(t *testing.T) {
	t.Parallel()
	stream := acctest.StreamKey(t)
	provider := acctest.ProviderConfig(acctest.Server(t))
	r := newCLIRun(t, provider+acctest.StreamGroupConfig(stream, "billing", "new"))
	r.apply().must(t, true)

	// Drop the identity from the state file, as a state from an earlier release has none, and
	// the group_start, as an import leaves it.
	var state map[string]any
	if err := json.Unmarshal(r.readState(), &state); err != nil {
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
				if attributes, ok := instance["attributes"].(map[string]any); ok {
					attributes["group_start"] = nil
				}
			}
		}
	}
	raw, err := json.Marshal(state)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(r.dir, "terraform.tfstate"), string(raw))

	// Declaring group_start for a group without one is an in-place Update that sends nothing
	// to the server.
	r.apply(tfexec.Refresh(false)).must(t, true)
	got := r.stateGroup("test")
	if got.GroupStart == nil || *got.GroupStart != "new" {
		t.Errorf("group_start = %v after declaring it, want new", got.GroupStart)
	}
	if v := cliVersion(t); !v.LessThan(tfversion.Version1_12_0) && got.Identity["name"] != "billing" {
		t.Errorf("identity after Update = %v, want stream and name", got.Identity)
	}
	r.expectEmptyPlan()
}

// TestCLIStreamGroup_refreshRewritesOldIDs: a state written before names were escaped holds the
// ID "s/team/a" for group "team/a" (the ID of another group); a refresh writes the right one.
func TestCLIStreamGroup_refreshRewritesOldIDs(t *testing.T) {
	t.Parallel()
	stream := acctest.StreamKey(t)
	r := newCLIRun(t, acctest.ProviderConfig(acctest.Server(t))+acctest.StreamGroupConfig(stream, "team/a", "new"))
	r.apply().must(t, true)
	raw := r.readState()
	escaped, old := strconv.Quote(stream+"/team%2Fa"), strconv.Quote(stream+"/team/a")
	if !strings.Contains(string(raw), escaped) {
		t.Fatalf("state does not hold the ID %s", escaped)
	}
	writeFile(t, filepath.Join(r.dir, "terraform.tfstate"), strings.ReplaceAll(string(raw), escaped, old))

	r.apply(tfexec.RefreshOnly(true)).must(t, true)
	if got := r.stateGroup("test").ID; got != stream+"/team%2Fa" {
		t.Errorf("id after refresh = %q, want %q", got, stream+"/team%2Fa")
	}
}

// TestCLIStreamGroup_importOfAMissingGroupNamesWhatWasLookedUp: an import ID that names no group
// says which stream and group were looked up, and when another reading of the same ID finds a
// group (a "/" of the name left unescaped), names that group and the ID to use.
func TestCLIStreamGroup_importOfAMissingGroupNamesWhatWasLookedUp(t *testing.T) {
	t.Parallel()
	rdb, stream := acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	if err := rdb.XGroupCreateMkStream(context.Background(), stream, "team/b", "$").Err(); err != nil {
		t.Fatal(err)
	}
	r := newCLIRun(t, acctest.ProviderConfig(acctest.Server(t))+acctest.StreamGroupConfig(stream, "b", "new"))
	res := r.importID("valkey_stream_group.test", stream+"/team/b").must(t, false)
	out := diagtest.Unwrap(strings.ReplaceAll(string(res.output()), "│", ""))
	for _, want := range []string{
		"Consumer Group Not Found For Import",
		fmt.Sprintf("has no consumer group %q on stream %q", "b", stream+"/team"),
		fmt.Sprintf("Group %q of stream %q exists", "team/b", stream),
		fmt.Sprintf("use the ID %q", stream+"/team%2Fb"),
	} {
		if !strings.Contains(out, diagtest.Unwrap(want)) {
			t.Errorf("import output does not say %q:\n%s", want, res.output())
		}
	}
	if groups := r.stateGroups(); len(groups) != 0 {
		t.Errorf("a failed import left %+v in state", groups)
	}
}
