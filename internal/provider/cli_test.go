package provider

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The tests in this file drive the real Terraform CLI against the provider binary through a
// dev override, because terraform-plugin-testing does not expose warning diagnostics, and
// warnings are what reviewers read in a plan.

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

// cliDiagnostic is one diagnostic line of `terraform ... -json`.
type cliDiagnostic struct {
	Severity string `json:"severity"`
	Summary  string `json:"summary"`
	Detail   string `json:"detail"`
}

type cliRun struct {
	t      *testing.T
	dir    string
	config string // dev-override CLI configuration file
}

// newCLIRun prepares a working directory with config as main.tf. It skips unless TF_ACC and
// TF_ACC_TERRAFORM_PATH are set, like the acceptance tests.
func newCLIRun(t *testing.T, config string) *cliRun {
	t.Helper()
	if os.Getenv("TF_ACC") == "" || os.Getenv("TF_ACC_TERRAFORM_PATH") == "" {
		t.Skip("set TF_ACC=1 and TF_ACC_TERRAFORM_PATH to drive the Terraform CLI")
	}
	cliBuild.Do(func() {
		// Shared by every test in the package and removed by TestMain, so not t.TempDir.
		cliPluginDir, cliBuildErr = os.MkdirTemp("", "valkey-provider-") //nolint:usetesting // shared by every test, removed by TestMain
		if cliBuildErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", filepath.Join(cliPluginDir, "terraform-provider-valkey"), "../..").CombinedOutput()
		if err != nil {
			cliBuildErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if cliBuildErr != nil {
		t.Fatal(cliBuildErr)
	}
	dir := t.TempDir()
	rc := filepath.Join(dir, "cli.tfrc")
	// Both registries: OpenTofu resolves "echomq/valkey" at registry.opentofu.org.
	writeFile(t, rc, fmt.Sprintf("provider_installation {\n  dev_overrides {\n    %q = %q\n    %q = %q\n  }\n  direct {}\n}\n",
		"registry.terraform.io/echomq/valkey", cliPluginDir, "registry.opentofu.org/echomq/valkey", cliPluginDir))
	r := &cliRun{t: t, dir: filepath.Join(dir, "work"), config: rc}
	r.write(config)
	return r
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// write replaces main.tf.
func (r *cliRun) write(config string) {
	writeFile(r.t, filepath.Join(r.dir, "main.tf"), "terraform {\n  required_providers {\n    valkey = { source = \"echomq/valkey\" }\n  }\n}\n"+config)
}

// run runs terraform with -json and returns its diagnostics; it fails the test when the
// command's exit status is not what wantOK says.
func (r *cliRun) run(wantOK bool, args ...string) []cliDiagnostic {
	r.t.Helper()
	// Flags go right after the subcommand: positional arguments (a plan file) must come last.
	full := append([]string{args[0], "-json", "-no-color"}, args[1:]...)
	cmd := exec.Command(os.Getenv("TF_ACC_TERRAFORM_PATH"), full...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+r.config, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if (err == nil) != wantOK {
		r.t.Fatalf("terraform %s: err=%v, want ok=%v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, wantOK, stdout.String(), stderr.String())
	}
	var diags []cliDiagnostic
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			Type       string        `json:"type"`
			Diagnostic cliDiagnostic `json:"diagnostic"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Type == "diagnostic" {
			diags = append(diags, line.Diagnostic)
		}
	}
	return diags
}

// findDiagnostic returns the diagnostics with the given severity and summary.
func findDiagnostic(diags []cliDiagnostic, severity, summary string) []cliDiagnostic {
	var found []cliDiagnostic
	for _, d := range diags {
		if d.Severity == severity && d.Summary == summary {
			found = append(found, d)
		}
	}
	return found
}

// expectWarning fails unless exactly want warnings with summary appear, each mentioning every
// fragment in its detail.
func expectWarning(t *testing.T, diags []cliDiagnostic, summary string, want int, fragments ...string) {
	t.Helper()
	found := findDiagnostic(diags, "warning", summary)
	if len(found) != want {
		t.Fatalf("%d warnings %q, want %d; diagnostics: %+v", len(found), summary, want, diags)
	}
	for _, d := range found {
		for _, f := range fragments {
			if !strings.Contains(unwrap(d.Detail), f) {
				t.Errorf("warning %q detail %q does not mention %q", summary, d.Detail, f)
			}
		}
	}
}

// unwrap joins the detail's lines, which Terraform may wrap.
func unwrap(s string) string { return strings.Join(strings.Fields(s), " ") }

// cliResult is one terraform run made by exec, which never stops the test itself, so that
// concurrent runs can report from their own goroutines.
type cliResult struct {
	args           []string
	diags          []cliDiagnostic
	stdout, stderr []byte
	err            error
}

// exec runs terraform in r's directory with TF_LOG=TRACE written to r.tracePath() and env
// added (VALKEY_PASSWORD, say). -json is added to the subcommands that take it.
func (r *cliRun) exec(ctx context.Context, env []string, args ...string) cliResult {
	full := args
	if args[0] != "show" {
		full = append([]string{args[0], "-json", "-no-color"}, args[1:]...)
	}
	cmd := exec.CommandContext(ctx, os.Getenv("TF_ACC_TERRAFORM_PATH"), full...)
	cmd.Dir = r.dir
	cmd.Env = append(append(os.Environ(), "TF_CLI_CONFIG_FILE="+r.config, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1",
		"TF_LOG=TRACE", "TF_LOG_PATH="+r.tracePath(), "VALKEY_PASSWORD="), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	res := cliResult{args: args, err: cmd.Run(), stdout: stdout.Bytes(), stderr: stderr.Bytes()}
	sc := bufio.NewScanner(bytes.NewReader(res.stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			Type       string        `json:"type"`
			Diagnostic cliDiagnostic `json:"diagnostic"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Type == "diagnostic" {
			res.diags = append(res.diags, line.Diagnostic)
		}
	}
	return res
}

// must fails the test unless the run's exit status is what wantOK says; call it from the
// test's goroutine.
func (res cliResult) must(t *testing.T, wantOK bool) cliResult {
	t.Helper()
	if (res.err == nil) != wantOK {
		t.Fatalf("terraform %s: err=%v, want ok=%v\nstdout:\n%s\nstderr:\n%s", strings.Join(res.args, " "), res.err, wantOK, res.stdout, res.stderr)
	}
	return res
}

// tracePath is where exec's runs write their TF_LOG=TRACE log.
func (r *cliRun) tracePath() string { return filepath.Join(filepath.Dir(r.dir), "trace.log") }

// expectNoSecret fails if secret appears in r's TRACE log, its state files, or the outputs of
// the given runs (their JSON output, and plan JSON from `show -json tfplan`). The TRACE log
// must hold the provider's own RPC lines (tf_rpc=), or the grep would prove nothing.
func (r *cliRun) expectNoSecret(secret string, runs ...cliResult) { //nolint:unparam // each caller names the secret it planted
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
	for _, res := range runs {
		places["output of terraform "+strings.Join(res.args, " ")] = append(append([]byte{}, res.stdout...), res.stderr...)
	}
	for what, data := range places {
		if i := bytes.Index(data, []byte(secret)); i >= 0 {
			r.t.Errorf("%s holds the password: ...%s...", what, data[max(0, i-200):min(len(data), i+len(secret)+50)])
		}
	}
}
