// Command actlocal runs the jobs of .github/workflows on this host as GitHub would run them,
// with nektos/act (scripts/setup.sh act) in host mode: `-P ubuntu-24.04=-self-hosted`, each
// step a process here, no container. What it cannot fetch it stands in for:
//
//   - the checkout: a clone of HEAD with its whole history and tags (fetch-depth: 0), in a
//     scratch folder of its own; act skips actions/checkout there, as for any local checkout;
//   - the runner's home: a fresh one, so the tool cache starts empty as on a new runner;
//   - every hosted action: a stand-in of the same owner/repo and commit (act's
//     --local-repository), which does the action's work with what this host has; see standIns;
//   - GitHub's Valkey release tarballs: Debian's upstream tarballs (fetched once through a
//     private apt state into the tarball folder) on a loopback HTTP server, as TPV_VALKEY_GITHUB.
//
// Usage, from the repository root (make workflows-local):
//
//	go run ./tools/actlocal [ACT ARGUMENTS]   e.g. push -W .github/workflows/test.yml -j gates
//
// Jobs for other runners (macos-latest, windows-latest) have no platform here, and act skips them.
package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// standIn replaces one hosted action: its inputs (with the defaults act then sets), what it does
// on GitHub and what it does here instead, and the work (post: after the job, as the action's
// post step).
type standIn struct {
	inputs     []string
	github     string
	here       string
	main, post func() error
}

// standIns, by owner/repo of the action they replace.
var standIns = map[string]standIn{
	"actions/setup-go": {
		inputs: []string{"go-version-file", "go-version", "cache"},
		github: "downloads Go, puts it on PATH, restores the module and build caches",
		here:   "checks that the go on PATH is the version asked for; cache: the host's module and build caches",
		main:   setupGo,
	},
	"actions/cache": {
		inputs: []string{"path", "key"},
		github: "restores PATH from GitHub's cache under KEY; saves it after the job on a miss",
		here:   "the same with a folder of this host ($ACTLOCAL_CACHE/KEY.tar)",
		main:   cacheRestore,
		post:   cacheSave,
	},
	"hashicorp/setup-terraform": {
		inputs: []string{"terraform_version", "terraform_wrapper"},
		github: "downloads Terraform from releases.hashicorp.com",
		here:   "puts the tool cache's terraform-VERSION on PATH (scripts/setup.sh terraform@VERSION builds it)",
		main: func() error {
			return onPath("terraform", "terraform-"+input("terraform_version"), input("terraform_version"))
		},
	},
	"opentofu/setup-opentofu": {
		inputs: []string{"tofu_version", "tofu_wrapper"},
		github: "downloads OpenTofu from GitHub's releases",
		here:   "puts the tool cache's tofu-VERSION on PATH (scripts/setup.sh tofu@VERSION builds it)",
		main:   func() error { return onPath("tofu", "tofu-"+input("tofu_version"), input("tofu_version")) },
	},
	"golangci/golangci-lint-action": {
		inputs: []string{"version", "install-only"},
		github: "downloads golangci-lint from GitHub's releases",
		here:   "puts the tool cache's golangci-lint on PATH (scripts/setup.sh lint)",
		main: func() error {
			return onPath("golangci-lint", "golangci-lint", strings.TrimPrefix(input("version"), "v"))
		},
	},
	"goreleaser/goreleaser-action": {
		inputs: []string{"version", "install-only", "args"},
		github: "downloads goreleaser from GitHub's releases, then runs it with ARGS",
		here:   "puts the tool cache's goreleaser-VERSION on PATH (scripts/setup.sh goreleaser), then runs it with ARGS",
		main:   goreleaser,
	},
	"actions/upload-artifact": {
		inputs: []string{"name", "path", "retention-days"},
		github: "uploads PATH as the run's artifact NAME",
		here:   "copies PATH to $ACTLOCAL_ARTIFACTS/NAME",
		main: func() error {
			dir := filepath.Join(os.Getenv("ACTLOCAL_ARTIFACTS"), input("name"))
			return run("", "sh", "-c", `mkdir -p "$1" && cp -r "$2" "$1"/`, "-", dir, input("path"))
		},
	},
	"crazy-max/ghaction-import-gpg": {
		inputs: []string{"gpg_private_key", "passphrase"},
		github: "imports the secret key into the runner's gpg keyring",
		here:   "the same, on this host's gpg (the job's own home)",
		main:   importGPG,
	},
}

