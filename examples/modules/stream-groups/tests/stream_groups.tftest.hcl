# Runs against a real server: set VALKEY_URL (and VALKEY_PASSWORD) for the provider, and the
# module's `stream` to a key no other run uses, such as
#
#   TF_VAR_stream="emq:{ci-$GITHUB_RUN_ID}:stream:main" terraform test
#
# The test's destroy removes the groups from its state only: they stay on the server, so a run
# that reuses a stream key adopts the groups an earlier run created.

variables {
  services = {
    billing  = { group_start = "head" }
    shipping = { group_start = "new" }
  }
}

# The plan alone: ids are known before anything is created, and each group's start is the one
# declared.
run "plan_names_each_group" {
  command = plan

  assert {
    condition     = output.group_ids == { billing = "${var.stream}/billing", shipping = "${var.stream}/shipping" }
    error_message = "The planned ids are ${jsonencode(output.group_ids)}."
  }
  assert {
    condition     = valkey_stream_group.service["billing"].group_start == "head" && valkey_stream_group.service["shipping"].group_start == "new"
    error_message = "The planned starts are not the declared ones."
  }
}

# Applied on a stream no run used before, every group is created, none adopted.
run "apply_creates_the_groups" {
  assert {
    condition     = length(output.adopted) == 0
    error_message = "Groups were adopted on a fresh stream: ${jsonencode(output.adopted)}."
  }
  assert {
    condition     = valkey_stream_group.service["billing"].id == "${var.stream}/billing"
    error_message = "The applied id of billing is ${valkey_stream_group.service["billing"].id}."
  }
}

# Removing a service only removes its group from state: the group stays on the server ...
run "removed_service_leaves_its_group" {
  variables {
    services = { billing = { group_start = "head" } }
  }

  assert {
    condition     = keys(output.group_ids) == ["billing"]
    error_message = "The module still manages ${jsonencode(keys(output.group_ids))}."
  }
}

# ... so declaring it again adopts the group as it is.
run "declared_again_it_is_adopted" {
  assert {
    condition     = output.adopted == tolist(["shipping"])
    error_message = "Adopted ${jsonencode(output.adopted)}, want only shipping."
  }
}

# The module's own validation refuses a start the provider does not know.
run "unknown_start_is_refused" {
  command = plan

  variables {
    services = { audit = { group_start = "latest" } }
  }

  expect_failures = [var.services]
}
