package provider

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

// Plan-time checks of valkey_stream_group: what a reviewer reading the plan learns about what
// apply will do, from read commands only.

func (r *streamGroupResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() { // destroy
		var state streamGroupModel
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		if !resp.Diagnostics.HasError() {
			resp.Diagnostics.AddWarning("Consumer Group Will Stay On Server", leftOnServer(state))
		}
		return
	}
	if req.Plan.Raw.Equal(req.State.Raw) {
		return // nothing changes: nothing to say
	}
	var plan streamGroupModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if req.State.Raw.IsNull() {
		r.checkDoor(ctx, plan, &resp.Diagnostics)
		return
	}
	var state streamGroupModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	switch {
	case !plan.Stream.Equal(state.Stream) || !plan.Name.Equal(state.Name):
		resp.Diagnostics.AddWarning("Replaced Consumer Group Will Stay On Server", leftOnServer(state)+
			" The replacement ensures the newly declared group; the old one is not removed.")
		r.checkDoor(ctx, plan, &resp.Diagnostics)
	case !state.GroupStart.IsNull() && !plan.GroupStart.Equal(state.GroupStart):
		resp.Diagnostics.AddAttributeWarning(path.Root("group_start"), "Group Start Change Will Not Move The Group",
			fmt.Sprintf("Changing group_start from %s to %s replaces the resource, but group %q already exists on stream %q, "+
				"so the new Create will adopt it and its read position will not move. Use XGROUP SETID outside Terraform "+
				"to move it, or choose a new group name to start a group at the new position.",
				state.GroupStart, plan.GroupStart, state.Name.ValueString(), state.Stream.ValueString()))
	}
}

// checkDoor tells the reviewer, at plan time, what the door will meet at apply, using read
// commands only (XINFO GROUPS, and TYPE for a collision), shared per stream. It promises
// nothing in the plan itself: `adopted` stays unknown, because apply is the authority.
func (r *streamGroupResource) checkDoor(ctx context.Context, plan streamGroupModel, diags *diag.Diagnostics) {
	if plan.Stream.IsUnknown() || plan.Name.IsUnknown() || r.data == nil || r.data.client == nil {
		return
	}
	stream, name, start := plan.Stream.ValueString(), plan.Name.ValueString(), plan.GroupStart.ValueString()
	groups, exists, first, err := r.data.plan.groups(ctx, r.data.client, stream)
	var wrongType *valkey.WrongTypeError
	switch {
	case errors.As(err, &wrongType):
		diags.AddAttributeError(path.Root("stream"), "Consumer Group Cannot Be Created", errorDetail(err, groupSubject(stream, name)))
	case err != nil:
		if first {
			diags.AddWarning("Plan-Time Group Check Skipped",
				fmt.Sprintf("The provider could not ask the server whether the planned groups already exist (first tried: "+
					"group %q of stream %q), so this plan cannot say which will be adopted or whether a key holds another type. "+
					"Apply still runs the door and fails loudly on any refusal.\n\n%s",
					name, stream, errorDetail(err, groupSubject(stream, name))))
		}
	case !exists:
		if r.data.plan.firstNote(stream) { // once per stream, not once per group on it
			diags.AddWarning("Stream Will Be Created",
				fmt.Sprintf("Stream %q does not exist yet: apply will create it together with group %q (XGROUP CREATE ... MKSTREAM).", stream, name))
		}
	default:
		if g, found := valkey.FindGroup(groups, name); found {
			diags.AddWarning("Consumer Group Will Be Adopted",
				fmt.Sprintf("Group %q already exists on stream %q, so apply will adopt it as it is: the declared group_start %q "+
					"will not move its read position. It is at last-delivered-id %s with lag %s.",
					name, stream, start, g.LastDeliveredID, formatOptional(g.Lag)))
		}
	}
}

func formatOptional(n *int64) string {
	if n == nil {
		return "unknown (the server cannot compute it)"
	}
	return strconv.FormatInt(*n, 10)
}

// planSession is what plan-time checks remember during one provider process, that is one
// Terraform command: the first failure to ask the server, so that a plan of a thousand groups
// waits for the network once and warns once, and the streams already noted.
type planSession struct {
	mu     sync.Mutex
	failed error
	noted  map[string]bool
}

// groups answers like valkey.Client.Groups for checks made while planning. Once the server has
// failed to answer (unreachable, or a configuration not known yet), it returns that first
// error again without asking. first is true for the one call that met the error first, so
// that the caller says it once. A key of another type is an answer, not a failure.
func (s *planSession) groups(ctx context.Context, client *valkey.Client, stream string) (groups []valkey.Group, exists, first bool, err error) {
	s.mu.Lock()
	failed := s.failed
	s.mu.Unlock()
	if failed != nil {
		return nil, false, false, failed
	}
	groups, exists, err = client.Groups(ctx, stream)
	var wrongType *valkey.WrongTypeError
	if err == nil || errors.As(err, &wrongType) {
		return groups, exists, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		return nil, false, false, s.failed
	}
	s.failed = err
	return nil, false, true, err
}

// firstNote reports whether this is the first call for stream, so that a note about a stream
// is given once per plan, not once per group on it.
func (s *planSession) firstNote(stream string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.noted == nil {
		s.noted = map[string]bool{}
	}
	if s.noted[stream] {
		return false
	}
	s.noted[stream] = true
	return true
}
