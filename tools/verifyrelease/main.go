// Command verifyrelease checks a release as terraform init does, with the public key alone:
// dist holds one *_SHA256SUMS and its detached signature; the file lists exactly the zips of
// dist and the registry manifest (goreleaser uploads terraform-registry-manifest.json under
// that name), each matching its SHA-256; each zip holds LICENSE and the binary of its name's
// version (terraform-provider-valkey_vX.Y.Z, .exe on Windows); and the signature verifies with
// the key. It is `scripts/release.sh verify` (make release-check, and the release before it is
// published).
//
// Usage, from the repository root: go run ./tools/verifyrelease DIST KEY
package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: go run ./tools/verifyrelease DIST KEY")
		os.Exit(2)
	}
	report, err := verify(os.Args[1], os.Args[2], "terraform-registry-manifest.json")
	if err != nil {
		fmt.Fprintln(os.Stderr, "release verify:", err)
		os.Exit(1)
	}
	fmt.Print(report)
}

// verify checks the release in dist with the armoured public key in keyFile; manifestFile is
// the registry manifest the release's one is a copy of. It reports what it found good.
func verify(dist, keyFile, manifestFile string) (string, error) {
	found, _ := filepath.Glob(filepath.Join(dist, "*_SHA256SUMS")) // the pattern is valid
	if len(found) != 1 {
		return "", fmt.Errorf("want one *_SHA256SUMS file in %s and its detached signature, found %v", dist, found)
	}
	sumsPath := found[0]
	sums, err := os.ReadFile(sumsPath)
	if err != nil {
		return "", err
	}
	signature, err := os.ReadFile(sumsPath + ".sig")
	if err != nil {
		return "", fmt.Errorf("want the detached signature of %s: %w", sumsPath, err)
	}
	var problems []string
	manifest := strings.TrimSuffix(filepath.Base(sumsPath), "_SHA256SUMS") + "_manifest.json"
	zips, _ := filepath.Glob(filepath.Join(dist, "*.zip"))
	want := []string{manifest}
	for _, z := range zips {
		want = append(want, filepath.Base(z))
		if problem := zipHolds(z); problem != "" {
			problems = append(problems, problem)
		}
	}
	var listed []string
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		hash, name, _ := strings.Cut(line, "  ")
		listed = append(listed, name)
		file := filepath.Join(dist, name)
		if name == manifest {
			file = manifestFile
		}
		content, err := os.ReadFile(file)
		if sum := sha256.Sum256(content); err != nil || hex.EncodeToString(sum[:]) != hash {
			problems = append(problems, fmt.Sprintf("%s does not match %s (the manifest is %s)", file, sumsPath, manifestFile))
		}
	}
	slices.Sort(want)
	slices.Sort(listed)
	if slices.ContainsFunc(listed, func(name string) bool { return strings.HasSuffix(name, ".sig") }) {
		problems = append(problems, sumsPath+" lists a signature: goreleaser added it after signing (goreleaser#6508, #6514), "+
			"so the signature cannot cover it; use goreleaser 2.17.0 or later, or 2.14.3")
	} else if !slices.Equal(listed, want) {
		problems = append(problems, fmt.Sprintf("%s lists %v, want the zips and the manifest: %v", sumsPath, listed, want))
	}
	// A keyring of the key alone, so that no other key can vouch for the signature.
	key, err := os.ReadFile(keyFile)
	if err != nil {
		return "", err
	}
	keyring, err := openpgp.ReadArmoredKeyRing(bytes.NewReader(key))
	if err != nil {
		return "", fmt.Errorf("%s is not an ASCII-armoured public key: %w", keyFile, err)
	}
	check := openpgp.CheckDetachedSignature
	if bytes.HasPrefix(signature, []byte("-----BEGIN")) {
		check = openpgp.CheckArmoredDetachedSignature
	}
	signer, err := check(keyring, bytes.NewReader(sums), bytes.NewReader(signature), nil)
	if err != nil {
		problems = append(problems, fmt.Sprintf("the signature %s.sig does not verify %s with %s, so terraform init would refuse the release: %v",
			sumsPath, sumsPath, keyFile, err))
	}
	if len(problems) > 0 {
		return "", fmt.Errorf("%d of the release's checks failed:\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
	var names []string
	for name := range signer.Identities {
		names = append(names, name)
	}
	return fmt.Sprintf("%s.sig: good signature from %s, key %s\n%s: lists the %d files of the release (zips and manifest), each matching; each zip holds LICENSE and its binary\n",
		sumsPath, strings.Join(names, ", "), signer.PrimaryKey.KeyIdString(), sumsPath, len(listed)), nil
}

// zipHolds says what a release zip lacks, PROVIDER_VERSION_OS_ARCH.zip: LICENSE, and the binary
// PROVIDER_vVERSION (.exe on Windows), as the registry's install expects.
func zipHolds(file string) string {
	parts := strings.Split(strings.TrimSuffix(filepath.Base(file), ".zip"), "_")
	if len(parts) != 4 {
		return fmt.Sprintf("%s is not named PROVIDER_VERSION_OS_ARCH.zip", file)
	}
	binary := parts[0] + "_v" + parts[1]
	if parts[2] == "windows" {
		binary += ".exe"
	}
	r, err := zip.OpenReader(file)
	if err != nil {
		return fmt.Sprintf("%s is not a zip: %v", file, err)
	}
	defer func() { _ = r.Close() }()
	var names []string
	for _, f := range r.File {
		names = append(names, f.Name)
	}
	if !slices.Contains(names, "LICENSE") || !slices.Contains(names, binary) {
		return fmt.Sprintf("%s holds %v, want LICENSE and %s", file, names, binary)
	}
	return ""
}
