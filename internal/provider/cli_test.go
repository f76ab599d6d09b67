package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The CLI harness drives the real Terraform CLI against the built provider through a dev
// override, for what terraform-plugin-testing does not expose: warning diagnostics (what
// reviewers read in a plan), the TRACE log and the CLI's own output, and concurrent runs.

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
	Address  string `json:"address"` // the resource's, on resource diagnostics
	Snippet  struct {
		Code string `json:"code"` // the configuration line the diagnostic points at
	} `json:"snippet"`
}

type cliRun struct {
	t      *testing.T
	dir    string
	config string // dev-override CLI configuration file
	human  bool   // runs print what people read instead of -json, and have no diags
}

// newCLIRun prepares a working directory with config as main.tf. It skips unless TF_ACC and
// TF_ACC_TERRAFORM_PATH are set, like the acceptance tests.
func newCLIRun(t *testing.T, config string) *cliRun {
	t.Helper()
	needCLI(t)
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

// needCLI skips the test unless TF_ACC and TF_ACC_TERRAFORM_PATH are set.
func needCLI(t *testing.T) {
	t.Helper()
	if os.Getenv("TF_ACC") == "" || os.Getenv("TF_ACC_TERRAFORM_PATH") == "" {
		t.Skip("set TF_ACC=1 and TF_ACC_TERRAFORM_PATH to drive the Terraform CLI")
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// write replaces main.tf.
func (r *cliRun) write(config string) {
	writeFile(r.t, filepath.Join(r.dir, "main.tf"), "terraform {\n  required_providers {\n    valkey = { source = \"echomq/valkey\" }\n  }\n}\n"+config)
}

// put writes another file beside main.tf, such as a query file (name.tfquery.hcl).
func (r *cliRun) put(name, content string) {
	writeFile(r.t, filepath.Join(r.dir, name), content)
}

// run runs terraform and returns its diagnostics; it fails the test when the command's exit
// status is not what wantOK says.
func (r *cliRun) run(wantOK bool, args ...string) []cliDiagnostic {
	r.t.Helper()
	return r.exec(r.t.Context(), nil, args...).must(r.t, wantOK).diags
}

// Summaries of the provider's per-group warnings, as patterns: each names its group and stream
// (so that Terraform's terminal output never folds them), and these match any group.
const (
	replaySummary        = `^Group ".*" of ".*" Will Replay [0-9,]+ Entr(y|ies)$`
	skipSummary          = `^Group ".*" of ".*" Will Skip [0-9,]+ Entr(y|ies)$`
	replayOrSkipSummary  = `^Group ".*" of ".*" Will Replay Or Skip [0-9,]+ Entr(y|ies)$`
	willAdoptSummary     = `^Group ".*" of ".*" Will Be Adopted, Lag \S+$`
	adoptedSummary       = `^Group ".*" of ".*" Adopted, Not Created$`
	streamCreatedSummary = `^Stream ".*" Will Be Created$`
	willStaySummary      = `^Group ".*" of ".*" Will Stay On Server$`
	leftSummary          = `^Group ".*" of ".*" Left On Server$`
	replacedSummary      = `^Replaced Group ".*" of ".*" Will Stay On Server$`
	startChangeSummary   = `^Group ".*" of ".*" Will Not Move: Start Change Adopts It$`
	checkSkippedSummary  = "Plan-Time Group Check Skipped"
	streamSkippedSummary = `^Plan-Time Group Check Skipped For Stream ".*"$`
)

// findDiagnostic returns the diagnostics with the given severity and summary; a summary that
// starts with "^" is a regular expression (the patterns above).
func findDiagnostic(diags []cliDiagnostic, severity, summary string) []cliDiagnostic {
	match := func(s string) bool { return s == summary }
	if strings.HasPrefix(summary, "^") {
		match = regexp.MustCompile(summary).MatchString
	}
	var found []cliDiagnostic
	for _, d := range diags {
		if d.Severity == severity && match(d.Summary) {
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

// exec runs terraform in r's directory with TF_LOG=TRACE written to r.tracePath(),
// VALKEY_PASSWORD empty, and env added (VALKEY_PASSWORD, say). For the commands that take them,
// -no-color, and -json unless r.human, go right after the subcommand, as positional arguments
// (a plan file) must come last; `show` prints JSON only when asked, `import` takes -no-color
// only, and `state` neither.
func (r *cliRun) exec(ctx context.Context, env []string, args ...string) cliResult {
	var flags []string
	switch args[0] {
	case "plan", "apply", "destroy", "refresh", "validate":
		flags = []string{"-no-color"}
		if !r.human {
			flags = append(flags, "-json")
		}
	case "show", "import":
		flags = []string{"-no-color"}
	}
	cmd := exec.CommandContext(ctx, os.Getenv("TF_ACC_TERRAFORM_PATH"), slices.Concat(args[:1], flags, args[1:])...)
	cmd.Dir = r.dir
	cmd.Env = append(append(os.Environ(), "TF_CLI_CONFIG_FILE="+r.config, "TF_IN_AUTOMATION=1", "TF_INPUT=0", "CHECKPOINT_DISABLE=1",
		"TF_LOG=TRACE", "TF_LOG_PATH="+r.tracePath(), "VALKEY_PASSWORD="), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	res := cliResult{args: args, err: cmd.Run(), stdout: stdout.Bytes(), stderr: stderr.Bytes()}
	if args[0] == "validate" && !r.human {
		// validate -json prints one object, not a stream of messages.
		var out struct {
			Diagnostics []cliDiagnostic `json:"diagnostics"`
		}
		if json.Unmarshal(res.stdout, &out) == nil {
			res.diags = out.Diagnostics
		}
		return res
	}
	for line := range bytes.Lines(res.stdout) {
		var msg struct {
			Type       string        `json:"type"`
			Diagnostic cliDiagnostic `json:"diagnostic"`
		}
		if json.Unmarshal(line, &msg) == nil && msg.Type == "diagnostic" {
			res.diags = append(res.diags, msg.Diagnostic)
		}
	}
	return res
}

// must fails the test unless the run's exit status is what wantOK says; call it from the
// test's goroutine.
func (res cliResult) must(t *testing.T, wantOK bool) cliResult {
	t.Helper()
	if (res.err == nil) != wantOK {
		t.Fatalf("terraform %s: err=%v, want ok=%v\n%s", strings.Join(res.args, " "), res.err, wantOK, res.output())
	}
	return res
}

// output is what the run printed, stdout then stderr.
func (res cliResult) output() []byte { return slices.Concat(res.stdout, res.stderr) }

// tracePath is where exec's runs write their TF_LOG=TRACE log.
func (r *cliRun) tracePath() string { return filepath.Join(filepath.Dir(r.dir), "trace.log") }

// stateGroup is one valkey_stream_group instance in a terraform.tfstate file.
type stateGroup struct {
	Address          string // resource name, as in valkey_stream_group.<Address>
	ID, Stream, Name string
	GroupStart       *string
	Adopted          bool
	Identity         map[string]any // nil where the CLI stores none (before 1.12)
}

// stateGroups reads the groups recorded in r's terraform.tfstate (none when there is no file).
func (r *cliRun) stateGroups() []stateGroup {
	r.t.Helper()
	b, err := os.ReadFile(filepath.Join(r.dir, "terraform.tfstate"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		r.t.Fatal(err)
	}
	var state struct {
		Resources []struct {
			Type      string `json:"type"`
			Name      string `json:"name"`
			Instances []struct {
				Attributes struct {
					ID         string  `json:"id"`
					Stream     string  `json:"stream"`
					Name       string  `json:"name"`
					GroupStart *string `json:"group_start"`
					Adopted    bool    `json:"adopted"`
				} `json:"attributes"`
				Identity map[string]any `json:"identity"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(b, &state); err != nil {
		r.t.Fatal(err)
	}
	var groups []stateGroup
	for _, res := range state.Resources {
		if res.Type != "valkey_stream_group" {
			continue
		}
		for _, in := range res.Instances {
			a := in.Attributes
			groups = append(groups, stateGroup{res.Name, a.ID, a.Stream, a.Name, a.GroupStart, a.Adopted, in.Identity})
		}
	}
	return groups
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
		places[fmt.Sprintf("output of run %d, terraform %s", i+1, strings.Join(res.args, " "))] = res.output()
	}
	for what, data := range places {
		if i := bytes.Index(data, []byte(secret)); i >= 0 {
			r.t.Errorf("%s holds the password: ...%s...", what, data[max(0, i-200):min(len(data), i+len(secret)+50)])
		}
	}
}

// stateGroup is the group recorded as valkey_stream_group.<address>; it fails the test when
// there is none.
func (r *cliRun) stateGroup(address string) stateGroup {
	r.t.Helper()
	for _, g := range r.stateGroups() {
		if g.Address == address {
			return g
		}
	}
	r.t.Fatalf("valkey_stream_group.%s is not in state: %+v", address, r.stateGroups())
	return stateGroup{}
}
