package main

import (
	"strings"
	"testing"
)

// The proxy's .info of Terraform v1.16.4 has this shape; the pseudo-version format is Go's:
// v0.0.0-yyyymmddhhmmss-<12 hex digits of the commit>, the time in UTC.
func TestPseudoVersion_FromTheReleaseCommitAndItsTimeInUTC(t *testing.T) {
	info := []byte(`{"Version":"v1.16.4","Time":"2026-10-01T14:05:09+02:00","Origin":{"VCS":"git","URL":"https://github.com/hashicorp/terraform","Hash":"0123456789abcdef0123456789abcdef01234567","Ref":"refs/tags/v1.16.4"}}`)
	got, err := pseudoVersion(info)
	if err != nil {
		t.Fatal(err)
	}
	if want := "v0.0.0-20261001120509-0123456789ab"; got != want {
		t.Errorf("pseudo-version %q, want %q", got, want)
	}
}

func TestPseudoVersion_RefusesAnInfoWithoutItsCommit(t *testing.T) {
	if v, err := pseudoVersion([]byte(`{"Version":"v1.16.4","Time":"2026-10-01T12:05:09Z"}`)); err == nil {
		t.Errorf("pseudo-version %q from an .info with no Origin.Hash, want an error", v)
	}
}

func TestRewriteNested_PointsInternalReplacesAtTheirModules(t *testing.T) {
	gomod := `module github.com/hashicorp/terraform

go 1.24

require github.com/hashicorp/terraform/internal/backend/remote-state/s3 v0.0.0-00010101000000-000000000000

replace github.com/hashicorp/terraform/internal/backend/remote-state/s3 => ./internal/backend/remote-state/s3

replace github.com/hashicorp/terraform/internal/legacy => ./internal/legacy

replace github.com/example/forked v1.2.3 => github.com/example/fork v1.2.4

replace github.com/example/local => ../local
`
	pseudo := "v0.0.0-20261001120509-0123456789ab"
	out, nested, err := rewriteNested([]byte(gomod), func() (string, error) { return pseudo, nil })
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	for _, want := range []string{
		"replace github.com/hashicorp/terraform/internal/backend/remote-state/s3 => github.com/hashicorp/terraform/internal/backend/remote-state/s3 " + pseudo,
		"replace github.com/hashicorp/terraform/internal/legacy => github.com/hashicorp/terraform/internal/legacy " + pseudo,
		"replace github.com/example/forked v1.2.3 => github.com/example/fork v1.2.4", // not a nested module: kept
		"replace github.com/example/local => ../local",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("go.mod lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "=> ./internal/") {
		t.Errorf("go.mod still points a replace at ./internal/:\n%s", text)
	}
	want := []string{
		"github.com/hashicorp/terraform/internal/backend/remote-state/s3@" + pseudo,
		"github.com/hashicorp/terraform/internal/legacy@" + pseudo,
	}
	if strings.Join(nested, " ") != strings.Join(want, " ") {
		t.Errorf("modules to download %q, want %q", nested, want)
	}
}

// Terraform before 1.6 and OpenTofu have no nested modules, and their .info may name no commit.
func TestRewriteNested_LeavesAModuleWithoutNestedReplacesAsItIs(t *testing.T) {
	gomod := "module github.com/opentofu/opentofu\n\ngo 1.24\n\nreplace github.com/example/forked v1.2.3 => github.com/example/fork v1.2.4\n"
	out, nested, err := rewriteNested([]byte(gomod), func() (string, error) {
		t.Error("asked for the release commit's pseudo-version, with no nested module to point at it")
		return "", nil
	})
	if err != nil || len(nested) != 0 || !strings.Contains(string(out), "replace github.com/example/forked v1.2.3 => github.com/example/fork v1.2.4") {
		t.Errorf("rewriteNested = %q, %q, %v; want the go.mod unchanged and nothing to download", out, nested, err)
	}
}
