// Command checkworkflows is the second half of make workflows, after actionlint: what only this
// repository knows about .github/workflows/*.yml. Every run: step is one line (a make target or
// a script); every make target a workflow runs (in a run: line, or as the TARGET of an env: of
// the workflow, a job or a step) is one `make -n TARGET` accepts in the repository root; every
// scripts/ file a run: line names is executable; every uses: is pinned to a full commit SHA with
// its version in a comment; and test.yml's jobs together run every step of make ci (CI_STEPS in
// the GNUmakefile). Anchors and aliases are followed, so steps shared with *name are checked.
//
// Usage, from the repository root: go run ./tools/checkworkflows
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

const testWorkflow = ".github/workflows/test.yml"

var (
	makeTarget = regexp.MustCompile(`\bmake ([a-z][a-z0-9-]*)`)
	script     = regexp.MustCompile(`\bscripts/[A-Za-z0-9_.-]+`)
	pinned     = regexp.MustCompile(`^[^@\s]+@[0-9a-f]{40}$`)
	version    = regexp.MustCompile(`^# v[0-9][0-9.]*$`)
	ciSteps    = regexp.MustCompile(`(?m)^CI_STEPS\s*:?=[ \t]*(.*)$`)
)

type checker struct {
	root     string
	problems []string
	reported map[string]bool // a step shared through an alias is met once per job
	made     map[string]bool // make -n TARGET succeeded
}

func (c *checker) problem(format string, args ...any) {
	if p := fmt.Sprintf(format, args...); !c.reported[p] {
		c.reported[p] = true
		c.problems = append(c.problems, p)
	}
}

// check returns the problems of the workflows of the repository at root, one line each saying
// what to do, and the steps of make ci that the GNUmakefile names.
func check(root string) (problems, steps []string) {
	c := &checker{root: root, reported: map[string]bool{}, made: map[string]bool{}}
	files, _ := filepath.Glob(filepath.Join(root, ".github", "workflows", "*.yml"))
	if len(files) == 0 {
		c.problem(".github/workflows has no *.yml workflow")
	}
	covered := map[string]bool{}
	for _, file := range files {
		name := ".github/workflows/" + filepath.Base(file)
		for _, target := range c.workflow(file, name) {
			if name == testWorkflow {
				covered[target] = true
			}
		}
	}
	makefile, err := os.ReadFile(filepath.Join(root, "GNUmakefile"))
	if m := ciSteps.FindSubmatch(makefile); m != nil {
		steps = strings.Fields(string(m[1]))
	}
	switch {
	case err != nil:
		c.problem("cannot read the GNUmakefile (%v)", err)
	case len(steps) == 0:
		c.problem("the GNUmakefile names no CI_STEPS")
	}
	for _, step := range steps {
		if !covered[step] {
			c.problem("no job of %s runs the step '%s' of make ci", testWorkflow, step)
		}
	}
	return c.problems, steps
}

// workflow checks one workflow and returns the make targets it runs.
func (c *checker) workflow(file, name string) []string {
	content, err := os.ReadFile(file)
	var doc yaml.Node
	if err == nil {
		err = yaml.Unmarshal(content, &doc)
	}
	if err != nil || len(doc.Content) == 0 {
		c.problem("%s cannot be read as YAML (%v); fix it as actionlint says", name, err)
		return nil
	}
	var targets []string
	target := func(env *yaml.Node) {
		if t := value(env, "TARGET"); t != nil && t.Kind == yaml.ScalarNode && !strings.Contains(t.Value, "${{") {
			targets = append(targets, t.Value)
		}
	}
	root := resolve(doc.Content[0])
	target(value(root, "env"))
	jobs := value(root, "jobs")
	for _, job := range pairs(jobs) {
		c.uses(name, value(job, "uses"))
		target(value(job, "env"))
		if steps := value(job, "steps"); steps != nil && steps.Kind == yaml.SequenceNode {
			for _, step := range steps.Content {
				step = resolve(step)
				c.uses(name, value(step, "uses"))
				target(value(step, "env"))
				if run := value(step, "run"); run != nil && run.Kind == yaml.ScalarNode {
					targets = append(targets, c.run(name, run)...)
				}
			}
		}
	}
	slices.Sort(targets)
	targets = slices.Compact(targets)
	for _, t := range targets {
		if !c.defined(t) {
			c.problem("%s runs make %s, which the GNUmakefile does not define", name, t)
		}
	}
	return targets
}

