// Package planwords holds the words of the summaries valkey_stream_group's warnings give
// reviewers: internal/provider writes them, and tools/planreview sorts a plan's groups by them.
// They are a contract between the two, defined here once; docs/guides/ci.md lists them for
// other tools, and internal/systemtest's TestPlanReview_SortsEveryWarning runs the tool on every
// summary made here. Tests build the summaries they expect from this package, so new words are
// one edit here; only TestDecisions_PublishedWords holds them as published, word for word.
package planwords

import (
	"fmt"
	"strconv"
	"strings"
)

// Decision is what a warning about one group says will happen to it, or did: the words of its
// summary after the group's and the stream's names, as in
// `Group "billing" of "orders" Will Replay 12,000 Entries`.
type Decision string

const (
	WillReplay        Decision = "Will Replay"         // then EntriesFigure: " 12,000 Entries"
	WillSkip          Decision = "Will Skip"           // then EntriesFigure
	WillReplayOrSkip  Decision = "Will Replay Or Skip" // then EntriesFigure; group_start is not known yet
	WillBeAdopted     Decision = "Will Be Adopted"     // then LagFigure: ", Lag 3"
	AdoptedNotCreated Decision = "Adopted, Not Created"
	StartChangeAdopts Decision = "Will Not Move: Start Change Adopts It"
	WillStay          Decision = "Will Stay On Server"
	WillStayReplaced  Decision = "Will Stay On Server After Its Replacement"
	LeftOnServer      Decision = "Left On Server"
)

// Decisions lists every decision.
var Decisions = []Decision{
	WillReplay, WillSkip, WillReplayOrSkip, WillBeAdopted, AdoptedNotCreated,
	StartChangeAdopts, WillStay, WillStayReplaced, LeftOnServer,
}

// GroupSummary is the summary of a warning about one group: the group and its stream, the
// decision, then its figure (EntriesFigure, LagFigure, or nothing). No two groups share a
// summary, so a reviewer scanning the summaries reads each group's decision.
func GroupSummary(stream, name string, d Decision, figure string) string {
	return fmt.Sprintf("Group %q of %q %s%s", name, stream, d, figure)
}

// EntriesFigure is the figure after WillReplay, WillSkip and WillReplayOrSkip: the entries the
// stream holds, " 1 Entry", " 12,000 Entries".
func EntriesFigure(n int64) string {
	if n == 1 {
		return " 1 Entry"
	}
	return " " + Thousands(n) + " Entries"
}

// LagFigure is the figure after WillBeAdopted: the group's lag as XINFO GROUPS gives it
// (", Lag 3"), or LagUnknown when the server cannot compute it.
func LagFigure(lag string) string { return ", Lag " + lag }

// LagUnknown is the lag of LagFigure when the server gives none.
const LagUnknown = "Unknown"

// The summaries of the warnings that are about a stream or about the whole plan, once each.
// Every summary of a skipped check holds CheckSkipped.
const (
	CheckSkipped       = "Check Skipped"
	PlanCheckSkipped   = "Plan-Time Group " + CheckSkipped // the server could not be asked
	ReplayCheckSkipped = "Replay " + CheckSkipped          // XINFO STREAM was refused
	StreamCreated      = "Will Be Created"                 // the words after the stream's name
)

// StreamCheckSkipped is the summary of a refusal to say what one stream holds (NOPERM for its key).
func StreamCheckSkipped(stream string) string {
	return fmt.Sprintf("%s For Stream %q", PlanCheckSkipped, stream)
}

// StreamWillBeCreated is the summary of the note that a stream does not exist yet.
func StreamWillBeCreated(stream string) string {
	return fmt.Sprintf("Stream %q %s", stream, StreamCreated)
}

// Thousands writes n with comma separators: 12,000,000.
func Thousands(n int64) string {
	digits := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, d := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	return b.String()
}

// Entries is a count of entries: "1 entry", "12,000,000 entries".
func Entries(n int64) string {
	if n == 1 {
		return "1 entry"
	}
	return Thousands(n) + " entries"
}
