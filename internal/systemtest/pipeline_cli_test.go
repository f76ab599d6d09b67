package systemtest

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"
	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/diagtest"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// The CI guide (docs/guides/ci.md) as a pipeline runs it: a plan saved with -out and its
// -json stream kept as the review artifact, tools/planreview on that stream, the policy of
// examples/policy on the saved plan, and the provider installed by `make install` into the
// implied local mirror, with no dev_overrides.

// planReview builds tools/planreview and runs it on a JSON UI stream.
func planReview(t *testing.T, stream []byte) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "planreview")
	if out, err := exec.Command("go", "build", "-o", bin, "../../tools/planreview").CombinedOutput(); err != nil {
		t.Fatalf("go build tools/planreview: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
	cmd.Stdin = strings.NewReader(string(stream))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("planreview: %v\n%s", err, out)
	}
	return string(out)
}

// expectInOrder fails unless each fragment appears in text, each after the one before it.
func expectInOrder(t *testing.T, text string, fragments ...string) {
	t.Helper()
	at := 0
	for _, f := range fragments {
		i := strings.Index(text[at:], f)
		if i < 0 {
			t.Fatalf("%q is missing, or comes before %q, in:\n%s", f, text[:at], text)
		}
		at += i + len(f)
	}
}

// savedPlan is what `show -json tfplan` says of each resource, by address.
type savedPlan map[string]*tfjson.Change

// showSaved reads the saved plan, in JSON and for people, and fails if either holds a word the
// provider said while planning: a saved plan keeps no diagnostics. It returns the plan's
// changes and its JSON as the CLI printed it.
func (r *cliRun) showSaved(plan cliResult) (savedPlan, []byte) {
	r.t.Helper()
	doc, show := r.showPlan()
	human := read(r, "show "+planFile, func(ctx context.Context) (string, error) { return r.tf.ShowPlanFileRaw(ctx, planFile) })
	for _, d := range plan.diags {
		for _, out := range []string{string(show.stdout), human} {
			if strings.Contains(out, d.Summary) || strings.Contains(out, firstLine(d.Detail)) {
				r.t.Errorf("show tfplan holds the plan-time diagnostic %q: the guide says a saved plan keeps none", d.Summary)
			}
		}
	}
	saved := savedPlan{}
	for _, rc := range doc.ResourceChanges {
		saved[rc.Address] = rc.Change
	}
	return saved, show.stdout
}

// plannedStart is the group_start a change plans, or nil.
func plannedStart(c *tfjson.Change) any {
	if after, ok := c.After.(map[string]any); ok {
		return after["group_start"]
	}
	return nil
}

func firstLine(s string) string { return strings.SplitN(s, "\n", 2)[0] }