// run checks a run: step's command and returns the make targets it calls.
func (c *checker) run(name string, run *yaml.Node) []string {
	if run.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 || strings.Contains(run.Value, "\n") {
		c.problem("%s:%d has a multi-line run: block; call a make target or a script in one line", name, run.Line)
	}
	for _, s := range script.FindAllString(run.Value, -1) {
		if info, err := os.Stat(filepath.Join(c.root, s)); err != nil || !info.Mode().IsRegular() || info.Mode()&0o111 == 0 {
			c.problem("%s runs %s, which is not an executable file", name, s)
		}
	}
	var targets []string
	for _, m := range makeTarget.FindAllStringSubmatch(run.Value, -1) {
		targets = append(targets, m[1])
	}
	return targets
}

// uses checks that an action or reusable workflow is pinned: owner/action@SHA # vX.Y.Z. A
// local one (./path) is the repository's own, at the commit that runs: it must exist.
func (c *checker) uses(name string, uses *yaml.Node) {
	if uses == nil {
		return
	}
	if path, local := strings.CutPrefix(uses.Value, "./"); local && uses.Kind == yaml.ScalarNode {
		if c.localFile(path, path+"/action.yml", path+"/action.yaml") {
			return
		}
		c.problem("%s:%d: 'uses: %s' names no action.yml or workflow in the repository: add it or fix the path", name, uses.Line, uses.Value)
		return
	}
	if uses.Kind != yaml.ScalarNode || !pinned.MatchString(uses.Value) || !version.MatchString(uses.LineComment) {
		c.problem("%s:%d: 'uses: %s' is not pinned to a full commit SHA with its version in a comment (uses: owner/action@SHA # vX.Y.Z)",
			name, uses.Line, strings.TrimSpace(uses.Value+" "+uses.LineComment))
	}
}

// localFile tells whether one of paths is a file of the repository.
func (c *checker) localFile(paths ...string) bool {
	for _, path := range paths {
		if info, err := os.Stat(filepath.Join(c.root, path)); err == nil && !info.IsDir() {
			return true
		}
	}
	return false
}

// defined tells whether make -n accepts target in the repository root: the GNUmakefile defines
// it (or a pattern rule makes it) and can make what it depends on.
func (c *checker) defined(target string) bool {
	if ok, asked := c.made[target]; asked {
		return ok
	}
	cmd := exec.Command("make", "-n", target)
	cmd.Dir = c.root
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		c.problem("cannot run make -n %s (%v); install GNU make", target, err)
	}
	c.made[target] = err == nil
	return err == nil
}

// resolve follows aliases (*name) to the node they name.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// value is the value of key in mapping m, or nil.
func value(m *yaml.Node, key string) *yaml.Node {
	m = resolve(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return resolve(m.Content[i+1])
		}
	}
	return nil
}

// pairs are the values of mapping m, in order.
func pairs(m *yaml.Node) []*yaml.Node {
	var out []*yaml.Node
	if m = resolve(m); m != nil && m.Kind == yaml.MappingNode {
		for i := 1; i < len(m.Content); i += 2 {
			out = append(out, resolve(m.Content[i]))
		}
	}
	return out
}

func main() {
	problems, steps := check(".")
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, "checkworkflows:", p)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
	fmt.Printf("workflows: the workflows call only targets and scripts that exist, pin every action, and test.yml runs every step of make ci (%s)\n",
		strings.Join(steps, " "))
}
