package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// A run of two packages: one pass, one skip with a reason, one failure with its output, and a
// package that failed to build.
const stream = `{"Action":"run","Package":"p","Test":"TestPass"}
{"Action":"pass","Package":"p","Test":"TestPass","Elapsed":0.1}
{"Action":"run","Package":"p","Test":"TestSkip"}
{"Action":"output","Package":"p","Test":"TestSkip","Output":"=== RUN   TestSkip\n"}
{"Action":"output","Package":"p","Test":"TestSkip","Output":"    p_test.go:12: valkey-server not found\n"}
{"Action":"output","Package":"p","Test":"TestSkip","Output":"--- SKIP: TestSkip (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestSkip"}
{"Action":"run","Package":"p","Test":"TestFail"}
{"Action":"output","Package":"p","Test":"TestFail","Output":"    p_test.go:20: want 1, got 2\n"}
{"Action":"fail","Package":"p","Test":"TestFail","Elapsed":0.2}
{"Action":"fail","Package":"p","Elapsed":0.3}
{"Action":"build-output","Package":"q","Output":"q.go:3:1: syntax error\n"}
{"Action":"build-fail","Package":"q"}
`

func TestRead_CountsEachOutcomeAndKeepsReasons(t *testing.T) {
	var out, log bytes.Buffer
	r := read(strings.NewReader(stream), &log, &out)
	if r.passed != 1 || r.failed != 1 || len(r.skipped) != 1 {
		t.Fatalf("passed %d failed %d skip reasons %v", r.passed, r.failed, r.skipped)
	}
	if got := r.skipped["valkey-server not found\n"]; len(got) != 1 || got[0] != "TestSkip" {
		t.Errorf("skip reasons = %q, want TestSkip under its message without the file:line prefix", r.skipped)
	}
	for _, want := range []string{"--- FAIL: TestFail", "want 1, got 2", "FAIL  p", "syntax error"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("printed output lacks %q:\n%s", want, out.String())
		}
	}
	if len(r.badPackages) != 2 {
		t.Errorf("packages failed outside tests = %q, want p (its failing test) and q (build)", r.badPackages)
	}
	if !strings.Contains(log.String(), "valkey-server not found") {
		t.Error("the log lacks the test output")
	}
}

func TestSummary_OneLineThenEachReason(t *testing.T) {
	r := read(strings.NewReader(stream), io.Discard, io.Discard)
	got := r.summary("Terraform 1.5.7")
	if !strings.HasPrefix(got, "Terraform 1.5.7: 1 passed, 1 skipped, 1 failed") {
		t.Errorf("summary starts %q", got)
	}
	if !strings.Contains(got, "skipped 1: valkey-server not found\n    TestSkip\n") {
		t.Errorf("summary does not list the skip with its reason:\n%s", got)
	}
}

func TestRead_PlainLinesAreTrouble(t *testing.T) {
	r := read(strings.NewReader("# vet: something broke\n"), io.Discard, io.Discard)
	if r.plain != 1 {
		t.Errorf("plain = %d; a line that is not an event must count against the run", r.plain)
	}
}

func TestSummary_LongSkipListsAreCut(t *testing.T) {
	r := &run{skipped: map[string][]string{"no TF_ACC": {"T1", "T2", "T3", "T4", "T5", "T6", "T7", "T8"}}}
	got := r.summary("unit")
	if !strings.Contains(got, "skipped 8: no TF_ACC\n    T1 T2 T3 T4 T5 T6 and 2 more\n") {
		t.Errorf("summary:\n%s", got)
	}
}
