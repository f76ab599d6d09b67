# Needs no server: mock_provider stands in for the provider, which is never configured and sends
# nothing. A mock knows the schema only, so it shows none of what the server decides (plan-time
# warnings, adoption, the real id): this file tests the module's own logic.

mock_provider "valkey" {
  mock_resource "valkey_stream_group" {
    defaults = { adopted = false }
  }
}

# A stand-in for a server where every group exists already.
mock_provider "valkey" {
  alias = "groups_exist"

  mock_resource "valkey_stream_group" {
    defaults = { adopted = true }
  }
}

variables {
  stream = "emq:{orders}:stream:main"
  services = {
    shipping = { group_start = "new" }
    billing  = { group_start = "head" }
  }
}

run "one_group_per_service" {
  assert {
    condition     = keys(output.group_ids) == ["billing", "shipping"]
    error_message = "The module made groups for ${jsonencode(keys(output.group_ids))}."
  }
  assert {
    condition     = length(output.adopted) == 0
    error_message = "Adopted ${jsonencode(output.adopted)} although no group was."
  }
}

# Other services, so that their groups are created (and adopted) under this mock: a mock
# answers only creates, and the groups of the run above are in state already.
run "adopted_lists_the_adopted_services" {
  providers = {
    valkey = valkey.groups_exist
  }

  variables {
    services = {
      ledger = { group_start = "head" }
      audit  = { group_start = "new" }
    }
  }

  assert {
    condition     = output.adopted == tolist(["audit", "ledger"])
    error_message = "Adopted ${jsonencode(output.adopted)}."
  }
}

run "empty_stream_is_refused" {
  command = plan

  variables {
    stream = ""
  }

  expect_failures = [var.stream]
}
