package systemtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/diagtest"
)

// The CLI harness drives the real Terraform CLI (or OpenTofu) against the built provider through
// a dev override, with hashicorp/terraform-exec, and reads what it prints with
// hashicorp/terraform-json. It is for what terraform-plugin-testing does not expose: warning
// diagnostics (what reviewers read in a plan), the terminal output, the TRACE log, saved plans,
// import, and concurrent runs.

var (
	cliBuild     sync.Once
	cliPluginDir string
	cliBuildErr  error
)

// cliCleanup removes the built provider; TestMain calls it.
func cliCleanup() {
	if cliPluginDir != "" {
		_ = os.RemoveAll(cliPluginDir)
	}
}

// changeSummary is the change_summary message of a -json plan or apply (terraform-json v0.27
// has no type for it).
type changeSummary struct{ Add, Change, Import, Remove int }

// cliRun is a working directory and the CLI that runs in it, one command at a time (concurrent
// runs use a cliRun each). Every run writes a TF_LOG=TRACE log to tracePath and sees
// VALKEY_PASSWORD empty unless withPassword says otherwise.
type cliRun struct {
	t     *testing.T
	tf    *tfexec.Terraform
	dir   string
	env   map[string]string // the environment of every run
	ctx   context.Context   // stops the runs when it ends: the test's own unless a test sets one
	human bool              // plan and apply print what people read instead of -json, and have no diags
}

// newCLIRun prepares a working directory with config as main.tf, and the CLI with a
// configuration that overrides the provider with the one built from this module. It skips
// unless TF_ACC and TF_ACC_TERRAFORM_PATH are set, like the acceptance tests.
func newCLIRun(t *testing.T, config string) *cliRun {
	t.Helper()
	needCLI(t)
	cliBuild.Do(func() {
		// Shared by every test in the package and removed by TestMain, so not t.TempDir.
		cliPluginDir, cliBuildErr = os.MkdirTemp("", "valkey-provider-") //nolint:usetesting // shared by every test, removed by TestMain
		if cliBuildErr == nil {
			cliBuildErr = buildProvider(cliPluginDir)
		}
	})
	if cliBuildErr != nil {
		t.Fatal(cliBuildErr)
	}
	return newCLIRunWith(t, config, cliPluginDir)
}

