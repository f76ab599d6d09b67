package main

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// githubFile makes the file a GitHub environment variable (GITHUB_PATH, GITHUB_OUTPUT...) names,
// and returns a function that reads it.
func githubFile(t *testing.T, variable string) func() string {
	t.Helper()
	path := filepath.Join(t.TempDir(), variable)
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(variable, path)
	return func() string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
}

// Every hosted action the workflows pin has a stand-in, written at the pinned commit as a node
// action that calls actlocal back; the cache's saves after the job, as actions/cache does.
func TestWriteStandIns_EveryPinnedActionOfTheWorkflows(t *testing.T) {
	dir := t.TempDir()
	flags, err := writeStandIns("../..", dir)
	if err != nil {
		t.Fatal(err)
	}
	var mapped []string
	for i, f := range flags {
		if f == "--local-repository" {
			continue
		}
		if i == 0 || flags[i-1] != "--local-repository" {
			t.Errorf("flag %q is not the value of --local-repository", f)
		}
		action, _, _ := strings.Cut(f, "@")
		mapped = append(mapped, action)
	}
	for _, action := range []string{"actions/setup-go", "actions/cache", "hashicorp/setup-terraform", "opentofu/setup-opentofu",
		"golangci/golangci-lint-action", "goreleaser/goreleaser-action", "actions/upload-artifact", "crazy-max/ghaction-import-gpg"} {
		if !slices.Contains(mapped, action) {
			t.Errorf("%s: no --local-repository flag; the workflows use it (flags %q)", action, flags)
		}
	}
	if slices.Contains(mapped, "actions/checkout") {
		t.Error("actions/checkout has a stand-in: act skips a checkout of the repository itself, and the clone is the checkout")
	}
	yml, err := os.ReadFile(filepath.Join(dir, "actions/cache/action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"  key:\n", "  path:\n", "using: node20", "main: main.js", "post: post.js", "post-if: success()"} {
		if !strings.Contains(string(yml), want) {
			t.Errorf("actions/cache stand-in's action.yml lacks %q:\n%s", want, yml)
		}
	}
	post, err := os.ReadFile(filepath.Join(dir, "actions/cache/post.js"))
	if err != nil || !strings.Contains(string(post), `['standin', "actions/cache", "post"]`) {
		t.Errorf("actions/cache's post.js does not call actlocal standin actions/cache post: %s (%v)", post, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "hashicorp/setup-terraform/post.js")); err == nil {
		t.Error("setup-terraform's stand-in has a post step; the action has none")
	}
}

// A workflow that uses an action with no stand-in stops the run before any job, naming it.
func TestWriteStandIns_NamesAnActionWithoutStandIn(t *testing.T) {
	repo := t.TempDir()
	workflows := filepath.Join(repo, ".github/workflows")
	if err := os.MkdirAll(workflows, 0o755); err != nil {
		t.Fatal(err)
	}
	text := "jobs:\n  a:\n    steps:\n      - uses: actions/setup-go@" + strings.Repeat("a", 40) + "\n      - uses: example/unknown-action@" + strings.Repeat("b", 40) + "\n"
	if err := os.WriteFile(filepath.Join(workflows, "w.yml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := writeStandIns(repo, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "example/unknown-action") || strings.Contains(err.Error(), "setup-go") {
		t.Fatalf("err = %v, want one naming example/unknown-action alone", err)
	}
}

// The cache stand-in misses, saves after the job, and restores into another run's fresh home
// under the same key, saying cache-hit as actions/cache does; a hit is not saved again.
func TestCache_SavedAndRestoredIntoAFreshHome(t *testing.T) {
	t.Setenv("ACTLOCAL_CACHE", t.TempDir())
	t.Setenv("INPUT_KEY", "tools-Linux-unit")
	t.Setenv("INPUT_PATH", "~/.cache/tpv/bin\n")
	home := t.TempDir()
	t.Setenv("HOME", home)
	outputs := githubFile(t, "GITHUB_OUTPUT")
	if err := cacheRestore(); err != nil {
		t.Fatal(err)
	}
	if got := outputs(); got != "cache-hit=false\n" {
		t.Fatalf("first restore wrote %q, want a miss", got)
	}
	if err := os.MkdirAll(filepath.Join(home, ".cache/tpv/bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".cache/tpv/bin/tool"), []byte("built"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := cacheSave(); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(os.Getenv("ACTLOCAL_CACHE"), "tools-Linux-unit.tar")
	saved, err := os.Stat(archive)
	if err != nil {
		t.Fatalf("no archive after the save: %v", err)
	}

	fresh := t.TempDir()
	t.Setenv("HOME", fresh)
	outputs = githubFile(t, "GITHUB_OUTPUT")
	if err := cacheRestore(); err != nil {
		t.Fatal(err)
	}
	if got := outputs(); got != "cache-hit=true\n" {
		t.Errorf("second restore wrote %q, want a hit", got)
	}
	if b, err := os.ReadFile(filepath.Join(fresh, ".cache/tpv/bin/tool")); err != nil || string(b) != "built" {
		t.Errorf("the fresh home's tool after the restore: %q, %v", b, err)
	}
	if err := os.WriteFile(filepath.Join(fresh, ".cache/tpv/bin/other"), []byte("new"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := cacheSave(); err != nil {
		t.Fatal(err)
	}
	if again, err := os.Stat(archive); err != nil || again.Size() != saved.Size() || !again.ModTime().Equal(saved.ModTime()) {
		t.Errorf("the archive changed after a hit (%v): a hit must not be saved again", err)
	}
}

// fakeCLI writes an executable into the tool cache that prints line for --version.
func fakeCLI(t *testing.T, tools, file, line string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(tools, file), []byte("#!/bin/sh\necho '"+line+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// setup-terraform's stand-in puts the tool cache's binary of the version asked for on PATH as
// terraform, and refuses "latest", a missing binary, and one that reports another version.
func TestOnPath_TheVersionAskedForOrAnError(t *testing.T) {
	tools := t.TempDir()
	t.Setenv("ACTLOCAL_TOOLS", tools)
	t.Setenv("RUNNER_TEMP", t.TempDir())
	paths := githubFile(t, "GITHUB_PATH")
	fakeCLI(t, tools, "terraform-1.5.7", "Terraform v1.5.7")
	fakeCLI(t, tools, "terraform-1.16.4", "Terraform v1.16.3")

	if err := onPath("terraform", "terraform-1.5.7", "1.5.7"); err != nil {
		t.Fatal(err)
	}
	dir := strings.TrimSpace(paths())
	if dir == "" {
		t.Fatal("nothing added to GITHUB_PATH")
	}
	if target, err := os.Readlink(filepath.Join(dir, "terraform")); err != nil || target != filepath.Join(tools, "terraform-1.5.7") {
		t.Errorf("%s/terraform -> %q (%v), want the tool cache's terraform-1.5.7", dir, target, err)
	}
	for _, c := range []struct{ file, version, want string }{
		{"terraform-latest", "latest", "download site"},
		{"terraform-", "", "download site"},
		{"terraform-1.16.4", "1.16.4", `reports "Terraform v1.16.3"`},
		{"terraform-1.9.0", "1.9.0", "build it into the tool cache first"},
	} {
		err := onPath("terraform", c.file, c.version)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("onPath(%s, %q): err = %v, want one saying %q", c.file, c.version, err, c.want)
		}
	}
}

// setup-go's stand-in reads go.mod's go line and refuses a Go the host does not have; with
// cache: true it points the job at the host's module and build caches.
func TestSetupGo_ChecksTheVersionOfGoMod(t *testing.T) {
	workspace := t.TempDir()
	t.Setenv("GITHUB_WORKSPACE", workspace)
	t.Setenv("INPUT_GO-VERSION-FILE", "go.mod")
	t.Setenv("ACTLOCAL_GOMODCACHE", "/mod/cache")
	t.Setenv("ACTLOCAL_GOCACHE", "/build/cache")
	env := githubFile(t, "GITHUB_ENV")
	write := func(version string) {
		if err := os.WriteFile(filepath.Join(workspace, "go.mod"), []byte("module x\n\ngo "+version+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("1.2.3")
	if err := setupGo(); err == nil || !strings.Contains(err.Error(), "asks for Go 1.2.3") {
		t.Errorf("go.mod asks for 1.2.3: err = %v, want a refusal naming it", err)
	}
	have, err := output("", "go", "env", "GOVERSION")
	if err != nil {
		t.Fatal(err)
	}
	if have != runtime.Version() {
		t.Skipf("the go on PATH (%s) is not the one running the test (%s)", have, runtime.Version())
	}
	write(strings.TrimPrefix(have, "go"))
	t.Setenv("INPUT_CACHE", "true")
	if err := setupGo(); err != nil {
		t.Fatal(err)
	}
	if got, want := env(), "GOMODCACHE=/mod/cache\nGOCACHE=/build/cache\n"; got != want {
		t.Errorf("GITHUB_ENV = %q, want %q", got, want)
	}
}
