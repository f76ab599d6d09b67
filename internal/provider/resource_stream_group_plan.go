package provider

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

// Plan-time checks of valkey_stream_group: what a reviewer reading the plan learns about what
// apply will do, from read commands only.

func (r *streamGroupResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() { // destroy
		var state streamGroupModel
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		if !resp.Diagnostics.HasError() {
			warnOnResource(&resp.Diagnostics, groupSummary(state.Stream.ValueString(), state.Name.ValueString(), willStay, ""), leftOnServerDetail(state))
		}
		return
	}
	if req.Plan.Raw.Equal(req.State.Raw) {
		return // nothing changes: nothing to say
	}
	if replanOfReplacement(ctx, req, resp) {
		return // the first call said everything, and Terraform shows no warning of this one
	}
	var plan streamGroupModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !req.State.Raw.IsNull() {
		var state streamGroupModel
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		if resp.Diagnostics.HasError() {
			return
		}
		if plan.Stream.Equal(state.Stream) && plan.Name.Equal(state.Name) {
			if !state.GroupStart.IsNull() && !plan.GroupStart.IsNull() && !plan.GroupStart.Equal(state.GroupStart) {
				markReplacement(ctx, resp)
				warnOnResource(&resp.Diagnostics, groupSummary(state.Stream.ValueString(), state.Name.ValueString(), startChangeAdopts, ""),
					fmt.Sprintf("Changing group_start from %s to %s replaces the resource, but group %q already exists on stream %q, "+
						"so the new Create will adopt it and its read position will not move. Use XGROUP SETID outside Terraform "+
						"to move it, or choose a new group name to start a group at the new position.",
						state.GroupStart, plan.GroupStart, state.Name.ValueString(), state.Stream.ValueString()))
			}
			return // the same group: nothing new is created
		}
		markReplacement(ctx, resp)
		warnOnResource(&resp.Diagnostics, groupSummary(state.Stream.ValueString(), state.Name.ValueString(), willStayReplaced, ""), leftOnServerDetail(state)+
			" The replacement ensures the newly declared group; the old one is not removed.")
	}
	// A create, or a replacement by another group: the plan may create it.
	r.previewCreate(ctx, plan, &resp.Diagnostics)
}

// replacingKey marks, in the private data of a replacement's plan, that the previews were
// given. Terraform and OpenTofu plan a replacement twice: with the prior state, then with none
// (the create half), handing the first plan's private data to the second, and they show the
// second call's diagnostics only when one is an error. Previews made there would vanish, and
// with them the notes given once per stream or per plan (a stream that will be created, a check
// skipped), which the other groups of that stream would then not get.
const replacingKey = "replacing"

func markReplacement(ctx context.Context, resp *resource.ModifyPlanResponse) {
	if resp.Private == nil { // never from Terraform; a direct call in a test may leave it out
		return
	}
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, replacingKey, []byte("true"))...)
}

// replanOfReplacement reports whether this is the second plan of a replacement (no prior
// state, and the first plan's mark).
func replanOfReplacement(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) bool {
	if !req.State.Raw.IsNull() || req.Private == nil {
		return false
	}
	mark, diags := req.Private.GetKey(ctx, replacingKey)
	resp.Diagnostics.Append(diags...)
	return mark != nil
}

