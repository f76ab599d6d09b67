// Command crosscheck is make crosscheck: on release platforms of .goreleaser.yml (its goos x
// goarch, less its ignore pairs) the provider builds, every package vets with its tests, the
// test binaries link, and bench/ vets, so that what cannot run here (Windows' Winsock errors,
// macOS' and FreeBSD's process start) compiles here. Each platform compiles every dependency
// again (about 2 minutes of CPU, cold), so by default it takes one per system: its 386 build
// where it has one (32-bit ints), else its first.
//
// Usage, from the repository root: go run ./tools/crosscheck [all | GOOS/GOARCH...]
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

type goreleaser struct {
	Builds []struct {
		Goos   []string `yaml:"goos"`
		Goarch []string `yaml:"goarch"`
		Ignore []struct {
			Goos   string `yaml:"goos"`
			Goarch string `yaml:"goarch"`
		} `yaml:"ignore"`
	} `yaml:"builds"`
}

// platforms are the GOOS/GOARCH pairs of the config's builds: all of them, or one per system.
func platforms(config []byte, all bool) ([]string, error) {
	var g goreleaser
	if err := yaml.Unmarshal(config, &g); err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for _, b := range g.Builds {
		ignored := map[string]bool{}
		for _, i := range b.Ignore {
			ignored[i.Goos+"/"+i.Goarch] = true
		}
		for _, goos := range b.Goos {
			pick := ""
			for _, goarch := range b.Goarch {
				p := goos + "/" + goarch
				switch {
				case ignored[p] || seen[p]:
				case all:
					out, seen[p] = append(out, p), true
				case pick == "" || goarch == "386":
					pick = p
				}
			}
			if pick != "" {
				out, seen[pick] = append(out, pick), true
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("names no goos and goarch")
	}
	return out, nil
}

func main() {
	list := os.Args[1:]
	if len(list) == 0 || len(list) == 1 && list[0] == "all" {
		config, err := os.ReadFile(".goreleaser.yml")
		if err == nil {
			list, err = platforms(config, len(list) == 1)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "crosscheck: .goreleaser.yml: %v\n", err)
			os.Exit(1)
		}
	}
	out, err := os.MkdirTemp("", "crosscheck-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "crosscheck:", err)
		os.Exit(1)
	}
	defer os.RemoveAll(out)
	var failed []string
	for _, p := range list {
		fmt.Println("crosscheck:", p)
		goos, goarch, _ := strings.Cut(p, "/")
		env := append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
		for _, step := range [][]string{
			{".", "build", "-o", filepath.Join(out, "provider"), "."},
			{".", "vet", "./..."},
			{".", "test", "-c", "-o", out + string(filepath.Separator), "./..."},
			{"bench", "vet", "./..."},
		} {
			cmd := exec.Command("go", step[1:]...)
			cmd.Dir, cmd.Env, cmd.Stderr = step[0], env, os.Stderr
			if step[1] != "test" {
				cmd.Stdout = os.Stdout // go test -c lists packages without tests
			}
			if cmd.Run() != nil {
				failed = append(failed, p)
				break
			}
		}
	}
	if len(failed) > 0 {
		fmt.Fprintln(os.Stderr, "crosscheck: failed on", strings.Join(failed, " "))
		os.Exit(1)
	}
	fmt.Printf("crosscheck: the provider builds, and the tests and the bench compile and vet, on %d platforms: %s\n",
		len(list), strings.Join(list, " "))
}