// TestCLIPipeline_reviewKeepsWhatTheSavedPlanDoesNot: on a module of groups over streams that
// hold entries, the review of the -json stream lists every group by address with its
// figures, replays first and the largest first; `show` of the saved plan holds none of it,
// only the planned group_start.
func TestCLIPipeline_reviewKeepsWhatTheSavedPlanDoesNot(t *testing.T) {
	t.Parallel()
	rdb, small, large, fresh := acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t), acctest.StreamKey(t), acctest.StreamKey(t)
	acctest.SeedEntries(t, small) // 3 entries
	valkeytest.XAdd(t, rdb, large, "1-0", "2-0", "3-0", "4-0", "5-0")
	acctest.MustDo(t, rdb.XGroupCreate(t.Context(), small, "ledger", "$").Err())
	r := newCLIRun(t, acctest.ProviderConfig(acctest.Server(t))+fmt.Sprintf(`
resource "valkey_stream_group" "svc" {
  for_each    = { audit = "head", shipping = "new" }
  stream      = %[2]q
  name        = each.key
  group_start = each.value
}
`, small, large)+
		acctest.NamedGroupConfig("billing", small, "billing", "head")+
		acctest.NamedGroupConfig("ledger", small, "ledger", "head")+
		acctest.NamedGroupConfig("fresh", fresh, "fresh", "head"))

	plan := r.plan(tfexec.Out(planFile)).must(t, true)
	for _, d := range plan.diags { // all but the CLI's own warning about the dev override
		if d.Address == "" && !strings.Contains(d.Summary, "development overrides") {
			t.Errorf("diagnostic %q has no resource address on this CLI", d.Summary)
		}
	}
	review := planReview(t, plan.stdout)
	expectInOrder(t, review,
		"**2 groups will replay 8 entries in all** · **1 group will skip 5 entries in all** · 1 group adopted · 5 planned changes",
		"| **replays** | `valkey_stream_group.svc[\"audit\"]` | create | `audit` | `"+large+"` | 5 |",
		"| **replays** | `valkey_stream_group.billing` | create | `billing` | `"+small+"` | 3 |",
		"| **skips** | `valkey_stream_group.svc[\"shipping\"]` | create | `shipping` | `"+large+"` | 5 |",
		"| adopts | `valkey_stream_group.ledger` | create | `ledger` | `"+small+"` |  |",
		"<details><summary>1 more",
		"`valkey_stream_group.fresh` | create | `fresh` | `"+fresh+"` |",
		"What the provider said",
		"last-delivered-id",
	)

	saved, _ := r.showSaved(plan)
	for _, address := range []string{`valkey_stream_group.svc["audit"]`, "valkey_stream_group.billing", "valkey_stream_group.ledger"} {
		if got := saved[address]; got == nil || !got.Actions.Create() || plannedStart(got) != "head" {
			t.Errorf("saved plan of %s: %+v, want a create with group_start = \"head\" in its planned values", address, got)
		}
	}
}

// TestCLIPipeline_serverDownIsInTheReviewNotInTheSavedPlan: a plan made while the server
// cannot be reached succeeds, and its saved plan looks like a checked one; only the -json
// stream, and so the review, says that nothing was checked, and why.
func TestCLIPipeline_serverDownIsInTheReviewNotInTheSavedPlan(t *testing.T) {
	t.Parallel()
	port, err := valkeytest.FreePort()
	acctest.MustDo(t, err)
	address := fmt.Sprintf("127.0.0.1:%d", port)
	stream := acctest.StreamKey(t)
	r := newCLIRun(t, fmt.Sprintf("provider \"valkey\" {\n  url = %q\n}\n", "valkey://"+address+"/0")+
		acctest.NamedGroupConfig("billing", stream, "billing", "head")+
		acctest.NamedGroupConfig("audit", stream, "audit", "new"))

	plan := r.plan(tfexec.Out(planFile)).must(t, true)
	review := planReview(t, plan.stdout)
	expectInOrder(t, review,
		"**plan-time check skipped** · 2 planned changes",
		address, "connection refused", // the skipped check, quoted before the table
		"were not checked",
		"| not checked | `valkey_stream_group.audit` | create |",
		"| not checked | `valkey_stream_group.billing` | create |",
	)
	saved, _ := r.showSaved(plan)
	if got := saved["valkey_stream_group.billing"]; got == nil || !got.Actions.Create() || plannedStart(got) != "head" {
		t.Errorf("saved plan of the unchecked group: %+v, want the same create a checked plan holds", got)
	}
}

// opaPath is the OPA that scripts/setup.sh builds, else one on PATH.
func opaPath(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("TPV_BIN_DIR")
	if dir == "" {
		cache, err := os.UserCacheDir()
		acctest.MustDo(t, err)
		dir = filepath.Join(cache, "terraform-provider-valkey", "bin")
	}
	if bin := filepath.Join(dir, "opa"); exec.Command(bin, "version").Run() == nil {
		return bin
	}
	return valkeytest.LookPathT(t, "opa", "scripts/setup.sh opa")
}

const policyDir = "../../examples/policy"

