package planwords

import "testing"

func TestEntries_CountsReadably(t *testing.T) {
	for n, want := range map[int64]string{1: "1 entry", 2: "2 entries", 999: "999 entries", 1000: "1,000 entries", 12000000: "12,000,000 entries"} {
		if got := Entries(n); got != want {
			t.Errorf("Entries(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestDecisions_PublishedWords pins every summary word for word, as docs/guides/ci.md publishes
// them. Other programs match on these words (OPA policies, review scripts, alerts on
// `plan -json`), so changing one breaks them: a breaking change that users must read of in
// CHANGELOG.md. Every other test builds the summaries it expects from this package, so this is
// the one test a change of words fails, and the one to edit with it. A decision added to
// Decisions fails here until it has its row.
func TestDecisions_PublishedWords(t *testing.T) {
	const stream, name = "orders", "billing"
	published := map[Decision]bool{}
	for _, w := range []struct {
		name, role string   // the Go names that make it, and what the warning tells a reviewer
		d          Decision // the decision the row publishes, if any
		got, want  string
	}{
		{"GroupSummary", `every group's warning: both names quoted as Go quotes them`, "",
			GroupSummary(`s "x"`, "g", WillReplay, EntriesFigure(3)), `Group "g" of "s \"x\"" Will Replay 3 Entries`},
		{"WillReplay", `plan: a group created at "head" is handed the stream's entries`, WillReplay,
			GroupSummary(stream, name, WillReplay, EntriesFigure(12000)), `Group "billing" of "orders" Will Replay 12,000 Entries`},
		{"WillSkip", `plan: a group created at "new" never sees the stream's entries`, WillSkip,
			GroupSummary(stream, name, WillSkip, EntriesFigure(1)), `Group "billing" of "orders" Will Skip 1 Entry`},
		{"WillReplayOrSkip", "plan: group_start is not known yet", WillReplayOrSkip,
			GroupSummary(stream, name, WillReplayOrSkip, EntriesFigure(1234567)), `Group "billing" of "orders" Will Replay Or Skip 1,234,567 Entries`},
		{"WillBeAdopted", "plan: the group exists, apply will adopt it as it is", WillBeAdopted,
			GroupSummary(stream, name, WillBeAdopted, LagFigure("3")), `Group "billing" of "orders" Will Be Adopted, Lag 3`},
		{"WillBeAdopted with planwords.LagUnknown", "plan: an adoption whose lag the server cannot compute", WillBeAdopted,
			GroupSummary(stream, name, WillBeAdopted, LagFigure(LagUnknown)), `Group "billing" of "orders" Will Be Adopted, Lag Unknown`},
		{"AdoptedNotCreated", "apply: the group existed and was adopted", AdoptedNotCreated,
			GroupSummary(stream, name, AdoptedNotCreated, ""), `Group "billing" of "orders" Adopted, Not Created`},
		{"StartChangeAdopts", "plan: a group_start change whose replacement adopts the group", StartChangeAdopts,
			GroupSummary(stream, name, StartChangeAdopts, ""), `Group "billing" of "orders" Will Not Move: Start Change Adopts It`},
		{"WillStay", "plan: a destroy leaves the group on the server", WillStay,
			GroupSummary(stream, name, WillStay, ""), `Group "billing" of "orders" Will Stay On Server`},
		{"WillStayReplaced", "plan: a new stream or name leaves the old group on the server", WillStayReplaced,
			GroupSummary(stream, name, WillStayReplaced, ""), `Group "billing" of "orders" Will Stay On Server After Its Replacement`},
		{"LeftOnServer", "apply: the resource left state, the group stayed", LeftOnServer,
			GroupSummary(stream, name, LeftOnServer, ""), `Group "billing" of "orders" Left On Server`},
		{"StreamWillBeCreated", "plan: the stream does not exist yet", "",
			StreamWillBeCreated(stream), `Stream "orders" Will Be Created`},
		{"PlanCheckSkipped", "plan: the server could not be asked", "",
			PlanCheckSkipped, "Plan-Time Group Check Skipped"},
		{"StreamCheckSkipped", "plan: the server would not say what one stream holds", "",
			StreamCheckSkipped(stream), `Plan-Time Group Check Skipped For Stream "orders"`},
		{"ReplayCheckSkipped", "plan: XINFO STREAM was refused", "",
			ReplayCheckSkipped, "Replay Check Skipped"},
		{"CheckSkipped", "the words every skipped check's summary holds", "",
			CheckSkipped, "Check Skipped"},
	} {
		published[w.d] = true
		if w.got != w.want {
			t.Errorf("planwords.%s (%s) changed its published words:\n\told: %s\n\tnew: %s", w.name, w.role, w.want, w.got)
		}
	}
	if t.Failed() {
		t.Error("Tools that read plans match on these words (docs/guides/ci.md lists them), so new words break them. " +
			"If the change is meant: put the new words in the rows of this test, in templates/ where they are quoted " +
			"(templates/guides/ci.md.tmpl lists them all), run make generate for docs/, and say it in CHANGELOG.md as a breaking change.")
	}
	for _, d := range Decisions {
		if !published[d] {
			t.Errorf("decision %q has no row here: publish its words in a row and in templates/guides/ci.md.tmpl", d)
		}
	}
}
