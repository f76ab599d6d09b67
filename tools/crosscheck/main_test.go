package main

import (
	"os"
	"slices"
	"testing"
)

func TestPlatforms_OnePerSystemPrefers386(t *testing.T) {
	config := []byte(`
builds:
  - goos: [linux, darwin, windows]
    goarch: [amd64, arm64, "386"]
    ignore:
      - goos: darwin
        goarch: "386"
      - goos: windows
        goarch: amd64
`)
	got, err := platforms(config, false)
	if want := []string{"linux/386", "darwin/amd64", "windows/386"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("one per system: got %v, %v; want %v", got, err, want)
	}
	got, err = platforms(config, true)
	want := []string{"linux/amd64", "linux/arm64", "linux/386", "darwin/amd64", "darwin/arm64", "windows/arm64", "windows/386"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("all: got %v, %v; want %v", got, err, want)
	}
	if _, err := platforms([]byte("builds: [{binary: x}]\n"), false); err == nil {
		t.Error("a config without goos and goarch gave platforms, want an error")
	}
}

// The release's own config gives what TESTING.md says the gate compiles.
func TestPlatforms_Release(t *testing.T) {
	config, err := os.ReadFile("../../.goreleaser.yml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := platforms(config, false)
	if want := []string{"linux/386", "darwin/amd64", "windows/386", "freebsd/386"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("one per system: got %v, %v; want %v", got, err, want)
	}
	if got, err := platforms(config, true); err != nil || len(got) != 13 {
		t.Errorf("all: got %d platforms (%v, %v), want 13", len(got), got, err)
	}
}