// TestCLIPipeline_policyNeedsApprovalForHeadAndLetsStateOnlyDeletesThrough evaluates
// examples/policy with OPA on saved plans of a real configuration: a head group on a
// protected stream is denied until its id is approved; a group_start change (a replacement
// that adopts the same group) and the destroy of groups (state only) go through, while the
// destroy of another resource is held.
func TestCLIPipeline_policyNeedsApprovalForHeadAndLetsStateOnlyDeletesThrough(t *testing.T) {
	t.Parallel()
	needCLI(t)
	opa := opaPath(t)
	for _, args := range [][]string{{"check", "--strict", policyDir}, {"fmt", "--list", "--fail", policyDir}} {
		if out, err := exec.Command(opa, args...).CombinedOutput(); err != nil {
			t.Fatalf("opa %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	protected, other := acctest.StreamKey(t), acctest.StreamKey(t)
	acctest.SeedEntries(t, protected)
	acctest.SeedEntries(t, other)
	provider := acctest.ProviderConfig(acctest.Server(t))
	anchor := "resource \"terraform_data\" \"anchor\" {\n  input = \"kept\"\n}\n"
	r := newCLIRun(t, provider+anchor+
		acctest.NamedGroupConfig("billing", protected, "billing", "head")+
		acctest.NamedGroupConfig("shipping", protected, "shipping", "new")+
		acctest.NamedGroupConfig("elsewhere", other, "elsewhere", "head"))

	// deny saves a plan of the current configuration and returns what the policy denies.
	deny := func(approved ...string) ([]string, savedPlan) {
		t.Helper()
		plan := r.plan(tfexec.Out(planFile)).must(t, true)
		saved, js := r.showSaved(plan)
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "plan.json"), string(js))
		approvals, err := json.Marshal(map[string]any{"valkey": map[string]any{"protected_streams": []string{protected}, "approved_head": approved}})
		acctest.MustDo(t, err)
		writeFile(t, filepath.Join(dir, "approvals.json"), string(approvals))
		out, err := exec.Command(opa, "eval", "--format", "json", "--data", policyDir, "--data", filepath.Join(dir, "approvals.json"),
			"--input", filepath.Join(dir, "plan.json"), "data.terraform.valkey.deny").Output()
		if err != nil {
			t.Fatalf("opa eval: %v\n%s", err, out)
		}
		var result struct {
			Result []struct{ Expressions []struct{ Value []string } }
		}
		acctest.MustDo(t, json.Unmarshal(out, &result))
		if len(result.Result) != 1 || len(result.Result[0].Expressions) != 1 {
			t.Fatalf("opa eval: no result: %s", out)
		}
		return result.Result[0].Expressions[0].Value, saved
	}

	denied, _ := deny()
	if len(denied) != 1 || !strings.HasPrefix(denied[0], "valkey_stream_group.billing: ") || !strings.Contains(denied[0], protected+"/billing") {
		t.Fatalf("denied %q, want billing alone (head on the protected stream; elsewhere's stream is not protected)", denied)
	}
	if denied, _ := deny(protected + "/billing"); len(denied) != 0 {
		t.Fatalf("denied %q with billing approved", denied)
	}
	r.apply().must(t, true)

	// shipping: new -> head replaces the resource, and the new Create adopts the same group.
	r.write(provider + anchor +
		acctest.NamedGroupConfig("billing", protected, "billing", "head") +
		acctest.NamedGroupConfig("shipping", protected, "shipping", "head") +
		acctest.NamedGroupConfig("elsewhere", other, "elsewhere", "head"))
	denied, saved := deny()
	if got := saved["valkey_stream_group.shipping"]; got == nil || !got.Actions.DestroyBeforeCreate() {
		t.Errorf("a group_start change is planned as %+v, want [delete create]", got)
	}
	if len(denied) != 0 {
		t.Errorf("denied %q: a group_start change adopts the group and must go through", denied)
	}

	// Every group and the anchor leave the configuration.
	r.write(provider)
	denied, saved = deny()
	for _, address := range []string{"valkey_stream_group.billing", "valkey_stream_group.shipping", "valkey_stream_group.elsewhere", "terraform_data.anchor"} {
		if got := saved[address]; got == nil || !got.Actions.Delete() {
			t.Errorf("%s is planned as %+v, want [delete]", address, got)
		}
	}
	if len(denied) != 1 || !strings.HasPrefix(denied[0], "terraform_data.anchor: ") {
		t.Errorf("denied %q, want the anchor alone: the deletes of valkey_stream_group are state only", denied)
	}
}

// TestCLIPipeline_installedProviderInitsFromTheImpliedLocalMirror: `make install`'s script
// puts the provider in the plugins directory of a fresh HOME; in a fresh directory holding
// examples/ci/versions.tf, with an empty CLI configuration (no dev_overrides), init finds it
// there and records it in .terraform.lock.hcl, and plan, apply and a clean
// `plan -detailed-exitcode` follow. The filesystem_mirror of examples/ci/cli.tfrc, pointed at
// the same directory, installs it too, with no plugins directory in HOME.
func TestCLIPipeline_installedProviderInitsFromTheImpliedLocalMirror(t *testing.T) {
	t.Parallel()
	needCLI(t)
	home := t.TempDir()
	plugins := filepath.Join(home, ".terraform.d", "plugins")
	version, platform := install(t, plugins)
	versions, err := os.ReadFile("../../examples/ci/versions.tf")
	acctest.MustDo(t, err)
	constraint := regexp.MustCompile(`(?m)^\s+version\s*=\s*"([^"]+)"`).FindSubmatch(versions)
	if constraint == nil {
		t.Fatal("examples/ci/versions.tf declares no version constraint")
	}

	rdb, stream := acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	acctest.SeedEntries(t, stream)
	empty := filepath.Join(home, "empty.tfrc")
	writeFile(t, empty, "")
	r := installedRun(t, home, empty, string(versions), acctest.ProviderConfig(acctest.Server(t))+acctest.StreamGroupConfig(stream, "billing", "head"))
	r.mustInit(version, string(constraint[1]))
	r.expectPlanApplyPlan(rdb, stream)

	// A CI image: the mirror elsewhere, named by the CLI configuration; HOME holds nothing.
	mirror := filepath.Join(t.TempDir(), "mirror")
	acctest.MustDo(t, os.Rename(plugins, mirror))
	ci, err := os.ReadFile("../../examples/ci/cli.tfrc")
	acctest.MustDo(t, err)
	if !strings.Contains(string(ci), `"/opt/terraform/plugins"`) {
		t.Fatal("examples/ci/cli.tfrc no longer names /opt/terraform/plugins")
	}
	config := filepath.Join(home, "ci.tfrc")
	writeFile(t, config, strings.ReplaceAll(string(ci), `"/opt/terraform/plugins"`, fmt.Sprintf("%q", mirror)))
	image := installedRun(t, t.TempDir(), config, string(versions), acctest.ProviderConfig(acctest.Server(t))+acctest.StreamGroupConfig(stream, "billing", "head"))
	image.mustInit(version, string(constraint[1]))
	image.installed(image.plan())
	if _, err := os.Stat(filepath.Join(mirror, cmp.Or(os.Getenv("TF_ACC_PROVIDER_HOST"), "registry.terraform.io"), "echomq", "valkey", version, platform)); err != nil {
		t.Fatal(err)
	}
}

// install runs `make install`'s script into plugins and returns the version and platform it
// installed, checking the layout of the implied local mirror for both registry hosts and the
// version the binary carries.
func install(t *testing.T, plugins string) (version, platform string) {
	t.Helper()
	cmd := exec.Command("../../scripts/install.sh")
	cmd.Env = append(os.Environ(), "PLUGINS_DIR="+plugins, "VERSION=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/install.sh: %v\n%s", err, out)
	}
	installed := strings.Fields(string(out))
	if len(installed) != 2 {
		t.Fatalf("scripts/install.sh printed %q, want the binary's path for each registry host", out)
	}
	version = filepath.Base(filepath.Dir(filepath.Dir(installed[0])))
	if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(version) {
		t.Fatalf("installed version %q (%s) is not a release version", version, installed[0])
	}
	platform = filepath.Base(filepath.Dir(installed[0]))
	for i, host := range []string{"registry.terraform.io", "registry.opentofu.org"} {
		want := filepath.Join(plugins, host, "echomq", "valkey", version, platform, "terraform-provider-valkey_v"+version)
		if installed[i] != want {
			t.Errorf("installed %s, want %s", installed[i], want)
		}
	}
	if info, err := exec.Command("go", "version", "-m", installed[0]).Output(); err != nil || !strings.Contains(string(info), "-X main.version="+version) {
		t.Errorf("the binary does not carry version %s: %v\n%s", version, err, info)
	}
	return version, platform
}

