output "group_ids" {
  description = "Import IDs (<stream>/<name>) of the groups, by service."
  value       = { for name, group in valkey_stream_group.service : name => group.id }
}

output "adopted" {
  description = "Services whose group already existed and was adopted as it was (its group_start was not applied)."
  value       = sort([for name, group in valkey_stream_group.service : name if group.adopted])
}
