package main

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const sha = "9c091bb21b7c1c1d1991bb908d89e4e9dddfe3e0"

// A repository that passes: test.yml runs both steps of make ci, one in a run: line and one as
// a job's TARGET, and shares its checkout step through an alias; nightly.yml runs a target that
// is not a step of make ci, as its job's TARGET.
var clean = map[string]string{
	"GNUmakefile": `CI_STEPS := gates testacc
deps gates testacc chaos lint:
	@true
`,
	"scripts/lint.sh": "#!/bin/sh\n",
	".github/workflows/test.yml": `name: Tests
on: push
jobs:
  gates:
    runs-on: ubuntu-24.04
    steps:
      - &checkout
        uses: actions/checkout@` + sha + ` # v7.0.0
      - run: make gates
      - run: scripts/lint.sh
  acceptance:
    runs-on: ubuntu-24.04
    env:
      TARGET: testacc
    steps:
      - *checkout
      - run: make deps
      - run: make "$TARGET"
`,
	".github/workflows/nightly.yml": `name: Nightly
on: push
jobs:
  chaos:
    runs-on: ubuntu-24.04
    env:
      TARGET: chaos
    steps:
      - uses: "actions/checkout@` + sha + `" # v7.0.0
      - run: make "$TARGET" STEPS=100
`,
}

