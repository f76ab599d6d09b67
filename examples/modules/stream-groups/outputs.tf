output "group_ids" {
  description = "Import IDs (<stream>/<name>) of the groups, by service."
  value       = { for name, group in valkey_stream_group.service : name => group.id }
}

output "adopted" {
  description = "Services whose group was already on the server when apply ran, and was adopted at the position the server holds (the adoption warning gives it and the lag); an earlier apply may have created it."
  value       = sort([for name, group in valkey_stream_group.service : name if group.adopted])
}
