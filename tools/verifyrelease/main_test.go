package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
)

// release writes a signed release into a folder of its own: its dist, its public key and the
// manifest it copies. extra is listed in SHA256SUMS after the real files, as goreleaser#6514 did.
func release(t *testing.T, extra string) (dist, key, manifest string, signer *openpgp.Entity) {
	t.Helper()
	dir := t.TempDir()
	dist, key, manifest = filepath.Join(dir, "dist"), filepath.Join(dir, "key.asc"), filepath.Join(dir, "manifest.json")
	files := map[string]string{"p_1.0.0_linux_amd64.zip": zipOf(t, "LICENSE", "p_v1.0.0"), "p_1.0.0_windows_arm64.zip": zipOf(t, "LICENSE", "p_v1.0.0.exe"),
		"p_1.0.0_manifest.json": `{"version":1}`}
	if err := os.Mkdir(dist, 0o755); err != nil {
		t.Fatal(err)
	}
	var sums bytes.Buffer
	for name, content := range files {
		write(t, filepath.Join(dist, name), content)
		sum := sha256.Sum256([]byte(content))
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(sum[:]), name)
	}
	sums.WriteString(extra)
	write(t, manifest, files["p_1.0.0_manifest.json"])
	write(t, filepath.Join(dist, "p_1.0.0_SHA256SUMS"), sums.String())
	signer = sign(t, filepath.Join(dist, "p_1.0.0_SHA256SUMS"))
	var public bytes.Buffer
	w, err := armor.Encode(&public, openpgp.PublicKeyType, nil)
	if err == nil {
		err = signer.Serialize(w)
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	write(t, key, public.String())
	return dist, key, manifest, signer
}

// sign writes the detached signature of file by a new key, and returns the key.
func sign(t *testing.T, file string) *openpgp.Entity {
	t.Helper()
	entity, err := openpgp.NewEntity("release test", "", "release@example.invalid", nil)
	if err != nil {
		t.Fatal(err)
	}
	content, err := os.ReadFile(file)
	var sig bytes.Buffer
	if err == nil {
		err = openpgp.DetachSign(&sig, entity, bytes.NewReader(content), nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	write(t, file+".sig", sig.String())
	return entity
}

// zipOf is a zip archive of the named files, each holding its name.
func zipOf(t *testing.T, names ...string) string {
	t.Helper()
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for _, name := range names {
		f, err := w.Create(name)
		if err == nil {
			_, err = f.Write([]byte(name))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func write(t *testing.T, file, content string) {
	t.Helper()
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestVerify_GoodRelease(t *testing.T) {
	dist, key, manifest, signer := release(t, "")
	report, err := verify(dist, key, manifest)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"good signature from release test <release@example.invalid>, key " + signer.PrimaryKey.KeyIdString(), "lists the 3 files"} {
		if !strings.Contains(report, want) {
			t.Errorf("report %q lacks %q", report, want)
		}
	}
}

func TestVerify_RefusesWhatInitRefuses(t *testing.T) {
	for name, c := range map[string]struct {
		extra  string
		change func(t *testing.T, dist, manifest string)
		want   string
	}{
		"a listed signature": {extra: strings.Repeat("0", 64) + "  p_1.0.0_SHA256SUMS.sig\n", want: "goreleaser#6508"},
		"a changed zip": {change: func(t *testing.T, dist, _ string) {
			write(t, filepath.Join(dist, "p_1.0.0_linux_amd64.zip"), "changed")
		}, want: "p_1.0.0_linux_amd64.zip does not match"},
		"a zip not listed": {change: func(t *testing.T, dist, _ string) {
			write(t, filepath.Join(dist, "p_1.0.0_windows_386.zip"), zipOf(t, "LICENSE", "p_v1.0.0.exe"))
		}, want: "want the zips and the manifest"},
		"a zip without the license": {change: func(t *testing.T, dist, _ string) {
			write(t, filepath.Join(dist, "p_1.0.1_linux_arm64.zip"), zipOf(t, "p_v1.0.1"))
		}, want: "want LICENSE and p_v1.0.1"},
		"a zip with another version's binary": {change: func(t *testing.T, dist, _ string) {
			write(t, filepath.Join(dist, "p_1.0.1_linux_arm64.zip"), zipOf(t, "LICENSE", "p_v1.0.0"))
		}, want: "want LICENSE and p_v1.0.1"},
		"a Windows zip without .exe": {change: func(t *testing.T, dist, _ string) {
			write(t, filepath.Join(dist, "p_1.0.1_windows_amd64.zip"), zipOf(t, "LICENSE", "p_v1.0.1"))
		}, want: "want LICENSE and p_v1.0.1.exe"},
		"another manifest": {change: func(t *testing.T, _, manifest string) { write(t, manifest, "{}") }, want: "manifest.json does not match"},
		"another key's signature": {change: func(t *testing.T, dist, _ string) {
			sign(t, filepath.Join(dist, "p_1.0.0_SHA256SUMS"))
		}, want: "terraform init would refuse the release"},
	} {
		t.Run(name, func(t *testing.T) {
			dist, key, manifest, _ := release(t, c.extra)
			if c.change != nil {
				c.change(t, dist, manifest)
			}
			if _, err := verify(dist, key, manifest); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error with %q", err, c.want)
			}
		})
	}
}