func main() {
	var err error
	if len(os.Args) == 4 && os.Args[1] == "standin" {
		err = runStandIn(os.Args[2], os.Args[3])
	} else {
		err = actRun(os.Args[1:])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "actlocal:", err)
		os.Exit(1)
	}
}

// actRun lays out the scratch folder (clone, home, stand-ins), serves the tarballs and runs act.
func actRun(args []string) error {
	root, err := output("", "git", "rev-parse", "--show-toplevel")
	if err != nil {
		return err
	}
	bin, err := output(root, "scripts/setup.sh", "act")
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	scratch, err := os.MkdirTemp("", "act-")
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "actlocal: scratch folder %s (left for reading)\n", scratch)
	repo := filepath.Join(scratch, "repo")
	// The runner's checkout, fetch-depth: 0; origin names the repository, as GITHUB_REPOSITORY.
	if err := run("", "git", "clone", "--quiet", root, repo); err != nil {
		return err
	}
	if err := run(repo, "git", "remote", "set-url", "origin", "https://github.com/echomq/terraform-provider-valkey.git"); err != nil {
		return err
	}
	flags, err := writeStandIns(repo, filepath.Join(scratch, "actions"))
	if err != nil {
		return err
	}
	tarballs := filepath.Join(filepath.Dir(bin), "actlocal", "tarballs")
	if err := fetchTarballs(root, tarballs); err != nil {
		return err
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = http.Serve(listener, http.FileServer(http.Dir(tarballs))) }()

	gocache, err := output("", "go", "env", "GOMODCACHE", "GOCACHE")
	if err != nil {
		return err
	}
	gomodcache, gobuildcache, _ := strings.Cut(gocache, "\n")
	home := filepath.Join(scratch, "home")
	env := append(os.Environ(),
		"HOME="+home, // a new runner's home: ~/.cache/terraform-provider-valkey/bin is empty
		"ACTLOCAL="+self,
		"ACTLOCAL_TOOLS="+bin,
		"ACTLOCAL_CACHE="+filepath.Join(filepath.Dir(bin), "actlocal", "cache"),
		"ACTLOCAL_ARTIFACTS="+filepath.Join(scratch, "artifacts"),
		"ACTLOCAL_GOMODCACHE="+gomodcache,
		"ACTLOCAL_GOCACHE="+gobuildcache,
		"TPV_VALKEY_GITHUB=http://"+listener.Addr().String(),
	)
	act := append([]string{
		"--directory", repo,
		"-P", "ubuntu-24.04=-self-hosted",
		"--action-cache-path", filepath.Join(scratch, "act"),
		"--action-offline-mode", "--no-cache-server", "--concurrent-jobs", "1",
	}, flags...)
	cmd := exec.Command(filepath.Join(bin, "act"), append(act, args...)...)
	cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = env, nil, os.Stdout, os.Stderr
	return cmd.Run()
}

