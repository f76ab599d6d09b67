package systemtest

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/dirhash"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/registrytest"
)

// The release installed the way the registries serve it. `make release-check` leaves a
// snapshot release signed with a throwaway key in dist/, and the public key beside it;
// registrytest serves them through the provider registry protocol on loopback, over HTTPS
// with a CA made for the run, and a host block of the CLI configuration sends
// registryHost there. Nothing here uses dev_overrides or a mirror.

// registryHost is the registry the configuration installs from: a name that never resolves,
// answered by the host block alone.
const registryHost = "registry.example.test"

// testRelease is the release `make release-check` made (TPV_RELEASE_DIST, TPV_RELEASE_KEY), or
// the test skips.
func testRelease(t *testing.T) *registrytest.Release {
	t.Helper()
	needCLI(t)
	dist, key := os.Getenv("TPV_RELEASE_DIST"), os.Getenv("TPV_RELEASE_KEY")
	if dist == "" || key == "" {
		t.Skip("set TPV_RELEASE_DIST and TPV_RELEASE_KEY to the release and public key of make release-check (make testregistry does)")
	}
	release, err := registrytest.ReadRelease(dist, "../../terraform-registry-manifest.json", key)
	acctest.MustDo(t, err)
	if _, ok := release.Zips[hostPlatform]; !ok {
		t.Skipf("the release holds no zip for %s (make release-check builds linux_amd64 and darwin_arm64)", hostPlatform)
	}
	return release
}

var hostPlatform = runtime.GOOS + "_" + runtime.GOARCH

// registryRun prepares a run in a fresh HOME whose CLI configuration sends registryHost to srv
// and trusts srv's CA, with examples/ci/versions.tf asking for the provider at registryHost.
func registryRun(t *testing.T, srv *registrytest.Server, main string) installedCLIRun {
	t.Helper()
	return registryRunAt(t, srv, registryHost, srv.CLIConfig(registryHost), main)
}

// registryRunAt is registryRun for the provider at host, with the CLI configuration rc.
func registryRunAt(t *testing.T, srv *registrytest.Server, host, rc, main string) installedCLIRun {
	t.Helper()
	versions, err := os.ReadFile("../../examples/ci/versions.tf")
	acctest.MustDo(t, err)
	source := []byte(`source  = "echomq/valkey"`)
	if !bytes.Contains(versions, source) {
		t.Fatalf("examples/ci/versions.tf no longer holds %s", source)
	}
	versions = bytes.Replace(versions, source, []byte(`source  = "`+host+`/echomq/valkey"`), 1)
	home := t.TempDir()
	rcFile := filepath.Join(home, "cli.tfrc")
	writeFile(t, rcFile, rc)
	r := installedRun(t, home, rcFile, string(versions), main)
	r.env["SSL_CERT_FILE"] = srv.CACertFile
	return r
}

// expectInstalled fails unless init's output says it installed release from host with a valid
// signature by the release's key.
func expectInstalled(t *testing.T, out []byte, host string, release *registrytest.Release) {
	t.Helper()
	installed := regexp.MustCompile(`Installed ` + regexp.QuoteMeta(host+"/echomq/valkey") + ` v` +
		regexp.QuoteMeta(release.Version) + ` \((self-)?signed, key ID ` + release.KeyID + `\)`)
	if !installed.Match(out) {
		t.Errorf("init did not report the provider installed from %s with a valid signature by key %s:\n%s", host, release.KeyID, out)
	}
}

// TestCLIRegistry_installsTheSignedRelease: init installs the release from the registry
// protocol (the versions list, the download answer, the zip, SHA256SUMS and its signature),
// says the signature is valid and names the key; the lock file records exactly the checksums
// of the signed SHA256SUMS (zh:) and of the installed package (h1:); plan and apply then run
// against a real server, and the group is there. A provider whose source names the server's
// own address installs through service discovery, with no host block.
func TestCLIRegistry_installsTheSignedRelease(t *testing.T) {
	t.Parallel()
	release := testRelease(t)
	srv := registrytest.StartT(t, "echomq", release)
	rdb, stream := acctest.Admin(t, acctest.Server(t)), acctest.StreamKey(t)
	acctest.SeedEntries(t, stream)
	r := registryRun(t, srv, acctest.ProviderConfig(acctest.Server(t))+acctest.StreamGroupConfig(stream, "billing", "head"))

	expectInstalled(t, r.installed(r.initialize()).output(), registryHost, release)
	zip, sums := "/files/"+release.ZipName(hostPlatform), "/files/"+release.SumsName()
	for _, path := range []string{"/v1/providers/echomq/valkey/versions",
		"/v1/providers/echomq/valkey/" + release.Version + "/download/" + strings.Replace(hostPlatform, "_", "/", 1),
		zip, sums, sums + ".sig"} {
		if !slices.Contains(srv.Requests(), path) {
			t.Errorf("init never asked the registry for %s; it asked for %q", path, srv.Requests())
		}
	}
	r.expectLockedHashes(release)
	r.expectPlanApplyPlan(rdb, stream)

	// Service discovery: 127.0.0.1:PORT is a registry hostname that resolves, so the CLI asks it
	// for /.well-known/terraform.json first.
	discovered := registrytest.StartT(t, "echomq", release)
	host := strings.TrimPrefix(discovered.URL(), "https://")
	d := registryRunAt(t, discovered, host, "", "")
	expectInstalled(t, d.installed(d.initialize()).output(), host, release)
	if asked := discovered.Requests(); len(asked) == 0 || asked[0] != "/.well-known/terraform.json" {
		t.Errorf("init without a host block did not start with service discovery; it asked for %q", asked)
	}
}

