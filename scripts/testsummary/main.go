// Command testsummary reads `go test -json` on stdin and prints what a reader of `make test`,
// `make testacc` and `make ci` needs: each failed test with its output, each package result, and one summary line for the
// run (passed, skipped with each reason, failed). The whole output is kept in a log file.
//
//	go test -json ./... | go run ./scripts/testsummary -name "Terraform 1.5.7" -log build/test-terraform.log -summary build/summary.txt
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

// run is what one `go test -json` stream reported.
type run struct {
	passed, failed int
	skipped        map[string][]string // reason -> tests
	output         map[string][]string // package/test -> output lines, kept until the test ends
	badPackages    []string            // packages that failed outside any test (build errors, TestMain)
	plain          int                 // lines that were not test2json events
}

func main() {
	name := flag.String("name", "tests", "what this run is, for the summary line")
	logPath := flag.String("log", "", "file that receives the whole output")
	summaryPath := flag.String("summary", "", "file the summary is appended to")
	flag.Parse()

	var log io.Writer
	if *logPath == "" {
		log = io.Discard
	} else {
		f, err := os.Create(*logPath)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testsummary:", err)
			os.Exit(2)
		}
		defer func() { _ = f.Close() }()
		log = f
	}
	r := read(os.Stdin, log, os.Stdout)
	summary := r.summary(*name)
	fmt.Print(summary)
	if *summaryPath != "" {
		f, err := os.OpenFile(*summaryPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			_, err = f.WriteString(summary)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "testsummary:", err)
			os.Exit(2)
		}
	}
	if r.failed > 0 || len(r.badPackages) > 0 || r.plain > 0 {
		if *logPath != "" {
			fmt.Printf("  full output: %s\n", *logPath)
		}
		os.Exit(1)
	}
}

// read consumes the event stream, copying every output line to log and printing failures and
// package results to out as they happen.
func read(in io.Reader, log, out io.Writer) *run {
	r := &run{skipped: map[string][]string{}, output: map[string][]string{}}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			// Not an event: `go vet` or the toolchain speaking. Show it; it means trouble.
			r.plain++
			_, _ = fmt.Fprintf(log, "%s\n", line)
			_, _ = fmt.Fprintf(out, "%s\n", line)
			continue
		}
		if e.Output != "" {
			_, _ = io.WriteString(log, e.Output)
		}
		key := e.Package + " " + e.Test
		switch {
		case e.Action == "output" || e.Action == "build-output":
			r.output[key] = append(r.output[key], e.Output)
		case e.Test == "" && (e.Action == "pass" || e.Action == "skip"):
			_, _ = fmt.Fprintf(out, "ok    %s (%.1fs)\n", e.Package, e.Elapsed)
			delete(r.output, key)
		case e.Test == "" && e.Action == "fail":
			_, _ = fmt.Fprintf(out, "FAIL  %s (%.1fs)\n", e.Package, e.Elapsed)
			r.badPackages = append(r.badPackages, e.Package)
			r.printOutput(out, key, e.Package+" (outside any test)")
		case e.Action == "build-fail":
			r.badPackages = append(r.badPackages, e.Package)
			r.printOutput(out, key, e.Package+" (build)")
		case e.Action == "pass":
			r.passed++
			delete(r.output, key)
		case e.Action == "skip":
			reason := skipReason(r.output[key])
			r.skipped[reason] = append(r.skipped[reason], e.Test)
			delete(r.output, key)
		case e.Action == "fail":
			r.failed++
			_, _ = fmt.Fprintf(out, "--- FAIL: %s (%s, %.1fs)\n", e.Test, e.Package, e.Elapsed)
			r.printOutput(out, key, "")
		}
	}
	return r
}

func (r *run) printOutput(out io.Writer, key, header string) {
	if header != "" && len(r.output[key]) > 0 {
		_, _ = fmt.Fprintf(out, "--- output of %s:\n", header)
	}
	for _, l := range r.output[key] {
		_, _ = io.WriteString(out, "    "+strings.TrimLeft(l, " "))
	}
	delete(r.output, key)
}

// fileLine is the "name_test.go:12: " prefix testing puts before a message.
var fileLine = regexp.MustCompile(`^\s*[\w.-]+\.go:\d+: `)

// skipReason is the last message a skipped test printed, without its file:line prefix.
func skipReason(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- ") {
			continue
		}
		return fileLine.ReplaceAllString(lines[i], "")
	}
	return "(no reason given)"
}

// maxNames is how many tests a skip reason lists by name; the log has them all.
const maxNames = 6

// summary is the run's summary line, then one line per skip reason with the tests it covers.
func (r *run) summary(name string) string {
	total := 0
	reasons := make([]string, 0, len(r.skipped))
	for reason, tests := range r.skipped {
		total += len(tests)
		reasons = append(reasons, reason)
	}
	sort.Strings(reasons)
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d passed, %d skipped, %d failed", name, r.passed, total, r.failed)
	if len(r.badPackages) > 0 {
		fmt.Fprintf(&b, ", packages failed outside tests: %s", strings.Join(r.badPackages, " "))
	}
	if r.plain > 0 {
		fmt.Fprintf(&b, ", %d lines of non-test output", r.plain)
	}
	b.WriteString("\n")
	for _, reason := range reasons {
		tests := r.skipped[reason]
		sort.Strings(tests)
		more := ""
		if len(tests) > maxNames {
			more = fmt.Sprintf(" and %d more", len(tests)-maxNames)
			tests = tests[:maxNames]
		}
		fmt.Fprintf(&b, "  skipped %d: %s\n    %s%s\n", len(r.skipped[reason]), strings.TrimSpace(reason), strings.Join(tests, " "), more)
	}
	return b.String()
}