// writeStandIns writes a stand-in (a node action calling actlocal) for each hosted action the
// workflows use, at its commit, and returns act's --local-repository flags for them.
func writeStandIns(repo, dir string) ([]string, error) {
	workflows, err := filepath.Glob(filepath.Join(repo, ".github/workflows/*.yml"))
	if err != nil {
		return nil, err
	}
	uses := regexp.MustCompile(`uses: *([^@ ]+)@([0-9a-f]{40})`)
	var flags, missing []string
	for _, workflow := range workflows {
		text, err := os.ReadFile(workflow)
		if err != nil {
			return nil, err
		}
		for _, m := range uses.FindAllStringSubmatch(string(text), -1) {
			action, ref := m[1], m[2]
			flag := action + "@" + ref + "=" + filepath.Join(dir, action)
			if action == "actions/checkout" || slices.Contains(flags, flag) {
				continue // act skips a checkout of the repository itself: the clone is the checkout
			}
			s, ok := standIns[action]
			if !ok {
				missing = append(missing, action)
				continue
			}
			if err := writeStandIn(filepath.Join(dir, action), action, s); err != nil {
				return nil, err
			}
			flags = append(flags, "--local-repository", flag)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("no stand-in for %s: add one to standIns in tools/actlocal", strings.Join(missing, ", "))
	}
	return flags, nil
}

func writeStandIn(dir, action string, s standIn) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var yml strings.Builder
	fmt.Fprintf(&yml, "name: %s (actlocal stand-in)\ndescription: %q\ninputs:\n", action, "On GitHub: "+s.github+". Here: "+s.here+".")
	for _, in := range s.inputs {
		fmt.Fprintf(&yml, "  %s:\n    default: ''\n", in)
	}
	fmt.Fprintf(&yml, "runs:\n  using: node20\n  main: main.js\n")
	files := map[string]string{"main.js": script(action, "main")}
	if s.post != nil {
		fmt.Fprintf(&yml, "  post: post.js\n  post-if: success()\n") // as actions/cache: saved when the job passed
		files["post.js"] = script(action, "post")
	}
	files["action.yml"] = yml.String()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func script(action, phase string) string {
	return fmt.Sprintf("const r = require('child_process').spawnSync(process.env.ACTLOCAL, ['standin', %q, %q], {stdio: 'inherit'});\nprocess.exit(r.status === null ? 1 : r.status);\n", action, phase)
}

func runStandIn(action, phase string) error {
	s, ok := standIns[action]
	if !ok {
		return fmt.Errorf("no stand-in for %s", action)
	}
	fmt.Printf("actlocal stand-in for %s: %s\n", action, s.here)
	if phase == "post" {
		return s.post()
	}
	return s.main()
}

// input is the value of a stand-in's input, as act passes it.
func input(name string) string {
	return strings.TrimSpace(os.Getenv("INPUT_" + strings.ToUpper(strings.ReplaceAll(name, " ", "_"))))
}

// appendTo adds a line to the file a GitHub environment variable names (GITHUB_PATH, GITHUB_ENV).
func appendTo(variable, line string) error {
	f, err := os.OpenFile(os.Getenv(variable), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(f, line)
	return errors.Join(err, f.Close())
}

func setupGo() error {
	file, want := input("go-version-file"), input("go-version")
	if file != "" {
		text, err := os.ReadFile(filepath.Join(os.Getenv("GITHUB_WORKSPACE"), file))
		if err != nil {
			return err
		}
		if m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(text); m != nil {
			want = string(m[1])
		}
	}
	have, err := output("", "go", "env", "GOVERSION")
	if err != nil {
		return err
	}
	if have != "go"+want {
		return fmt.Errorf("the workflow asks for Go %s; this host has %s and cannot download another", want, have)
	}
	fmt.Printf("go %s on PATH\n", want)
	if input("cache") != "true" {
		return nil
	}
	return errors.Join(appendTo("GITHUB_ENV", "GOMODCACHE="+os.Getenv("ACTLOCAL_GOMODCACHE")),
		appendTo("GITHUB_ENV", "GOCACHE="+os.Getenv("ACTLOCAL_GOCACHE")))
}

// onPath puts the tool cache's FILE, which must report VERSION, on PATH as NAME.
func onPath(name, file, version string) error {
	if version == "" || version == "latest" {
		return fmt.Errorf("%s %q: which release is the latest takes its download site, which this host cannot reach; give a version", name, version)
	}
	bin := filepath.Join(os.Getenv("ACTLOCAL_TOOLS"), file)
	cmd := exec.Command(bin, "--version")
	// As scripts/lib.sh: a CLI configuration that exists, since a missing one breaks OpenTofu's version.
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+filepath.Join(os.Getenv("ACTLOCAL_TOOLS"), "cli.tfrc"))
	out, err := cmd.CombinedOutput()
	if err == nil && !strings.Contains(string(out), version) {
		err = fmt.Errorf("it reports %q", strings.SplitN(string(out), "\n", 2)[0])
	}
	if err != nil {
		return fmt.Errorf("%s is not %s %s (%w): build it into the tool cache first (scripts/setup.sh)", bin, name, version, err)
	}
	dir := filepath.Join(os.Getenv("RUNNER_TEMP"), "actlocal-"+name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.Symlink(bin, filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	fmt.Printf("%s %s on PATH: %s\n", name, version, bin)
	return appendTo("GITHUB_PATH", dir)
}

func goreleaser() error {
	version := strings.TrimPrefix(input("version"), "v")
	if err := onPath("goreleaser", "goreleaser-"+version, version); err != nil {
		return err
	}
	if input("install-only") == "true" || input("args") == "" {
		return nil
	}
	return run("", filepath.Join(os.Getenv("ACTLOCAL_TOOLS"), "goreleaser-"+version), strings.Fields(input("args"))...)
}

// cacheArchive is the archive of the cache's key, and its path input (one path a line) as tar
// names it from the runner's home: ~/X as ./X, so that another run's home restores it.
func cacheArchive() (string, []string) {
	var paths []string
	for _, p := range strings.Split(input("path"), "\n") {
		if p = strings.TrimSpace(p); p != "" {
			paths = append(paths, strings.Replace(p, "~", ".", 1))
		}
	}
	return filepath.Join(os.Getenv("ACTLOCAL_CACHE"), input("key")+".tar"), paths
}

func cacheRestore() error {
	archive, _ := cacheArchive()
	if _, err := os.Stat(archive); err != nil {
		fmt.Printf("cache miss: %s\n", input("key"))
		return appendTo("GITHUB_OUTPUT", "cache-hit=false")
	}
	fmt.Printf("cache hit: %s\n", input("key"))
	return errors.Join(run("", "tar", "-C", os.Getenv("HOME"), "-xPf", archive), appendTo("GITHUB_OUTPUT", "cache-hit=true"))
}

func cacheSave() error {
	archive, paths := cacheArchive()
	if _, err := os.Stat(archive); err == nil {
		fmt.Printf("cache hit earlier, not saved again: %s\n", input("key"))
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(archive), 0o755); err != nil {
		return err
	}
	fmt.Printf("saving the cache %s\n", input("key"))
	return run("", "tar", append([]string{"-C", os.Getenv("HOME"), "-cPf", archive}, paths...)...)
}

func importGPG() error {
	cmd := exec.Command("gpg", "--batch", "--import")
	cmd.Stdin = strings.NewReader(input("gpg_private_key"))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("gpg --import: %w: %s", err, out)
	}
	out, err := output("", "gpg", "--batch", "--with-colons", "--list-secret-keys")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Split(line, ":"); f[0] == "fpr" && len(f) > 9 {
			fmt.Printf("imported %s\n", f[9])
			return appendTo("GITHUB_OUTPUT", "fingerprint="+f[9])
		}
	}
	return errors.New("no secret key after the import")
}

// fetchTarballs puts RELEASE.tar.gz of each Valkey build (scripts/lib.sh valkey_release) into
// dir, where it is missing: the upstream tarball of Debian's source package, checked against the
// signed Sources index of a private apt state, as scripts/setup.sh fetches it without
// TPV_VALKEY_SOURCE=github. Its top folder's name differs from GitHub's; the build strips it.
func fetchTarballs(root, dir string) error {
	var wanted [][2]string // release, suite
	for _, v := range []string{"8.0", "8.1", "9.1"} {
		out, err := output(root, "bash", "scripts/lib.sh", "valkey_release", v)
		if err != nil {
			return err
		}
		release, suite, _ := strings.Cut(out, " ")
		if _, err := os.Stat(filepath.Join(dir, release+".tar.gz")); err != nil {
			wanted = append(wanted, [2]string{release, suite})
		}
	}
	if len(wanted) == 0 {
		return nil
	}
	work, err := os.MkdirTemp("", "act-apt-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	var sources strings.Builder
	for _, w := range wanted {
		fmt.Fprintf(&sources, "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian %s main\n", w[1])
	}
	for _, d := range []string{"lists/partial", "cache/archives/partial"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o755); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(work, "sources.list"), []byte(sources.String()), 0o644); err != nil {
		return err
	}
	apt := []string{"-o", "Dir::Etc::SourceList=" + work + "/sources.list", "-o", "Dir::Etc::SourceParts=/dev/null",
		"-o", "Dir::State::Lists=" + work + "/lists", "-o", "Dir::Cache=" + work + "/cache"}
	fmt.Fprintf(os.Stderr, "actlocal: fetching Valkey's upstream tarballs from Debian's source packages into %s\n", dir)
	if _, err := output(work, "apt-get", append(apt, "update")...); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, w := range wanted {
		uris, err := output(work, "apt-get", append(apt, "source", "--print-uris", "valkey/"+w[1])...)
		if err != nil {
			return err
		}
		// 'URL' NAME SIZE SHA256:HASH, one line per file of the source package.
		orig := regexp.MustCompile(`(?m)^'([^']*/valkey_` + regexp.QuoteMeta(w[0]) + `[%+~.][^']*orig\.tar\.[a-z]+)' \S+ \d+ (\S+)$`)
		m := orig.FindStringSubmatch(uris)
		if m == nil {
			err = errors.New("no upstream tarball in its Sources index")
		} else {
			err = run(work, "/usr/lib/apt/apt-helper", "download-file", m[1], filepath.Join(dir, w[0]+".tar.gz"), m[2])
		}
		if err != nil { // a job that builds this release then fails on the loopback server's 404
			fmt.Fprintf(os.Stderr, "actlocal: Valkey %s from Debian %s: %v; not served\n", w[0], w[1], err)
		}
	}
	return nil
}

func run(dir, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, os.Stdout, os.Stderr
	return cmd.Run()
}

// output runs a command and returns its standard output, trimmed; on failure, with its errors.
func output(dir, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}