// installedCLIRun runs the CLI with HOME in a directory of its own, as a pipeline's runner.
type installedCLIRun struct {
	*cliRun
	home string
}

// installedRun prepares a working directory under home holding versions.tf and main.tf, run
// with the CLI configuration file config and HOME at home.
func installedRun(t *testing.T, home, config, versions, main string) installedCLIRun {
	t.Helper()
	r := installedCLIRun{startCLI(t, filepath.Join(home, "work"), config), home}
	r.env["HOME"], r.env["TF_PLUGIN_CACHE_DIR"] = home, ""
	writeFile(t, filepath.Join(r.dir, "versions.tf"), versions)
	writeFile(t, filepath.Join(r.dir, "main.tf"), main)
	return r
}

// expectPlanApplyPlan runs plan, apply and plan again with the installed provider, for a
// configuration of valkey_stream_group.test (group billing) on stream, which holds entries: the
// plan warns about the group, the apply creates it on the server, and the next plan is empty.
func (r installedCLIRun) expectPlanApplyPlan(rdb *redis.Client, stream string) {
	r.t.Helper()
	if diags := r.installed(r.plan()).diags; !slices.ContainsFunc(diags, func(d diagtest.Diagnostic) bool { return d.Address == "valkey_stream_group.test" }) {
		r.t.Errorf("the installed provider said nothing about the group it plans to create on a stream with entries: %+v", diags)
	}
	r.installed(r.apply())
	acctest.MustDo(r.t, valkeytest.CheckGroup(rdb, stream, "billing"))
	if r.installed(r.plan()).changes {
		r.t.Error("the plan after the apply has changes")
	}
}

// installed fails the test unless res succeeded without development overrides.
func (r installedCLIRun) installed(res cliResult) cliResult {
	r.t.Helper()
	res.must(r.t, true)
	if strings.Contains(string(res.output()), "development overrides") {
		r.t.Errorf("terraform %s ran with development overrides:\n%s", res.command, res.output())
	}
	return res
}

// mustInit runs init and checks that .terraform.lock.hcl records the installed version under
// the CLI's registry host, with the constraint and a checksum.
func (r installedCLIRun) mustInit(version, constraint string) {
	r.t.Helper()
	r.installed(r.initialize())
	host := cmp.Or(os.Getenv("TF_ACC_PROVIDER_HOST"), "registry.terraform.io")
	lock, err := os.ReadFile(filepath.Join(r.dir, ".terraform.lock.hcl"))
	acctest.MustDo(r.t, err)
	for _, want := range []string{fmt.Sprintf(`provider %q {`, host+"/echomq/valkey"), `version     = "` + version + `"`,
		`constraints = "` + constraint + `"`, `"h1:`} {
		if !strings.Contains(string(lock), want) {
			r.t.Errorf(".terraform.lock.hcl lacks %s:\n%s", want, lock)
		}
	}
}
