# Read a consumer group as the server reports it, without managing it.
data "valkey_stream_group" "billing" {
  stream = "emq:{orders}:stream:main"
  name   = "billing"
}

output "billing_lag" {
  # lag is null when the server cannot compute it (after deletions in the unread range).
  value = data.valkey_stream_group.billing.lag
}

output "billing_consumers" {
  value = { for c in data.valkey_stream_group.billing.consumer : c.name => c.pending }
}
