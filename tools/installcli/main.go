// Command installcli puts a Terraform or OpenTofu release at OUT (scripts/setup.sh runs it into
// the tool cache):
//
//	go run ./tools/installcli terraform|tofu VERSION OUT
//
// Terraform comes from HashiCorp's releases where they answer, through hc-install (the installer
// terraform-plugin-testing uses; it checks HashiCorp's signature). Else, and for OpenTofu, the
// release is built from the Go module proxy inside a writable copy of its module, as `go install`
// refuses a module with replace directives. Terraform 1.6 and later point ten nested modules
// (remote-state backends, internal/legacy) at folders the module zip lacks (replace X =>
// ./internal/...); the proxy serves each as a module of its own at the release commit's
// pseudo-version, and the replaces are rewritten to those. Terraform 1.16.4: about 4 minutes on
// two cores and 2.4 GB of modules, once.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/hc-install/product"
	"github.com/hashicorp/hc-install/releases"
	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
)

// clis are the CLIs built here. Unlike a release (-w -s), a build keeps its symbol table, so that
// `perf report` names Terraform's functions (make bench-scale's profile of the apply).
var clis = map[string]struct{ module, pkg, ldflags string }{
	"terraform": {"github.com/hashicorp/terraform", ".", "-w -X github.com/hashicorp/terraform/version.dev=no"},
	"tofu":      {"github.com/opentofu/opentofu", "./cmd/tofu", "-w -X github.com/opentofu/opentofu/version.dev=no"},
}

var errBuilt = errors.New("OpenTofu is not downloaded here")

func main() {
	if len(os.Args) != 4 || clis[os.Args[1]].module == "" {
		fmt.Fprintln(os.Stderr, "usage: go run ./tools/installcli terraform|tofu VERSION OUT")
		os.Exit(2)
	}
	cli, v, out := os.Args[1], strings.TrimPrefix(os.Args[2], "v"), os.Args[3]
	err := errBuilt
	if cli == "terraform" {
		err = fmt.Errorf("HashiCorp's releases do not answer")
		if releasesAnswer() {
			fmt.Printf("installcli: downloading Terraform %s from releases.hashicorp.com\n", v)
			err = download(v, out)
		}
	}
	if err != nil {
		fmt.Printf("installcli: building %s %s from the Go module proxy (%v)\n", cli, v, err)
		err = build(cli, v, out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "installcli:", err)
		os.Exit(1)
	}
}

func releasesAnswer() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, "https://releases.hashicorp.com/terraform/", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode < 400
}

// download installs Terraform v from HashiCorp's releases, its signature checked, at out.
func download(v, out string) error {
	ver, err := version.NewVersion(v)
	if err != nil {
		return err
	}
	// Beside out, so that the rename never crosses file systems (/tmp is often a tmpfs).
	dir, err := os.MkdirTemp(filepath.Dir(out), ".installcli-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	bin, err := (&releases.ExactVersion{Product: product.Terraform, Version: ver, InstallDir: dir}).Install(context.Background())
	if err != nil {
		return err
	}
	return os.Rename(bin, out)
}

func build(cli, version, out string) error {
	c := clis[cli]
	out, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	dl, err := modDownload(c.module + "@v" + version)
	if dl.Error != "" {
		return fmt.Errorf("downloading %s %s: %s", cli, version, dl.Error)
	}
	if err != nil {
		return fmt.Errorf("downloading %s %s: %w", cli, version, err)
	}
	info, err := os.ReadFile(dl.Info)
	if err != nil {
		return err
	}
	src, err := os.MkdirTemp("", "installcli-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(src) }()
	if err := os.CopyFS(src, os.DirFS(dl.Dir)); err != nil { // the module cache is read-only
		return err
	}
	gomod := filepath.Join(src, "go.mod")
	data, err := os.ReadFile(gomod)
	if err != nil {
		return err
	}
	data, nested, err := rewriteNested(data, func() (string, error) { return pseudoVersion(info) })
	if err != nil {
		return err
	}
	if err := os.WriteFile(gomod, data, 0o644); err != nil {
		return err
	}
	if len(nested) > 0 {
		if err := goRun(src, append([]string{"mod", "download"}, nested...)...); err != nil {
			return err
		}
	}
	return goRun(src, "build", "-trimpath", "-buildvcs=false", "-ldflags", c.ldflags, "-o", out, c.pkg)
}

// pseudoVersion is the pseudo-version of the commit a release's .info file names:
// v0.0.0-<commit time, UTC>-<the commit's first 12 hex digits>.
func pseudoVersion(info []byte) (string, error) {
	var i struct {
		Time   time.Time
		Origin struct{ Hash string }
	}
	if err := json.Unmarshal(info, &i); err != nil {
		return "", err
	}
	if i.Time.IsZero() || len(i.Origin.Hash) < 12 {
		return "", fmt.Errorf("the module proxy's .info names no commit and time: %s", info)
	}
	return module.PseudoVersion("", "", i.Time, i.Origin.Hash[:12]), nil
}

// rewriteNested points each replace of go.mod at a folder under ./internal/ to its module at the
// release commit's pseudo-version (asked only when there is one), and returns the new go.mod and
// those modules as PATH@VERSION.
func rewriteNested(gomod []byte, pseudoVersion func() (string, error)) ([]byte, []string, error) {
	f, err := modfile.Parse("go.mod", gomod, nil)
	if err != nil {
		return nil, nil, err
	}
	var nested []string
	pseudo := ""
	for _, r := range f.Replace {
		if !strings.HasPrefix(r.New.Path, "./internal/") {
			continue
		}
		if pseudo == "" {
			if pseudo, err = pseudoVersion(); err != nil {
				return nil, nil, err
			}
		}
		if err := f.AddReplace(r.Old.Path, r.Old.Version, r.Old.Path, pseudo); err != nil {
			return nil, nil, err
		}
		nested = append(nested, r.Old.Path+"@"+pseudo)
	}
	out, err := f.Format()
	return out, nested, err
}

func goRun(dir string, args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "CGO_ENABLED=0")
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return nil
}

// modDownload is `go mod download -json` of one module, run outside any module.
func modDownload(mod string) (dl struct{ Dir, Info, Error string }, err error) {
	cmd := exec.Command("go", "mod", "download", "-json", mod)
	cmd.Dir, cmd.Stderr, cmd.Env = os.TempDir(), os.Stderr, append(os.Environ(), "GOFLAGS=")
	out, err := cmd.Output()
	if jerr := json.Unmarshal(out, &dl); jerr != nil && err == nil {
		err = jerr
	}
	return dl, err
}
