package provider

import (
	"context"
	"errors"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/echomq/terraform-provider-valkey/internal/planwords"
	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

// Plan-time checks of valkey_stream_group: what a reviewer reading the plan learns about what
// apply will do, from read commands only.

func (r *streamGroupResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() { // destroy
		var state streamGroupModel
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		if !resp.Diagnostics.HasError() {
			warnOnResource(&resp.Diagnostics, planwords.GroupSummary(state.Stream.ValueString(), state.Name.ValueString(), planwords.WillStay, ""), leftOnServerDetail(state))
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
				warnOnResource(&resp.Diagnostics, planwords.GroupSummary(state.Stream.ValueString(), state.Name.ValueString(), planwords.StartChangeAdopts, ""),
					startChangeDetail(state, plan))
			}
			return // the same group: nothing new is created
		}
		markReplacement(ctx, resp)
		warnOnResource(&resp.Diagnostics, planwords.GroupSummary(state.Stream.ValueString(), state.Name.ValueString(), planwords.WillStayReplaced, ""), replacedDetail(state))
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
			warnOnResource(diags, planwords.StreamCheckSkipped(stream), streamCheckSkippedDetail(stream, err))
		}
	case err != nil && unreachableAnnounced(err):
		// Apply cannot get past this either: fail the plan at once, with the way to reach the nodes.
		if first {
			diags.AddError("Cluster Node Unreachable", errorDetail(err, groupSubject(stream, name)))
		}
	case err != nil:
		if first {
			warnOnResource(diags, planwords.PlanCheckSkipped, planCheckSkippedDetail(stream, name, err))
		}
	case !survey.Exists:
		if r.data.plan.once("created " + stream) { // once per stream, not once per group on it
			warnOnResource(diags, planwords.StreamWillBeCreated(stream), streamCreatedDetail(stream, name))
		}
	default:
		if g, found := valkey.FindGroup(survey.Groups, name); found {
			warnOnResource(diags, planwords.GroupSummary(stream, name, planwords.WillBeAdopted, planwords.LagFigure(formatLag(g.Lag))),
				willBeAdoptedDetail(stream, name, plan.GroupStart, g))
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
	switch {
	case survey.BacklogErr != nil:
		if r.data.plan.once("backlog") {
			warnOnResource(diags, planwords.ReplayCheckSkipped, replayCheckSkippedDetail(stream, survey.BacklogErr))
		}
	case b.Length == 0: // nothing to replay or to skip
	case plan.GroupStart.IsUnknown():
		warnOnResource(diags, planwords.GroupSummary(stream, name, planwords.WillReplayOrSkip, planwords.EntriesFigure(b.Length)),
			replayOrSkipDetail(stream, name, b))
	case plan.GroupStart.ValueString() == string(valkey.StartHead):
		warnOnResource(diags, planwords.GroupSummary(stream, name, planwords.WillReplay, planwords.EntriesFigure(b.Length)),
			replayDetail(stream, name, b))
	default:
		warnOnResource(diags, planwords.GroupSummary(stream, name, planwords.WillSkip, planwords.EntriesFigure(b.Length)),
			skipDetail(stream, name, b))
	}
}