// expectLockedHashes fails unless .terraform.lock.hcl records the release at registryHost with
// the h1: hash of the installed zip and the zh: hash of every file the signed SHA256SUMS lists
// (the CLIs take them all, the manifest's too), nothing else.
func (r installedCLIRun) expectLockedHashes(release *registrytest.Release) {
	r.t.Helper()
	zipFile := filepath.Join(r.t.TempDir(), release.ZipName(hostPlatform))
	acctest.MustDo(r.t, os.WriteFile(zipFile, release.Zips[hostPlatform], 0o600))
	h1, err := dirhash.HashZip(zipFile, dirhash.Hash1)
	acctest.MustDo(r.t, err)
	want := []string{h1}
	for _, line := range strings.Split(strings.TrimSpace(string(release.SHA256Sums)), "\n") {
		want = append(want, "zh:"+strings.Fields(line)[0])
	}
	lock, err := os.ReadFile(filepath.Join(r.dir, ".terraform.lock.hcl"))
	acctest.MustDo(r.t, err)
	for _, line := range []string{`provider "` + registryHost + `/echomq/valkey" {`, `version     = "` + release.Version + `"`} {
		if !strings.Contains(string(lock), line) {
			r.t.Errorf(".terraform.lock.hcl lacks %s:\n%s", line, lock)
		}
	}
	got := map[string]bool{}
	for _, m := range regexp.MustCompile(`"((?:h1|zh):[^"]+)"`).FindAllSubmatch(lock, -1) {
		got[string(m[1])] = true
	}
	if slices.Sort(want); !slices.Equal(slices.Sorted(maps.Keys(got)), want) {
		r.t.Errorf(".terraform.lock.hcl records the hashes %q, want %q:\n%s", slices.Sorted(maps.Keys(got)), want, lock)
	}
}

// TestCLIRegistry_refusesATamperedRelease: init refuses, in the CLI's own words, a zip whose
// bytes changed (the registry's answer vouching for the new bytes), a SHA256SUMS rewritten
// after it was signed (what goreleaser#6514 did to releases), and a signature made by a key the
// registry does not hand out; no provider is installed and no lock file is written.
func TestCLIRegistry_refusesATamperedRelease(t *testing.T) {
	t.Parallel()
	release := testRelease(t)
	zip := release.ZipName(hostPlatform)
	for _, tc := range []struct {
		name   string
		tamper func(*registrytest.Release)
		want   string // the CLI's refusal
	}{
		{"zip changed", func(r *registrytest.Release) {
			r.Zips[hostPlatform] = append(r.Zips[hostPlatform], 0)
		}, `checksum list has unexpected SHA-256 hash [0-9a-f]{64} \(expected [0-9a-f]{64}\)`},
		{"SHA256SUMS changed after signing", func(r *registrytest.Release) {
			r.Zips[hostPlatform] = append(r.Zips[hostPlatform], 0)
			r.Relist(zip, r.Zips[hostPlatform])
		}, `error checking signature: openpgp: invalid signature`},
		{"signed by another key", func(r *registrytest.Release) {
			acctest.MustDo(t, r.SignWithNewKey())
		}, `authentication signature from unknown issuer`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tampered := release.Clone()
			tc.tamper(tampered)
			srv := registrytest.StartT(t, "echomq", tampered)
			r := registryRun(t, srv, acctest.ProviderConfig(acctest.Server(t)))
			out := r.initialize().must(t, false).output()
			if !regexp.MustCompile(tc.want).Match(bytes.Join(bytes.Fields(out), []byte(" "))) {
				t.Errorf("init failed without saying %q:\n%s", tc.want, out)
			}
			if _, err := os.Stat(filepath.Join(r.dir, ".terraform.lock.hcl")); err == nil {
				t.Error("the refused init wrote .terraform.lock.hcl")
			}
			// OpenTofu leaves its install lock (linux_amd64.lock); no binary may be there.
			_ = filepath.WalkDir(filepath.Join(r.dir, ".terraform"), func(path string, d os.DirEntry, _ error) error {
				if d != nil && strings.HasPrefix(d.Name(), "terraform-provider-valkey") {
					t.Errorf("the refused init installed %s", path)
				}
				return nil
			})
		})
	}
}
