# One consumer group per service on one stream. Usage:
#
#   module "orders" {
#     source = "./modules/stream-groups"
#     stream = "emq:{orders}:stream:main"
#     services = {
#       billing  = { group_start = "head" }
#       shipping = { group_start = "new" }
#     }
#   }
#
# Removing a service from the map only removes its group from state: the group stays on the server.
resource "valkey_stream_group" "service" {
  for_each = var.services

  stream      = var.stream
  name        = each.key
  group_start = each.value.group_start
}
