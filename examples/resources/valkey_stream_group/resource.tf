# Billing replays everything already in the orders stream; audit only sees new orders.
resource "valkey_stream_group" "billing" {
  stream      = "emq:{orders}:stream:main"
  name        = "billing"
  group_start = "head"
}

resource "valkey_stream_group" "audit" {
  stream      = "emq:{orders}:stream:main"
  name        = "audit"
  group_start = "new"
}
