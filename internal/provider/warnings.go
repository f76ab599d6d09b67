package provider

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
)

// The warnings valkey_stream_group gives reviewers: their summaries, which tools read, and where
// they are attached.

// decision is what a warning about one group says will happen to it, or did: the words of its
// summary after the group's and the stream's names, as in
// `Group "billing" of "orders" Will Replay 12,000 Entries`. Tools sort groups by these words.
// tools/planreview keeps its own copy of them, so that it stays one file anyone can copy, and
// TestPlanReview_SortsEveryWarning runs that tool on every summary made here, so that neither
// side can change alone. docs/guides/ci.md lists them for other tools.
type decision string

const (
	willReplay        decision = "Will Replay"         // then the entries: " 12,000 Entries"
	willSkip          decision = "Will Skip"           // then the entries
	willReplayOrSkip  decision = "Will Replay Or Skip" // then the entries; group_start is not known yet
	willBeAdopted     decision = "Will Be Adopted"     // then the lag: ", Lag 3"
	adoptedNotCreated decision = "Adopted, Not Created"
	startChangeAdopts decision = "Will Not Move: Start Change Adopts It"
	willStay          decision = "Will Stay On Server"
	willStayReplaced  decision = "Will Stay On Server After Its Replacement"
	leftOnServer      decision = "Left On Server"
)

// decisions lists every decision, for the test that holds tools/planreview to them.
var decisions = []decision{
	willReplay, willSkip, willReplayOrSkip, willBeAdopted, adoptedNotCreated,
	startChangeAdopts, willStay, willStayReplaced, leftOnServer,
}

// groupSummary is the summary of a warning about one group: the group and its stream, the
// decision, then its figure as written (" 12,000 Entries", ", Lag 3", or nothing). No two
// groups share a summary, so a reviewer scanning the summaries reads each group's decision.
func groupSummary(stream, name string, d decision, figure string) string {
	return fmt.Sprintf("Group %q of %q %s%s", name, stream, d, figure)
}

// The summaries of the warnings that are about a stream or about the whole plan, once each.
const (
	planCheckSkipped   = "Plan-Time Group Check Skipped" // the server could not be asked
	replayCheckSkipped = "Replay Check Skipped"          // XINFO STREAM was refused
)

// streamCheckSkipped is the summary of a refusal to say what one stream holds (NOPERM for its key).
func streamCheckSkipped(stream string) string {
	return fmt.Sprintf("Plan-Time Group Check Skipped For Stream %q", stream)
}

func streamWillBeCreated(stream string) string {
	return fmt.Sprintf("Stream %q Will Be Created", stream)
}

// warnOnResource adds a warning about the resource being planned or applied, on an attribute
// path of no steps. Terraform and OpenTofu then give it the resource's address and no place in
// the configuration, which matters twice for a warning per group:
//   - no source snippet: to find one, Terraform parses the resource's whole file again and
//     scans it line by line, for every diagnostic, so that a warning per group of a file of N
//     generated blocks costs time in N² (Terraform's snippetFromRange, in its views/json package);
//   - no folding: Terraform and OpenTofu fold only warnings that have a place in the
//     configuration into "(and N more similar warnings elsewhere)".
//
// A warning with no path at all (AddWarning) is placed at the resource block instead, and costs
// as much as one on an attribute. TestCLIStreamGroup_* check the address and the missing place
// of every warning on each CLI of the matrix.
func warnOnResource(diags *diag.Diagnostics, summary, detail string) {
	diags.AddAttributeWarning(path.Empty(), summary, detail)
}
