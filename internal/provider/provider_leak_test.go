package provider

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAccProvider_PasswordNeverLeaks builds the real provider binary, runs Terraform against it
// (dev_overrides) with TF_LOG=TRACE, and greps the log, the state, the plan JSON and the CLI's
// output for the password, given through VALKEY_PASSWORD and written in the provider block.
func TestAccProvider_PasswordNeverLeaks(t *testing.T) {
	tfBin := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if os.Getenv("TF_ACC") == "" || tfBin == "" {
		t.Skip("TF_ACC and TF_ACC_TERRAFORM_PATH must be set")
	}
	t.Parallel()
	stream := testKey(t)
	user, password := testServer(t).ACLUser(t, streamPattern(stream), minimalACL)
	wrong := password + "-but-wrong"

	dir := t.TempDir()
	pluginDir := filepath.Join(dir, "plugins")
	build := exec.Command("go", "build", "-o", filepath.Join(pluginDir, "terraform-provider-valkey"), ".")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cliConfig := filepath.Join(dir, "cli.tfrc")
	writeLeakFile(t, cliConfig, fmt.Sprintf(`provider_installation {
  dev_overrides {
    "registry.terraform.io/echomq/valkey" = %[1]q
    "registry.opentofu.org/echomq/valkey" = %[1]q
  }
  direct {}
}
`, pluginDir))
	work := filepath.Join(dir, "work")
	logPath := filepath.Join(dir, "trace.log")
	var output bytes.Buffer // human-readable CLI output of every run
	terraform := func(wantOK bool, env []string, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(tfBin, args...)
		cmd.Dir = work
		cmd.Env = append(append(os.Environ(), "TF_CLI_CONFIG_FILE="+cliConfig, "TF_LOG=TRACE", "TF_LOG_PATH="+logPath,
			"TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1", "VALKEY_PASSWORD="), env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if args[0] != "show" {
			output.Write(stdout.Bytes())
		}
		output.Write(stderr.Bytes())
		if (err == nil) != wantOK {
			t.Fatalf("terraform %s: err=%v, want ok=%v\n%s%s", strings.Join(args, " "), err, wantOK, stdout.String(), stderr.String())
		}
		return stdout.Bytes()
	}
	// providerBlock is "" (password from VALKEY_PASSWORD) or the password written literally,
	// both as the attribute and inside the url.
	config := func(literal, secondStart string) string {
		url, attr := "valkey://"+user+"@"+testServer(t).Addr()+"/0", ""
		if literal != "" {
			url = "valkey://" + user + ":" + literal + "@" + testServer(t).Addr() + "/0"
			attr = fmt.Sprintf("  password = %q\n", literal)
		}
		return fmt.Sprintf(`terraform {
  required_providers {
    valkey = {
      source = "echomq/valkey"
    }
  }
}

provider "valkey" {
  url      = %[1]q
  username = %[2]q
%[3]s}

resource "valkey_stream_group" "test" {
  stream      = %[4]q
  name        = "billing"
  group_start = "new"
}

resource "valkey_stream_group" "second" {
  stream      = %[4]q
  name        = "shipping"
  group_start = %[5]q
}
`, url, user, attr, stream, secondStart)
	}
	fromEnv := []string{"VALKEY_PASSWORD=" + password}

	start := time.Now()
	// 1. The recommended way: the password in VALKEY_PASSWORD. Nothing may carry it.
	writeLeakFile(t, filepath.Join(work, "main.tf"), config("", "head"))
	terraform(true, fromEnv, "apply", "-auto-approve", "-input=false", "-no-color")
	if err := checkGroupOnServer(testAdmin(t, testServer(t)), stream, "billing"); err != nil {
		t.Fatalf("apply did not reach the server: %v", err)
	}
	// A pending change (the second group's replacement), so that the plan has content.
	writeLeakFile(t, filepath.Join(work, "main.tf"), config("", "new"))
	terraform(true, fromEnv, "plan", "-input=false", "-no-color", "-out=tfplan")
	planJSON := terraform(true, fromEnv, "show", "-json", "tfplan")
	// A failure, whose messages must name the address but not the (wrong) password.
	terraform(false, []string{"VALKEY_PASSWORD=" + wrong}, "plan", "-input=false", "-no-color")
	// 2. The password written in the provider block, in the url and as the attribute. The
	// provider must not log it or store it; Terraform itself copies provider-block literals
	// and variables into `terraform show -json`, so that output is not checked here.
	writeLeakFile(t, filepath.Join(work, "main.tf"), config(password, "head"))
	terraform(true, nil, "apply", "-auto-approve", "-input=false", "-no-color")
	writeLeakFile(t, filepath.Join(work, "main.tf"), config(wrong, "head"))
	terraform(false, nil, "plan", "-input=false", "-no-color")
	t.Logf("six terraform runs against the built provider took %v", time.Since(start))

	state, err := os.ReadFile(filepath.Join(work, "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	trace, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	// The artefacts must be the real thing, or the greps below prove nothing.
	for what, c := range map[string]struct {
		data []byte
		want string
	}{
		"trace log":   {trace, "tf_rpc=ConfigureProvider"},
		"trace log ":  {trace, "[TRACE]"},
		"state":       {state, `"valkey_stream_group"`},
		"plan JSON":   {planJSON, `"resource_changes"`},
		"trace log  ": {trace, "WRONGPASS"},
		"CLI output":  {output.Bytes(), "Authentication failed"},
		"CLI output ": {output.Bytes(), testServer(t).Addr()},
	} {
		if !bytes.Contains(c.data, []byte(c.want)) {
			t.Errorf("%s does not contain %q; the test is not looking at what it should", strings.TrimSpace(what), c.want)
		}
	}
	for what, data := range map[string][]byte{"TF_LOG=TRACE output": trace, "state": state, "plan JSON": planJSON, "CLI output": output.Bytes()} {
		if bytes.Contains(data, []byte(wrong)) {
			t.Errorf("%s contains the wrong password", what)
		}
		if i := bytes.Index(data, []byte(password)); i >= 0 {
			t.Logf("%s: ...%s...", what, data[max(0, i-300):min(len(data), i+100)])
			t.Errorf("%s contains the password", what)
		}
	}
}

func writeLeakFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
