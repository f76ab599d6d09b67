package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/echomq/terraform-provider-valkey/internal/planwords"
)

// The review is also tested on real plans of every CLI in the matrix, by TestCLIPipeline_* in
// internal/systemtest; these tests pin what those cannot reach: every summary the provider
// writes, missing addresses, and ordering at scale. The summaries are made by internal/planwords,
// as the provider makes them: planwords' TestDecisions_PublishedWords pins their words.

const stream = "emq:{orders}:stream:main"

// diagLine is one diagnostic message of the JSON UI stream; an empty address leaves it out.
func diagLine(severity, summary, detail, address string) string {
	d := map[string]any{"severity": severity, "summary": summary, "detail": detail}
	if address != "" {
		d["address"] = address
	}
	b, _ := json.Marshal(map[string]any{"@level": "warn", "type": "diagnostic", "diagnostic": d})
	return string(b)
}

// changeLine is one planned_change message.
func changeLine(address, action string) string {
	b, _ := json.Marshal(map[string]any{"type": "planned_change", "change": map[string]any{
		"resource": map[string]any{"addr": address, "resource_type": "valkey_stream_group"}, "action": action}})
	return string(b)
}

func addr(name string) string { return fmt.Sprintf("valkey_stream_group.g[%q]", name) }

// summary is a per-group summary as the provider writes it: the group and stream, the decision
// and its figure.
func summary(name string, d planwords.Decision, figure string) string {
	return planwords.GroupSummary(stream, name, d, figure)
}

// row is the label of the review's row for k, as a failure names it.
func row(k kind) string {
	if label, ok := kindLabels[k]; ok {
		return label
	}
	return "(none)"
}

// replayDetail is the detail the provider gives a head group.
func replayDetail(name string, n string) string {
	return fmt.Sprintf("Group %q will be created on stream %q with group_start = \"head\", so it will be handed the %s entries "+
		"already in the stream, from 1-0 to 9-0, and its consumers will process every one of them.", name, stream, n)
}