// previewCreate tells the reviewer, at plan time, what XGROUP CREATE will meet at apply, using read
// commands only (XINFO GROUPS and XINFO STREAM, and TYPE for a collision), once per stream. It
// promises nothing in the plan itself: `adopted` stays unknown, because apply is the authority.
func (r *streamGroupResource) previewCreate(ctx context.Context, plan streamGroupModel, diags *diag.Diagnostics) {
	if plan.Stream.IsUnknown() || plan.Name.IsUnknown() || r.data == nil {
		return
	}
	stream, name := plan.Stream.ValueString(), plan.Name.ValueString()
	survey, first, err := r.data.survey(ctx, stream)
	var (
		wrongType *valkey.WrongTypeError
		refused   *valkey.RefusedError
		redirect  *valkey.RedirectError
	)
	switch {
	case errors.As(err, &wrongType):
		diags.AddAttributeError(path.Root("stream"), "Consumer Group Cannot Be Created", errorDetail(err, groupSubject(stream, name)))
	case errors.As(err, &refused) || errors.As(err, &redirect):
		// A refusal (NOPERM for its key, say) or a slot that would not settle is about this
		// stream: the others are still checked.
		if r.data.plan.once("refused " + stream) {
			warnOnResource(diags, streamCheckSkipped(stream),
				fmt.Sprintf("The server would not say whether the planned groups of stream %q already exist, so this plan cannot "+
					"say which of them will be adopted or what they will replay or skip. Apply still sends XGROUP CREATE and "+
					"fails loudly on any refusal.\n\n%s", stream, errorDetail(err, streamSubject(stream))))
		}
	case err != nil && unreachableAnnounced(err):
		// Apply cannot get past this either: fail the plan at once, with the way to reach the nodes.
		if first {
			diags.AddError("Cluster Node Unreachable", errorDetail(err, groupSubject(stream, name)))
		}
	case err != nil:
		if first {
			warnOnResource(diags, planCheckSkipped,
				fmt.Sprintf("The provider could not ask the server whether the planned groups already exist (first tried: "+
					"group %q of stream %q), so this plan cannot say which will be adopted, what they will replay or skip, or "+
					"whether a key holds another type. Apply still sends XGROUP CREATE and fails loudly on any refusal.\n\n%s",
					name, stream, errorDetail(err, groupSubject(stream, name))))
		}
	case !survey.Exists:
		if r.data.plan.once("created " + stream) { // once per stream, not once per group on it
			warnOnResource(diags, streamWillBeCreated(stream),
				fmt.Sprintf("Stream %q does not exist yet: apply will create it together with group %q (XGROUP CREATE ... MKSTREAM).", stream, name))
		}
	default:
		if g, found := valkey.FindGroup(survey.Groups, name); found {
			warnOnResource(diags, groupSummary(stream, name, willBeAdopted, ", Lag "+formatLag(g.Lag)),
				fmt.Sprintf("Group %q already exists on stream %q, so apply will adopt it as it is: the declared %s "+
					"will not move its read position. It is at last-delivered-id %s with lag %s.",
					name, stream, declaredStart(plan.GroupStart), g.LastDeliveredID, formatOptional(g.Lag)))
			return
		}
		r.warnBacklog(plan, survey, diags)
	}
}

// warnBacklog says, for a group about to be created on a stream that holds entries, what its
// group_start will do with them: the one decision that cannot be taken back. head hands every
// entry to the new group; new makes them invisible to it forever.
func (r *streamGroupResource) warnBacklog(plan streamGroupModel, survey valkey.Survey, diags *diag.Diagnostics) {
	stream, name, b := plan.Stream.ValueString(), plan.Name.ValueString(), survey.Backlog
	span := fmt.Sprintf("%s already in the stream, from %s to %s,", entries(b.Length), entryAt(b.FirstID), entryAt(b.LastID))
	switch {
	case survey.BacklogErr != nil:
		if r.data.plan.once("backlog") {
			warnOnResource(diags, replayCheckSkipped,
				fmt.Sprintf("The provider could read the groups of stream %q but not how many entries it holds, so this plan "+
					"cannot say how many entries new groups will replay (group_start = \"head\") or skip (\"new\"). Grant the "+
					"planning user +xinfo|stream (see the provider's minimal ACL) to see it.\n\n%s",
					stream, errorDetail(survey.BacklogErr, streamSubject(stream))))
		}
	case b.Length == 0: // nothing to replay or to skip
	case plan.GroupStart.IsUnknown():
		warnOnResource(diags, groupSummary(stream, name, willReplayOrSkip, " "+entriesTitle(b.Length)),
			fmt.Sprintf("Group %q will be created on stream %q, which holds the %s and group_start is not known yet: "+
				"\"head\" would hand every one of them to the group, \"new\" would never deliver them to it. "+
				"Review the value group_start will have before approving.", name, stream, span))
	case plan.GroupStart.ValueString() == string(valkey.StartHead):
		warnOnResource(diags, groupSummary(stream, name, willReplay, " "+entriesTitle(b.Length)),
			fmt.Sprintf("Group %q will be created on stream %q with group_start = \"head\", so it will be handed the %s "+
				"and its consumers will process every one of them. Choose group_start = \"new\" to start after them instead.",
				name, stream, span))
	default:
		warnOnResource(diags, groupSummary(stream, name, willSkip, " "+entriesTitle(b.Length)),
			fmt.Sprintf("Group %q will be created on stream %q with group_start = \"new\", so the %s will never be delivered "+
				"to it: only entries appended after the apply will be. Choose group_start = \"head\" to replay them instead.",
				name, stream, span))
	}
}

// entries is a count of entries, with thousands separated: "1 entry", "12,000,000 entries".
func entries(n int64) string {
	if n == 1 {
		return "1 entry"
	}
	digits := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, d := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	return b.String() + " entries"
}

// entriesTitle is entries for a summary: "1 Entry", "12,000,000 Entries".
func entriesTitle(n int64) string {
	if n == 1 {
		return "1 Entry"
	}
	return strings.TrimSuffix(entries(n), " entries") + " Entries"
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

// formatLag is a group's lag for a summary: the number, or "Unknown".
func formatLag(n *int64) string {
	if n == nil {
		return "Unknown"
	}
	return strconv.FormatInt(*n, 10)
}

func formatOptional(n *int64) string {
	if n == nil {
		return "unknown (the server cannot compute it)"
	}
	return strconv.FormatInt(*n, 10)
}
