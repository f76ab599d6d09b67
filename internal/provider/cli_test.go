package provider

import (
	"bufio"
	"bytes"
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
		cliPluginDir, cliBuildErr = os.MkdirTemp("", "valkey-provider-") //nolint:usetesting
		if cliBuildErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", filepath.Join(cliPluginDir, "terraform-provider-valkey"), "../..").CombinedOutput()
		if err != nil {
			cliBuildErr = fmt.Errorf("go build: %v\n%s", err, out)
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
