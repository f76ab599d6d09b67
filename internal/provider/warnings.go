package provider

import (
	"fmt"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/echomq/terraform-provider-valkey/internal/planwords"
	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

// The warnings valkey_stream_group gives reviewers: their words and where they are attached.
// The summaries' words are internal/planwords', shared with tools/planreview; the details are
// written here.

// adoptedDetail says what XGROUP CREATE found, and only that: it cannot tell who created the group
// (another client, or an earlier apply of this group whose reply was lost), so it does not
// claim that the declared start was not applied.
func adoptedDetail(stream, name, start string, g valkey.Group) string {
	return fmt.Sprintf("Group %q already existed on stream %q when XGROUP CREATE ran (it answered BUSYGROUP), so it was adopted "+
		"as it is, at last-delivered-id %s with lag %s. The provider cannot tell who created it: another client, or an earlier apply whose "+
		"reply was lost (see \"Consumer Group Outcome Unknown\"), which started it where group_start %q puts a group. "+
		"If another client created it, its start is that client's, not the declared one. Use XGROUP SETID outside "+
		"Terraform if it must move.", name, stream, g.LastDeliveredID, formatOptional(g.Lag), start)
}

// leftOnServerDetail says what destroying (or replacing) a group leaves on the server.
func leftOnServerDetail(state streamGroupModel) string {
	return fmt.Sprintf("Terraform forgets group %q of stream %q but sends nothing to the server: the group, its pending entries "+
		"and the stream stay. Remove them deliberately (XGROUP DESTROY, DEL) outside Terraform if nothing reads them.",
		state.Name.ValueString(), state.Stream.ValueString())
}

// replacedDetail says what replacing a group by another leaves on the server.
func replacedDetail(state streamGroupModel) string {
	return leftOnServerDetail(state) + " The replacement ensures the newly declared group; the old one is not removed."
}

// startChangeDetail says why changing group_start of a group that exists moves nothing.
func startChangeDetail(state, plan streamGroupModel) string {
	return fmt.Sprintf("Changing group_start from %s to %s replaces the resource, but group %q already exists on stream %q, "+
		"so the new Create will adopt it and its read position will not move. Use XGROUP SETID outside Terraform "+
		"to move it, or choose a new group name to start a group at the new position.",
		state.GroupStart, plan.GroupStart, state.Name.ValueString(), state.Stream.ValueString())
}

// streamCheckSkippedDetail says what a plan cannot tell when the server refused to describe a stream.
func streamCheckSkippedDetail(stream string, err error) string {
	return fmt.Sprintf("The server would not say whether the planned groups of stream %q already exist, so this plan cannot "+
		"say which of them will be adopted or what they will replay or skip. Apply still sends XGROUP CREATE and "+
		"fails loudly on any refusal.\n\n%s", stream, errorDetail(err, streamSubject(stream)))
}

// planCheckSkippedDetail says what a plan cannot tell when the server could not be asked.
func planCheckSkippedDetail(stream, name string, err error) string {
	return fmt.Sprintf("The provider could not ask the server whether the planned groups already exist (first tried: "+
		"group %q of stream %q), so this plan cannot say which will be adopted, what they will replay or skip, or "+
		"whether a key holds another type. Apply still sends XGROUP CREATE and fails loudly on any refusal.\n\n%s",
		name, stream, errorDetail(err, groupSubject(stream, name)))
}

func streamCreatedDetail(stream, name string) string {
	return fmt.Sprintf("Stream %q does not exist yet: apply will create it together with group %q (XGROUP CREATE ... MKSTREAM).", stream, name)
}

// willBeAdoptedDetail says where a group that apply will adopt stands.
func willBeAdoptedDetail(stream, name string, start types.String, g valkey.Group) string {
	return fmt.Sprintf("Group %q already exists on stream %q, so apply will adopt it as it is: the declared %s "+
		"will not move its read position. It is at last-delivered-id %s with lag %s.",
		name, stream, declaredStart(start), g.LastDeliveredID, formatOptional(g.Lag))
}

// replayCheckSkippedDetail says what a plan cannot tell when XINFO STREAM was refused.
func replayCheckSkippedDetail(stream string, err error) string {
	return fmt.Sprintf("The provider could read the groups of stream %q but not how many entries it holds, so this plan "+
		"cannot say how many entries new groups will replay (group_start = \"head\") or skip (\"new\"). Grant the "+
		"planning user +xinfo|stream (see the provider's minimal ACL) to see it.\n\n%s",
		stream, errorDetail(err, streamSubject(stream)))
}

func replayOrSkipDetail(stream, name string, b valkey.Backlog) string {
	return fmt.Sprintf("Group %q will be created on stream %q, which holds the %s and group_start is not known yet: "+
		"\"head\" would hand every one of them to the group, \"new\" would never deliver them to it. "+
		"Review the value group_start will have before approving.", name, stream, span(b))
}

func replayDetail(stream, name string, b valkey.Backlog) string {
	return fmt.Sprintf("Group %q will be created on stream %q with group_start = \"head\", so it will be handed the %s "+
		"and its consumers will process every one of them. Choose group_start = \"new\" to start after them instead.",
		name, stream, span(b))
}

func skipDetail(stream, name string, b valkey.Backlog) string {
	return fmt.Sprintf("Group %q will be created on stream %q with group_start = \"new\", so the %s will never be delivered "+
		"to it: only entries appended after the apply will be. Choose group_start = \"head\" to replay them instead.",
		name, stream, span(b))
}

// span is what a stream holds, for a detail: "12 entries already in the stream, from ... to ...,".
func span(b valkey.Backlog) string {
	return fmt.Sprintf("%s already in the stream, from %s to %s,", planwords.Entries(b.Length), entryAt(b.FirstID), entryAt(b.LastID))
}

// entryAt is an entry ID with the time it names: "1700000000000-0 (2023-11-14 22:13:20.000 UTC)".
func entryAt(id string) string {
	if t, ok := valkey.EntryTime(id); ok {
		return fmt.Sprintf("%s (%s)", id, t.Format("2006-01-02 15:04:05.000 MST"))
	}
	return id
}

// declaredStart names the group_start a plan declares, which may not be known yet.
func declaredStart(start types.String) string {
	if start.IsUnknown() {
		return "group_start (not known yet)"
	}
	return fmt.Sprintf("group_start %q", start.ValueString())
}

// formatLag is a group's lag for a summary's LagFigure: the number, or planwords.LagUnknown.
func formatLag(n *int64) string {
	if n == nil {
		return planwords.LagUnknown
	}
	return strconv.FormatInt(*n, 10)
}

func formatOptional(n *int64) string {
	if n == nil {
		return "unknown (the server cannot compute it)"
	}
	return strconv.FormatInt(*n, 10)
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
