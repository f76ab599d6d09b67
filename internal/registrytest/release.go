// Package registrytest serves a provider release through the provider registry protocol on
// loopback, over HTTPS with a certificate authority made for the run: what `terraform init`
// and `tofu init` meet at the Terraform and OpenTofu registries, for tests. A test reads a
// release made by goreleaser (dist/ of `make release-check`), may change its bytes, and points
// the CLI at the server with a `host` block of its CLI configuration.
package registrytest

import (
	"bytes"
	"crypto"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// Release is one version of a provider as goreleaser publishes it: a zip per platform, the
// SHA256SUMS file listing them, its detached signature, and the public key that made it.
type Release struct {
	Type, Version string
	Protocols     []string // the plugin protocols of the registry manifest

	Zips       map[string][]byte // by platform, "linux_amd64"
	SHA256Sums []byte            // the checksum file, as published
	Signature  []byte            // the detached signature of SHA256Sums
	SigningKey string            // the ASCII-armoured public key the registry hands out
	KeyID      string            // its key ID as the CLIs print it (16 hex digits)
}

// zipName matches goreleaser's zips: terraform-provider-TYPE_VERSION_OS_ARCH.zip.
var zipName = regexp.MustCompile(`^terraform-provider-([a-z0-9-]+)_([0-9][0-9A-Za-z.+-]*)_([a-z0-9]+)_([a-z0-9]+)\.zip$`)

// ReadRelease reads the release in dist (one *_SHA256SUMS, its .sig and the zips it lists),
// its registry manifest (terraform-registry-manifest.json) and the armoured public key in
// keyFile that signed it.
func ReadRelease(dist, manifestFile, keyFile string) (*Release, error) {
	sumsFiles, _ := filepath.Glob(filepath.Join(dist, "*_SHA256SUMS")) // the pattern is valid
	if len(sumsFiles) != 1 {
		return nil, fmt.Errorf("want one *_SHA256SUMS file in %s, found %v", dist, sumsFiles)
	}
	r := &Release{Zips: map[string][]byte{}}
	manifest, err := os.ReadFile(manifestFile)
	if err != nil {
		return nil, err
	}
	var m struct {
		Metadata struct {
			ProtocolVersions []string `json:"protocol_versions"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(manifest, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", manifestFile, err)
	}
	if len(m.Metadata.ProtocolVersions) == 0 {
		return nil, fmt.Errorf("%s names no protocol_versions", manifestFile)
	}
	r.Protocols = m.Metadata.ProtocolVersions
	if r.SHA256Sums, err = os.ReadFile(sumsFiles[0]); err != nil {
		return nil, err
	}
	if r.Signature, err = os.ReadFile(sumsFiles[0] + ".sig"); err != nil {
		return nil, err
	}
	key, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	r.SigningKey = string(key)
	keyring, err := openpgp.ReadArmoredKeyRing(bytes.NewReader(key))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", keyFile, err)
	}
	if len(keyring) != 1 {
		return nil, fmt.Errorf("%s holds %d public keys, want one", keyFile, len(keyring))
	}
	r.KeyID = keyring[0].PrimaryKey.KeyIdString()
	for _, line := range strings.Split(strings.TrimSpace(string(r.SHA256Sums)), "\n") {
		_, name, _ := strings.Cut(line, "  ")
		m := zipName.FindStringSubmatch(name)
		if m == nil {
			continue // the registry manifest
		}
		if r.Type != "" && (m[1] != r.Type || m[2] != r.Version) {
			return nil, fmt.Errorf("%s lists %s beside zips of %s %s", sumsFiles[0], name, r.Type, r.Version)
		}
		r.Type, r.Version = m[1], m[2]
		if r.Zips[m[3]+"_"+m[4]], err = os.ReadFile(filepath.Join(dist, name)); err != nil {
			return nil, err
		}
	}
	if len(r.Zips) == 0 {
		return nil, fmt.Errorf("%s lists no provider zip", sumsFiles[0])
	}
	return r, nil
}

// Clone is a copy of r whose bytes a test may change.
func (r *Release) Clone() *Release {
	c := *r
	c.Zips = map[string][]byte{}
	for p, z := range r.Zips {
		c.Zips[p] = bytes.Clone(z)
	}
	c.SHA256Sums, c.Signature = bytes.Clone(r.SHA256Sums), bytes.Clone(r.Signature)
	return &c
}

// ZipName is the file name of the zip for platform ("linux_amd64").
func (r *Release) ZipName(platform string) string {
	return fmt.Sprintf("terraform-provider-%s_%s_%s.zip", r.Type, r.Version, platform)
}

// SumsName is the file name of the checksum file.
func (r *Release) SumsName() string {
	return fmt.Sprintf("terraform-provider-%s_%s_SHA256SUMS", r.Type, r.Version)
}

// Listed is the SHA-256 that SHA256Sums lists for file name, in hex, or "".
func (r *Release) Listed(name string) string {
	for _, line := range strings.Split(string(r.SHA256Sums), "\n") {
		if sum, n, ok := strings.Cut(line, "  "); ok && n == name {
			return sum
		}
	}
	return ""
}

// Relist rewrites the line of SHA256Sums for file name with the SHA-256 of content, as an
// attacker (or goreleaser#6514) rewrites the file after it was signed.
func (r *Release) Relist(name string, content []byte) {
	sum := sha256.Sum256(content)
	r.SHA256Sums = bytes.ReplaceAll(r.SHA256Sums, []byte(r.Listed(name)+"  "+name), []byte(hex.EncodeToString(sum[:])+"  "+name))
}

// SignWithNewKey replaces the signature with one of SHA256Sums by a key made for the call,
// which the registry does not hand out.
func (r *Release) SignWithNewKey() error {
	config := &packet.Config{Algorithm: packet.PubKeyAlgoRSA, RSABits: 2048, DefaultHash: crypto.SHA256}
	entity, err := openpgp.NewEntity("someone else", "", "someone@example.invalid", config)
	if err != nil {
		return err
	}
	var sig bytes.Buffer
	if err := openpgp.DetachSign(&sig, entity, bytes.NewReader(r.SHA256Sums), config); err != nil {
		return err
	}
	r.Signature = sig.Bytes()
	return nil
}
