# Review rules for valkey_stream_group in a saved plan, for OPA. The input is
# `terraform show -json tfplan` (or `tofu show -json tfplan`); the approvals are a data
# document, such as approvals.json committed with the change:
#
#   {"valkey": {
#     "protected_streams": ["emq:{orders}:stream:main"],
#     "approved_head": ["emq:{orders}:stream:main/billing"],
#     "approved_delete": []
#   }}
#
#   opa eval --fail-defined -d valkey_stream_group.rego -d approvals.json -i plan.json 'data.terraform.valkey.deny[x]'
#
# The plan file carries no diagnostics of the provider: these rules read only what it does
# carry, the planned values and actions.
package terraform.valkey

# protected_streams are the stream keys on which a new group may start at "head" only with an
# approval; "*" protects every stream, and is the default.
default protected_streams := ["*"]

protected_streams := data.valkey.protected_streams

# approved_head are the IDs of groups (<stream>/<name>, the `id` the plan shows) approved to
# start at "head" and replay the entries already in their stream.
default approved_head := []

approved_head := data.valkey.approved_head

# approved_delete are the addresses of resources approved to be destroyed.
default approved_delete := []

approved_delete := data.valkey.approved_delete

groups contains rc if {
	some rc in input.resource_changes
	rc.mode == "managed"
	rc.type == "valkey_stream_group"
}

# A new group that starts at "head" (or whose start is not known yet) on a protected stream
# needs an approval: it will be handed every entry already in the stream.
deny contains msg if {
	some rc in groups
	"create" in rc.change.actions
	not same_group(rc)
	may_start_at_head(rc)
	protected(rc)
	not rc.change.after.id in approved_head
	msg := sprintf(
		"%s: group %q of stream %q starts at \"head\" (or at a start not known yet): if apply creates it, it is handed every entry already in the stream; add its id %q to approved_head to allow it",
		[rc.address, object.get(rc.change.after, "name", "(not known yet)"), object.get(rc.change.after, "stream", "(not known yet)"), object.get(rc.change.after, "id", "(not known yet)")],
	)
}

# A guard many teams keep: nothing is destroyed without an approval. The delete of a
# valkey_stream_group only removes it from state (the group, its pending entries and the
# stream stay on the server), so it goes through.
deny contains msg if {
	some rc in input.resource_changes
	rc.mode == "managed"
	"delete" in rc.change.actions
	not state_only_delete(rc)
	not rc.address in approved_delete
	msg := sprintf("%s: %v destroys it; add the address to approved_delete to allow it", [rc.address, rc.change.actions])
}

state_only_delete(rc) if rc.type == "valkey_stream_group"

# A replacement of the same group (a group_start change) adopts the group that is there: its
# read position does not move, nothing is replayed.
same_group(rc) if {
	"delete" in rc.change.actions
	rc.change.before.stream == rc.change.after.stream
	rc.change.before.name == rc.change.after.name
}

may_start_at_head(rc) if rc.change.after.group_start == "head"

may_start_at_head(rc) if rc.change.after_unknown.group_start == true

protected(_) if "*" in protected_streams

protected(rc) if rc.change.after.stream in protected_streams

# A stream not known at plan time may turn out to be a protected one.
protected(rc) if rc.change.after_unknown.stream == true
