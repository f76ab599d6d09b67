package registrytest

import (
	"bytes"
	"crypto"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// writeRelease writes a release of "valkey" 1.2.3 for linux_amd64 and darwin_arm64 into a
// folder, signed by a key made for the test, as goreleaser lays it out.
func writeRelease(t *testing.T) (dist, manifest, key string) {
	t.Helper()
	dir := t.TempDir()
	var sums bytes.Buffer
	for _, name := range []string{"terraform-provider-valkey_1.2.3_darwin_arm64.zip", "terraform-provider-valkey_1.2.3_linux_amd64.zip", "terraform-provider-valkey_1.2.3_manifest.json"} {
		content := []byte("content of " + name)
		if filepath.Ext(name) == ".zip" {
			mustWrite(t, filepath.Join(dir, name), content)
		}
		sum := sha256.Sum256(content)
		fmt.Fprintf(&sums, "%x  %s\n", sum, name)
	}
	mustWrite(t, filepath.Join(dir, "terraform-provider-valkey_1.2.3_SHA256SUMS"), sums.Bytes())
	config := &packet.Config{Algorithm: packet.PubKeyAlgoRSA, RSABits: 2048, DefaultHash: crypto.SHA256}
	entity, err := openpgp.NewEntity("release", "", "release@example.invalid", config)
	if err != nil {
		t.Fatal(err)
	}
	var sig, pub bytes.Buffer
	if err := openpgp.DetachSign(&sig, entity, bytes.NewReader(sums.Bytes()), config); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(dir, "terraform-provider-valkey_1.2.3_SHA256SUMS.sig"), sig.Bytes())
	w, err := armor.Encode(&pub, openpgp.PublicKeyType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := entity.Serialize(w); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	key, manifest = filepath.Join(dir, "key.asc"), filepath.Join(dir, "manifest.json")
	mustWrite(t, key, pub.Bytes())
	mustWrite(t, manifest, []byte(`{"version": 1, "metadata": {"protocol_versions": ["6.0"]}}`))
	return dir, manifest, key
}

func mustWrite(t *testing.T, path string, content []byte) {
	t.Helper()
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
}

// get fetches path from srv, trusting only srv's CA, and returns the status and body.
func get(t *testing.T, srv *Server, path string) (int, []byte) {
	t.Helper()
	ca, err := os.ReadFile(srv.CACertFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
	resp, err := client.Get(srv.URL() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

// TestServer_answersTheRegistryProtocol: discovery names the providers service, the versions
// list names the version, its protocols and platforms, and the download answer points at files
// the server serves with the zip's SHA-256 and the signing key; other providers, versions and
// platforms are 404.
func TestServer_answersTheRegistryProtocol(t *testing.T) {
	t.Parallel()
	release, err := ReadRelease(writeRelease(t))
	if err != nil {
		t.Fatal(err)
	}
	if release.Type != "valkey" || release.Version != "1.2.3" || len(release.Zips) != 2 || len(release.KeyID) != 16 {
		t.Fatalf("read %s %s with zips %v and key ID %q", release.Type, release.Version, len(release.Zips), release.KeyID)
	}
	srv := StartT(t, "echomq", release)

	if code, body := get(t, srv, "/.well-known/terraform.json"); code != 200 || !bytes.Contains(body, []byte(`"providers.v1":"/v1/providers/"`)) {
		t.Errorf("discovery: %d %s", code, body)
	}
	var versions struct {
		Versions []struct {
			Version   string
			Protocols []string
			Platforms []struct{ OS, Arch string }
		}
	}
	_, body := get(t, srv, "/v1/providers/echomq/valkey/versions")
	if err := json.Unmarshal(body, &versions); err != nil || len(versions.Versions) != 1 || versions.Versions[0].Version != "1.2.3" ||
		len(versions.Versions[0].Platforms) != 2 || fmt.Sprint(versions.Versions[0].Protocols) != "[6.0]" {
		t.Errorf("versions: %s (%v)", body, err)
	}

	var download map[string]any
	_, body = get(t, srv, "/v1/providers/echomq/valkey/1.2.3/download/linux/amd64")
	if err := json.Unmarshal(body, &download); err != nil {
		t.Fatalf("download: %s (%v)", body, err)
	}
	sum := sha256.Sum256(release.Zips["linux_amd64"])
	if download["filename"] != "terraform-provider-valkey_1.2.3_linux_amd64.zip" || download["shasum"] != hex.EncodeToString(sum[:]) ||
		!bytes.Contains(body, []byte(release.KeyID)) {
		t.Errorf("download answer: %s", body)
	}
	for field, want := range map[string][]byte{"download_url": release.Zips["linux_amd64"], "shasums_url": release.SHA256Sums, "shasums_signature_url": release.Signature} {
		if code, got := get(t, srv, download[field].(string)); code != 200 || !bytes.Equal(got, want) { //nolint:forcetypeassert // a missing field fails the test either way
			t.Errorf("%s %v: %d, %d bytes, want %d", field, download[field], code, len(got), len(want))
		}
	}

	for _, path := range []string{"/v1/providers/other/valkey/versions", "/v1/providers/echomq/valkey/9.9.9/download/linux/amd64",
		"/v1/providers/echomq/valkey/1.2.3/download/windows/amd64", "/files/secrets.txt"} {
		if code, _ := get(t, srv, path); code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", path, code)
		}
	}
}

// TestRelease_tampering: Relist rewrites one line of SHA256SUMS for new bytes, SignWithNewKey
// makes a signature that the release's key does not verify, and a clone leaves the original
// as it was.
func TestRelease_tampering(t *testing.T) {
	t.Parallel()
	release, err := ReadRelease(writeRelease(t))
	if err != nil {
		t.Fatal(err)
	}
	tampered := release.Clone()
	zip := release.ZipName("linux_amd64")
	tampered.Zips["linux_amd64"] = append(tampered.Zips["linux_amd64"], 0)
	tampered.Relist(zip, tampered.Zips["linux_amd64"])
	sum := sha256.Sum256(tampered.Zips["linux_amd64"])
	if tampered.Listed(zip) != hex.EncodeToString(sum[:]) || release.Listed(zip) == tampered.Listed(zip) {
		t.Errorf("relisted %s as %s (original %s)", zip, tampered.Listed(zip), release.Listed(zip))
	}
	if err := tampered.SignWithNewKey(); err != nil {
		t.Fatal(err)
	}
	keyring, err := openpgp.ReadArmoredKeyRing(bytes.NewReader([]byte(release.SigningKey)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := openpgp.CheckDetachedSignature(keyring, bytes.NewReader(release.SHA256Sums), bytes.NewReader(release.Signature), nil); err != nil {
		t.Errorf("the original signature does not verify: %v", err)
	}
	if _, err := openpgp.CheckDetachedSignature(keyring, bytes.NewReader(tampered.SHA256Sums), bytes.NewReader(tampered.Signature), nil); err == nil {
		t.Error("the release's key verifies a signature by another key")
	}
}