// repo writes the clean repository with edit applied to it: each file's content replaced by
// old -> new, a file of edit that clean lacks added whole. It returns the repository's root.
func repo(t *testing.T, edit map[string][2]string) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{}
	for name, content := range clean {
		files[name] = content
	}
	for name, e := range edit {
		content, ok := files[name]
		if !ok {
			files[name] = e[1]
			continue
		}
		if !strings.Contains(content, e[0]) {
			t.Fatalf("%s has no %q to replace", name, e[0])
		}
		files[name] = strings.Replace(content, e[0], e[1], 1)
	}
	for name, content := range files {
		file := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(name, "scripts/") {
			mode = 0o755
		}
		if err := os.WriteFile(file, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// problemOnly checks that the repository has exactly one problem, and that it names want.
func problemOnly(t *testing.T, root string, want ...string) {
	t.Helper()
	problems, _ := check(root)
	if len(problems) != 1 {
		t.Fatalf("got %d problems %q, want one naming %q", len(problems), problems, want)
	}
	for _, w := range want {
		if !strings.Contains(problems[0], w) {
			t.Errorf("problem %q does not name %q", problems[0], w)
		}
	}
}

func TestCheck_CleanRepositoryPasses(t *testing.T) {
	problems, steps := check(repo(t, nil))
	if len(problems) != 0 {
		t.Errorf("problems %q, want none", problems)
	}
	if want := []string{"gates", "testacc"}; !slices.Equal(steps, want) {
		t.Errorf("steps %q, want %q", steps, want)
	}
}

func TestCheck_MultiLineRunFails(t *testing.T) {
	for name, run := range map[string]string{
		"literal":        "run: |\n          make gates\n          make deps",
		"folded":         "run: >\n          make gates",
		"one-line |-":    "run: |-\n          make gates",
		"quoted, \\n in": `run: "make gates\nmake deps"`,
	} {
		t.Run(name, func(t *testing.T) {
			root := repo(t, map[string][2]string{".github/workflows/test.yml": {"run: make gates", run}})
			problemOnly(t, root, ".github/workflows/test.yml:9 has a multi-line run: block; call a make target or a script in one line")
		})
	}
}

func TestCheck_RunOfUndefinedMakeTargetFails(t *testing.T) {
	root := repo(t, map[string][2]string{".github/workflows/test.yml": {"make deps", "make deploy"}})
	problemOnly(t, root, ".github/workflows/test.yml runs make deploy, which the GNUmakefile does not define")
}

func TestCheck_JobTargetUndefinedInGNUmakefileFails(t *testing.T) {
	root := repo(t, map[string][2]string{".github/workflows/nightly.yml": {"TARGET: chaos", "TARGET: chaos-nightly"}})
	problemOnly(t, root, ".github/workflows/nightly.yml runs make chaos-nightly, which the GNUmakefile does not define")
}

func TestCheck_ScriptThatIsNotExecutableFails(t *testing.T) {
	t.Run("not executable", func(t *testing.T) {
		root := repo(t, nil)
		if err := os.Chmod(filepath.Join(root, "scripts/lint.sh"), 0o644); err != nil {
			t.Fatal(err)
		}
		problemOnly(t, root, ".github/workflows/test.yml runs scripts/lint.sh, which is not an executable file")
	})
	t.Run("missing", func(t *testing.T) {
		root := repo(t, map[string][2]string{".github/workflows/test.yml": {"scripts/lint.sh", "scripts/lint"}})
		problemOnly(t, root, ".github/workflows/test.yml runs scripts/lint, which is not an executable file")
	})
}

func TestCheck_ActionNotPinnedToShaWithVersionCommentFails(t *testing.T) {
	for name, uses := range map[string]string{
		"tag":               "actions/checkout@v7 # v7.0.0",
		"short SHA":         "actions/checkout@" + sha[:12] + " # v7.0.0",
		"no comment":        "actions/checkout@" + sha,
		"comment no vX.Y.Z": "actions/checkout@" + sha + " # the latest",
	} {
		t.Run(name, func(t *testing.T) {
			old := "actions/checkout@" + sha + " # v7.0.0"
			root := repo(t, map[string][2]string{".github/workflows/test.yml": {old, uses}})
			problemOnly(t, root, ".github/workflows/test.yml:8: 'uses: "+uses+"' is not pinned to a full commit SHA with its version in a comment")
		})
	}
	t.Run("reusable workflow of a job", func(t *testing.T) {
		root := repo(t, map[string][2]string{".github/workflows/nightly.yml": {"jobs:\n", "jobs:\n  lint:\n    uses: o/r/.github/workflows/l.yml@main\n"}})
		problemOnly(t, root, ".github/workflows/nightly.yml:5: 'uses: o/r/.github/workflows/l.yml@main' is not pinned")
	})
}

// A local action (./path) is the repository's own, at the commit that runs: not pinned, but it
// must exist, as an action's folder or a reusable workflow.
func TestCheck_LocalActionMustExist(t *testing.T) {
	step := map[string][2]string{".github/workflows/test.yml": {"      - run: make gates\n", "      - uses: ./.github/actions/setup\n      - run: make gates\n"}}
	t.Run("exists", func(t *testing.T) {
		for _, file := range []string{".github/actions/setup/action.yml", ".github/actions/setup/action.yaml"} {
			edit := map[string][2]string{file: {"", "runs:\n  using: composite\n  steps: []\n"}}
			maps.Copy(edit, step)
			if problems, _ := check(repo(t, edit)); len(problems) != 0 {
				t.Errorf("with %s: problems %q, want none", file, problems)
			}
		}
		root := repo(t, map[string][2]string{".github/workflows/nightly.yml": {"jobs:\n", "jobs:\n  lint:\n    uses: ./.github/workflows/test.yml\n"}})
		if problems, _ := check(root); len(problems) != 0 {
			t.Errorf("a job using a workflow of the repository: problems %q, want none", problems)
		}
	})
	t.Run("missing", func(t *testing.T) {
		problemOnly(t, repo(t, step), ".github/workflows/test.yml:9: 'uses: ./.github/actions/setup' names no action.yml or workflow in the repository")
	})
	t.Run("folder without action.yml", func(t *testing.T) {
		edit := map[string][2]string{".github/actions/setup/README.md": {"", "no action here\n"}}
		maps.Copy(edit, step)
		problemOnly(t, repo(t, edit), "'uses: ./.github/actions/setup' names no action.yml")
	})
}

func TestCheck_StepOfMakeCINotRunByTestYmlFails(t *testing.T) {
	// nightly.yml runs chaos, but only test.yml's jobs count.
	root := repo(t, map[string][2]string{"GNUmakefile": {"CI_STEPS := gates testacc", "CI_STEPS := gates testacc chaos"}})
	problemOnly(t, root, "no job of .github/workflows/test.yml runs the step 'chaos' of make ci")
}

func TestCheck_GNUmakefileWithoutCIStepsFails(t *testing.T) {
	root := repo(t, map[string][2]string{"GNUmakefile": {"CI_STEPS := gates testacc\n", ""}})
	problemOnly(t, root, "the GNUmakefile names no CI_STEPS")
}

// The repository's own workflows pass, and cover the steps make ci runs.
func TestCheck_RepositoryPasses(t *testing.T) {
	problems, steps := check("../..")
	if len(problems) != 0 {
		t.Errorf("problems:\n%s", strings.Join(problems, "\n"))
	}
	if !slices.Contains(steps, "gates") || !slices.Contains(steps, "perfgate") {
		t.Errorf("steps %q, want make ci's, gates to perfgate", steps)
	}
}