func mustRead(t *testing.T, lines ...string) *review {
	t.Helper()
	r, err := read(strings.NewReader(strings.Join(lines, "\n") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// rows are the table rows of the review, in order, as "label address entries".
func rows(md string) []string {
	var out []string
	for line := range strings.SplitSeq(md, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| review ") {
			continue
		}
		cells := strings.Split(line, "|") // "", review, resource, plan, group, stream, entries, ""
		out = append(out, strings.Join(strings.Fields(strings.Join([]string{cells[1], cells[2], cells[6]}, " ")), " "))
	}
	return out
}

// TestClassify_TheProvidersSummaries: every per-group summary the provider writes (each names
// its group and stream) sorts into its row, and names in quotes are never read as words.
func TestClassify_TheProvidersSummaries(t *testing.T) {
	figure := planwords.EntriesFigure
	for _, tc := range []struct {
		summary, detail string
		want            kind
		entries         int64 // -1: none
	}{
		{summary("billing", planwords.WillReplay, figure(12000000)), replayDetail("billing", "12,000,000"), kindReplay, 12000000},
		{summary("billing", planwords.WillReplay, figure(1)), "", kindReplay, 1},
		{summary("billing", planwords.WillSkip, figure(3)), "", kindSkip, 3},
		{summary("billing", planwords.WillReplayOrSkip, figure(7)), "", kindReplayOrSkip, 7},
		{summary("billing", planwords.WillBeAdopted, planwords.LagFigure("3")), "It is at last-delivered-id 5-0 with lag 3.", kindAdopt, -1},
		{summary("billing", planwords.WillBeAdopted, planwords.LagFigure(planwords.LagUnknown)), "", kindAdopt, -1},
		{summary("billing", planwords.AdoptedNotCreated, ""), "", kindAdopt, -1},
		{summary("billing", planwords.WillStay, ""), "", kindStays, -1},
		{summary("billing", planwords.LeftOnServer, ""), "", kindStays, -1},
		{summary("billing", planwords.WillStayReplaced, ""), "", kindStays, -1},
		{summary("billing", planwords.StartChangeAdopts, ""), "", kindStartChange, -1},
		{planwords.StreamWillBeCreated(stream), "", kindStreamCreated, -1},
		// Names in quotes are not words: a stream called "replay-skip" adopted is an adoption.
		{planwords.GroupSummary("replay:2,000 entries", "skip", planwords.WillBeAdopted, planwords.LagFigure("0")), "", kindAdopt, -1},
		{"Something New", "", kindOther, -1},
	} {
		r := mustRead(t, changeLine(addr("billing"), "create"), diagLine("warning", tc.summary, tc.detail, addr("billing")))
		g := r.groups[addr("billing")]
		if g.kind != tc.want || g.entries != tc.entries {
			t.Errorf("%q sorts into row %q with entries %d, want row %q and entries %d", tc.summary, row(g.kind), g.entries, row(tc.want), tc.entries)
		}
	}
	r := mustRead(t, diagLine("error", "Consumer Group Cannot Be Created", "holds a string", addr("billing")))
	if g := r.groups[addr("billing")]; g.kind != kindError {
		t.Errorf("an error on a group sorts into row %q", row(g.kind))
	}
}

func TestMarkdown_WhatAReviewerMustSeeComesFirst(t *testing.T) {
	md := mustRead(t,
		changeLine(addr("quiet"), "create"),
		changeLine(addr("small"), "create"), diagLine("warning", summary("small", planwords.WillReplay, planwords.EntriesFigure(3)), replayDetail("small", "3"), addr("small")),
		changeLine(addr("skipper"), "create"), diagLine("warning", summary("skipper", planwords.WillSkip, planwords.EntriesFigure(40)), "the 40 entries already", addr("skipper")),
		changeLine(addr("adopted"), "create"), diagLine("warning", summary("adopted", planwords.WillBeAdopted, planwords.LagFigure("0")), "lag 0", addr("adopted")),
		changeLine(addr("big"), "create"), diagLine("warning", summary("big", planwords.WillReplay, planwords.EntriesFigure(12000000)), replayDetail("big", "12,000,000"), addr("big")),
		changeLine(addr("unknown"), "create"), diagLine("warning", summary("unknown", planwords.WillReplayOrSkip, planwords.EntriesFigure(5)), "the 5 entries", addr("unknown")),
		changeLine(addr("gone"), "delete"), diagLine("warning", summary("gone", planwords.WillStay, ""), "", addr("gone")),
		diagLine("error", "Consumer Group Cannot Be Created", "Key \"k\" holds a string.", addr("broken")),
	).markdown()

	want := []string{
		"**error** `" + addr("broken") + "`",
		"**replays** `" + addr("big") + "` 12,000,000",
		"**replays** `" + addr("small") + "` 3",
		"**replays or skips** `" + addr("unknown") + "` 5",
		"**skips** `" + addr("skipper") + "` 40",
		"adopts `" + addr("adopted") + "`",
		"stays on server `" + addr("gone") + "`",
		"`" + addr("quiet") + "`", // collapsed: nothing to say
	}
	if got := rows(md); !slices.Equal(got, want) {
		t.Errorf("rows:\n%s\nwant:\n%s\n\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), md)
	}
	head := strings.SplitN(md, "\n", 4)[2]
	for _, part := range []string{"**1 error**", "**2 groups will replay 12,000,003 entries in all**", "**1 group will replay or skip**",
		"**1 group will skip 40 entries in all**", "1 group adopted", "7 planned changes"} {
		if !strings.Contains(head, part) {
			t.Errorf("headline %q lacks %q", head, part)
		}
	}
	if !strings.Contains(md, `group_start = "head", so it will be handed the 12,000,000 entries`) {
		t.Error("the provider's own words are not quoted in full")
	}
	if i, j := strings.Index(md, "<details><summary>1 more (nothing to replay, skip or adopt)"), strings.Index(md, addr("quiet")); i < 0 || j < i {
		t.Errorf("the quiet group is not collapsed:\n%s", md)
	}
}

func TestMarkdown_CheckSkippedIsQuotedFirstAndNothingReadsAsChecked(t *testing.T) {
	cause := "Could not talk to Valkey at 127.0.0.1:6379 while working on group \"a\": connection refused."
	md := mustRead(t,
		changeLine(addr("a"), "create"), changeLine(addr("b"), "create"), changeLine(addr("old"), "delete"),
		diagLine("warning", planwords.PlanCheckSkipped, "The provider could not ask the server.\n\n"+cause, addr("a")),
		diagLine("warning", summary("old", planwords.WillStay, ""), "", addr("old")),
	).markdown()
	if !strings.Contains(strings.SplitN(md, "\n", 4)[2], "**plan-time check skipped**") {
		t.Errorf("the headline does not say the check was skipped:\n%s", md)
	}
	banner := strings.Index(md, "**warning: "+planwords.PlanCheckSkipped+"** (`"+addr("a")+"`)")
	if banner < 0 || !strings.Contains(md, "> "+cause) || strings.Index(md, "|") < banner {
		t.Errorf("the skipped check and its cause do not come before the table:\n%s", md)
	}
	want := []string{"stays on server `" + addr("old") + "`", "not checked `" + addr("a") + "`", "not checked `" + addr("b") + "`"}
	if got := rows(md); !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}
}

func TestRead_AddressFromTheBlockWhenTheCLIGivesNone(t *testing.T) {
	line, err := json.Marshal(map[string]any{"type": "diagnostic", "diagnostic": map[string]any{
		"severity": "warning", "summary": planwords.GroupSummary("s", "billing", planwords.WillSkip, planwords.EntriesFigure(2)),
		"detail": "the 2 entries", "snippet": map[string]any{"context": `resource "valkey_stream_group" "billing"`, "code": "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	r := mustRead(t, string(line), diagLine("warning", "Provider development overrides are in effect", "", ""),
		diagLine("error", "Invalid Valkey URL", "The URL has no host.", ""))
	if g, ok := r.groups["valkey_stream_group.billing"]; !ok || g.kind != kindSkip || g.entries != 2 {
		t.Errorf("groups %v: want valkey_stream_group.billing from the snippet's block", r.groups)
	}
	md := r.markdown()
	if !strings.Contains(md, "- error: **Invalid Valkey URL**: The URL has no host.") || !strings.HasPrefix(strings.SplitN(md, "\n", 4)[2], "**1 error**") {
		t.Errorf("an error without an address is not listed before the table:\n%s", md)
	}
	if strings.Contains(md, "- warning") {
		t.Errorf("a warning without an address is listed with the errors:\n%s", md)
	}
}

func TestMarkdown_FiftyGroupsStayReadable(t *testing.T) {
	lines := []string{}
	for i := range 50 {
		name := fmt.Sprintf("svc%02d", i)
		lines = append(lines, changeLine(addr(name), "create"))
		if i%10 == 0 { // five replays of different sizes, the other 45 quiet
			lines = append(lines, diagLine("warning", summary(name, planwords.WillReplay, planwords.EntriesFigure(int64(i*1000))), replayDetail(name, fmt.Sprint(i*1000)), addr(name)))
		}
	}
	md := mustRead(t, lines...).markdown()
	got := rows(md)
	if len(got) != 50 || !strings.HasPrefix(got[0], "**replays** `"+addr("svc40")+"` 40,000") || !strings.HasPrefix(got[4], "**replays** `"+addr("svc00")+"` 0") {
		t.Errorf("rows start %q", got[:6])
	}
	// The five replays come before the fold; the 45 quiet groups are inside it.
	fold := strings.Index(md, "<details><summary>45 more")
	if fold < 0 || strings.Index(md, addr("svc01")) < fold || strings.LastIndex(md[:fold], "**replays**") < 0 {
		t.Errorf("the quiet groups are not folded below the replays:\n%s", md)
	}
	if n := strings.Count(md[:fold], "\n"); n > 12 {
		t.Errorf("%d lines before the fold, want the headline and five rows", n)
	}
}

func TestRead_NoMessagesIsNoReview(t *testing.T) {
	r := mustRead(t, "Error: Failed to load plugin schemas", "")
	if r.messages != 0 {
		t.Errorf("%d messages read from human output", r.messages)
	}
}
