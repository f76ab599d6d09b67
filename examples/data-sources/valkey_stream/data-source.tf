# Read a stream as the server reports it, without managing it.
data "valkey_stream" "orders" {
  key = "emq:{orders}:stream:main"
}

output "orders_length" {
  value = data.valkey_stream.orders.length
}

output "orders_groups" {
  value = data.valkey_stream.orders.groups
}