// buildProvider builds the provider from this module into dir, with extra `go build` flags
// (the campaign's planted bugs build with -overlay).
func buildProvider(dir string, flags ...string) error {
	args := append(append([]string{"build"}, flags...), "-o", filepath.Join(dir, "terraform-provider-valkey"), "../..")
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// newCLIRunWith is newCLIRun with the provider built into pluginDir.
func newCLIRunWith(t *testing.T, config, pluginDir string) *cliRun {
	t.Helper()
	dir := t.TempDir()
	rc := filepath.Join(dir, "cli.tfrc")
	// Both registries: OpenTofu resolves "echomq/valkey" at registry.opentofu.org.
	writeFile(t, rc, fmt.Sprintf("provider_installation {\n  dev_overrides {\n    %q = %q\n    %q = %q\n  }\n  direct {}\n}\n",
		"registry.terraform.io/echomq/valkey", pluginDir, "registry.opentofu.org/echomq/valkey", pluginDir))
	r := startCLI(t, filepath.Join(dir, "work"), rc)
	r.write(config)
	return r
}

// startCLI makes dir and sets up the CLI to run there with the CLI configuration file rc.
// terraform-exec sets TF_IN_AUTOMATION, passes -input=false, and keeps TF_LOG and TF_LOG_PATH
// to itself: the trace log is asked of it.
func startCLI(t *testing.T, dir, rc string) *cliRun {
	t.Helper()
	acctest.MustDo(t, os.MkdirAll(dir, 0o755))
	tf, err := tfexec.NewTerraform(dir, os.Getenv("TF_ACC_TERRAFORM_PATH"))
	acctest.MustDo(t, err)
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	env = tfexec.CleanEnv(env) // the variables terraform-exec refuses to take from SetEnv
	env["TF_CLI_CONFIG_FILE"], env["CHECKPOINT_DISABLE"], env["VALKEY_PASSWORD"] = rc, "1", ""
	r := &cliRun{t: t, tf: tf, dir: dir, env: env, ctx: t.Context()}
	acctest.MustDo(t, errors.Join(tf.SetEnv(env), tf.SetLog("TRACE"), tf.SetLogPath(r.tracePath())))
	return r
}

// needCLI skips the test unless TF_ACC and TF_ACC_TERRAFORM_PATH are set.
func needCLI(t *testing.T) {
	t.Helper()
	if os.Getenv("TF_ACC") == "" || os.Getenv("TF_ACC_TERRAFORM_PATH") == "" {
		t.Skip("set TF_ACC=1 and TF_ACC_TERRAFORM_PATH to drive the Terraform CLI")
	}
}

// cliVersion is the version the CLI under test reports.
func cliVersion(t *testing.T) *version.Version {
	t.Helper()
	tf, err := tfexec.NewTerraform(t.TempDir(), os.Getenv("TF_ACC_TERRAFORM_PATH"))
	acctest.MustDo(t, err)
	v, _, err := tf.Version(t.Context(), false)
	acctest.MustDo(t, err)
	return v
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	acctest.MustDo(t, os.MkdirAll(filepath.Dir(path), 0o755))
	acctest.MustDo(t, os.WriteFile(path, []byte(content), 0o600))
}

// write replaces main.tf.
func (r *cliRun) write(config string) {
	writeFile(r.t, filepath.Join(r.dir, "main.tf"), "terraform {\n  required_providers {\n    valkey = { source = \"echomq/valkey\" }\n  }\n}\n"+config)
}

// put writes another file beside main.tf, such as a query file (name.tfquery.hcl).
func (r *cliRun) put(name, content string) {
	writeFile(r.t, filepath.Join(r.dir, name), content)
}

// withPassword gives the next runs password in VALKEY_PASSWORD, the one way that keeps it out
// of every artefact.
func (r *cliRun) withPassword(password string) *cliRun {
	r.env["VALKEY_PASSWORD"] = password
	return r
}

// cliResult is one command run by a cliRun, which never stops the test itself, so that
// concurrent runs can report from their own goroutines.
type cliResult struct {
	command        string
	diags          []diagtest.Diagnostic // of a -json run
	summary        *changeSummary        // of a -json plan or apply
	changes        bool                  // of a plan: it plans changes (-detailed-exitcode)
	found          []tfjson.ListResourceFoundData
	stdout, stderr []byte
	err            error
}

// run runs one command with r's environment, capturing what it prints.
func (r *cliRun) run(command string, run func(ctx context.Context, stdout io.Writer) error) cliResult {
	var stdout, stderr bytes.Buffer
	r.tf.SetStdout(&stdout)
	r.tf.SetStderr(&stderr)
	err := r.tf.SetEnv(r.env)
	if err == nil {
		err = run(r.ctx, &stdout)
	}
	return cliResult{command: command, stdout: stdout.Bytes(), stderr: stderr.Bytes(), err: err}
}

// ui runs a command that streams -json UI messages (or prints for people, when r.human) and
// reads its diagnostics and change summary.
func (r *cliRun) ui(command string, human, json func(ctx context.Context, w io.Writer) error) cliResult {
	if r.human {
		return r.run(command, human)
	}
	res := r.run(command, json)
	res.readMessages()
	return res
}

// readMessages reads the diagnostics and the change summary of a -json stream.
func (res *cliResult) readMessages() {
	for line := range bytes.Lines(res.stdout) {
		var msg struct {
			Type       tfjson.LogMessageType `json:"type"`
			Diagnostic diagtest.Diagnostic   `json:"diagnostic"`
			Changes    changeSummary         `json:"changes"`
		}
		if json.Unmarshal(line, &msg) != nil {
			continue
		}
		switch msg.Type {
		case tfjson.MessageTypeDiagnostic:
			res.diags = append(res.diags, msg.Diagnostic)
		case "change_summary":
			res.summary = &msg.Changes
		}
	}
}

func (r *cliRun) plan(opts ...tfexec.PlanOption) cliResult {
	var changes bool
	res := r.ui("plan", func(ctx context.Context, _ io.Writer) (err error) {
		changes, err = r.tf.Plan(ctx, opts...)
		return err
	}, func(ctx context.Context, w io.Writer) (err error) {
		changes, err = r.tf.PlanJSON(ctx, w, opts...)
		return err
	})
	res.changes = changes
	return res
}

func (r *cliRun) apply(opts ...tfexec.ApplyOption) cliResult {
	return r.ui("apply", func(ctx context.Context, _ io.Writer) error { return r.tf.Apply(ctx, opts...) },
		func(ctx context.Context, w io.Writer) error { return r.tf.ApplyJSON(ctx, w, opts...) })
}

func (r *cliRun) destroy(opts ...tfexec.DestroyOption) cliResult {
	return r.ui("destroy", func(ctx context.Context, _ io.Writer) error { return r.tf.Destroy(ctx, opts...) },
		func(ctx context.Context, w io.Writer) error { return r.tf.DestroyJSON(ctx, w, opts...) })
}

func (r *cliRun) refresh(opts ...tfexec.RefreshCmdOption) cliResult {
	return r.ui("refresh", func(ctx context.Context, _ io.Writer) error { return r.tf.Refresh(ctx, opts...) },
		func(ctx context.Context, w io.Writer) error { return r.tf.RefreshJSON(ctx, w, opts...) })
}

// importID runs `terraform import address id`, which prints only for people.
func (r *cliRun) importID(address, id string) cliResult {
	return r.run("import", func(ctx context.Context, _ io.Writer) error { return r.tf.Import(ctx, address, id) })
}

// initialize runs `terraform init`; dev overrides need none.
func (r *cliRun) initialize() cliResult {
	return r.run("init", func(ctx context.Context, _ io.Writer) error { return r.tf.Init(ctx) })
}

// query runs `terraform query -json` (Terraform 1.14 and later; terraform-exec refuses older
// versions, and so OpenTofu 1.12) and keeps what it found and its diagnostics. The messages
// reach the harness decoded, so its stdout is them encoded again.
func (r *cliRun) query(opts ...tfexec.QueryOption) cliResult {
	var (
		found []tfjson.ListResourceFoundData
		diags []diagtest.Diagnostic
	)
	res := r.run("query", func(ctx context.Context, w io.Writer) error {
		messages, err := r.tf.QueryJSON(ctx, opts...)
		if err != nil {
			return err
		}
		for next := range messages {
			if next.Msg == nil {
				return next.Err
			}
			switch m := next.Msg.(type) {
			case tfjson.ListResourceFoundMessage:
				found = append(found, m.ListResourceFound)
			case tfjson.DiagnosticLogMessage:
				diags = append(diags, diagtest.Diagnostic{Diagnostic: m.Diagnostic})
			}
			line, err := json.Marshal(next.Msg)
			if err != nil {
				return err
			}
			if _, err := fmt.Fprintf(w, "%s\n", line); err != nil {
				return err
			}
		}
		return nil
	})
	res.found, res.diags = found, diags
	return res
}

// must fails the test unless the run's exit status is what wantOK says: a failure is the CLI's
// own exit status, not terraform-exec refusing to run it. Call it from the test's goroutine.
func (res cliResult) must(t *testing.T, wantOK bool) cliResult {
	t.Helper()
	var exit *exec.ExitError
	if failed := errors.As(res.err, &exit); (res.err == nil) != wantOK || (!wantOK && !failed) {
		t.Fatalf("terraform %s: err=%v, want ok=%v\n%s", res.command, res.err, wantOK, res.output())
	}
	return res
}

// output is what the run printed, stdout then stderr.
func (res cliResult) output() []byte { return append(append([]byte{}, res.stdout...), res.stderr...) }

// read runs a command that reads (show, validate, output, providers schema), returning what
// terraform-exec made of its output; it fails the test if the command fails.
func read[T any](r *cliRun, command string, f func(ctx context.Context) (T, error)) T {
	r.t.Helper()
	var v T
	r.run(command, func(ctx context.Context, _ io.Writer) (err error) {
		v, err = f(ctx)
		return err
	}).must(r.t, true)
	return v
}

// asCLIDiagnostics are terraform-json's diagnostics (of `terraform validate`) as the harness
// reads them.
func asCLIDiagnostics(diags []tfjson.Diagnostic) []diagtest.Diagnostic {
	out := make([]diagtest.Diagnostic, len(diags))
	for i, d := range diags {
		out[i] = diagtest.Diagnostic{Diagnostic: d}
	}
	return out
}

// stateRm removes each address from state, one `terraform state rm` each.
func (r *cliRun) stateRm(addresses ...string) {
	r.t.Helper()
	for _, a := range addresses {
		r.run("state rm "+a, func(ctx context.Context, _ io.Writer) error { return r.tf.StateRm(ctx, a) }).must(r.t, true)
	}
}

// planFile is where tests save a plan (tfexec.Out(planFile)) and read it back.
const planFile = "tfplan"

// showPlan reads the saved plan with `terraform show -json`; the result holds the JSON as the
// CLI printed it.
func (r *cliRun) showPlan() (*tfjson.Plan, cliResult) {
	r.t.Helper()
	var plan *tfjson.Plan
	res := r.run("show -json "+planFile, func(ctx context.Context, _ io.Writer) (err error) {
		plan, err = r.tf.ShowPlanFile(ctx, planFile)
		return err
	}).must(r.t, true)
	return plan, res
}

// expectEmptyPlan fails unless a plan (with -detailed-exitcode) succeeds and plans nothing.
func (r *cliRun) expectEmptyPlan() cliResult {
	r.t.Helper()
	res := r.plan()
	if res.err != nil || res.changes {
		r.t.Errorf("plan is not empty (err %v):\n%s", res.err, res.output())
	}
	return res
}

// tracePath is where the runs write their TF_LOG=TRACE log.
func (r *cliRun) tracePath() string { return filepath.Join(filepath.Dir(r.dir), "trace.log") }

// stateGroup is one valkey_stream_group instance in state.
type stateGroup struct {
	Address          string // resource name, as in valkey_stream_group.<Address>
	ID, Stream, Name string
	GroupStart       *string
	Adopted          bool
	Identity         map[string]any // nil where the CLI stores none (before 1.12)
}

// stateGroups reads the groups recorded in r's state with `terraform show -json` (none when
// there is no state).
func (r *cliRun) stateGroups() []stateGroup {
	r.t.Helper()
	state := read(r, "show", func(ctx context.Context) (*tfjson.State, error) { return r.tf.Show(ctx) })
	if state.Values == nil {
		return nil
	}
	var groups []stateGroup
	for _, res := range state.Values.RootModule.Resources {
		if res.Type != "valkey_stream_group" || res.Mode != tfjson.ManagedResourceMode {
			continue
		}
		a := res.AttributeValues
		g := stateGroup{Address: res.Name, Identity: res.IdentityValues}
		g.ID, _ = a["id"].(string)
		g.Stream, _ = a["stream"].(string)
		g.Name, _ = a["name"].(string)
		g.Adopted, _ = a["adopted"].(bool)
		if start, ok := a["group_start"].(string); ok {
			g.GroupStart = &start
		}
		groups = append(groups, g)
	}
	return groups
}

// stateGroup is the group recorded as valkey_stream_group.<address>; it fails the test when
// there is none.
func (r *cliRun) stateGroup(address string) stateGroup {
	r.t.Helper()
	groups := r.stateGroups()
	for _, g := range groups {
		if g.Address == address {
			return g
		}
	}
	r.t.Fatalf("valkey_stream_group.%s is not in state: %+v", address, groups)
	return stateGroup{}
}

// readState is the state file as the CLI wrote it, for tests that compare it byte for byte or
// edit it.
func (r *cliRun) readState() []byte {
	r.t.Helper()
	b, err := os.ReadFile(filepath.Join(r.dir, "terraform.tfstate"))
	acctest.MustDo(r.t, err)
	return b
}

// expectNoSecret fails if secret appears in r's TRACE log, its state files, or the output of
// the given runs (-json or human-readable, and plan JSON from `show -json tfplan`). The TRACE
// log must hold the provider's own RPC lines (tf_rpc=), or the grep would prove nothing.
func (r *cliRun) expectNoSecret(secret string, runs ...cliResult) {
	r.t.Helper()
	trace, err := os.ReadFile(r.tracePath())
	if err != nil || !bytes.Contains(trace, []byte("[TRACE]")) || !bytes.Contains(trace, []byte("tf_rpc=")) {
		r.t.Fatalf("no TRACE log of the provider at %s (err %v)", r.tracePath(), err)
	}
	places := map[string][]byte{"TF_LOG=TRACE log": trace}
	for _, name := range []string{"terraform.tfstate", "terraform.tfstate.backup"} {
		if b, err := os.ReadFile(filepath.Join(r.dir, name)); err == nil {
			places[name] = b
		}
	}
	for i, res := range runs {
		places[fmt.Sprintf("output of run %d, terraform %s", i+1, res.command)] = res.output()
	}
	for what, data := range places {
		if i := bytes.Index(data, []byte(secret)); i >= 0 {
			r.t.Errorf("%s holds the password: ...%s...", what, data[max(0, i-200):min(len(data), i+len(secret)+50)])
		}
	}
}
