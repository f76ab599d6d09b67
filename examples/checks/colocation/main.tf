# On a cluster, a stream and the keys a script or transaction uses with it must share one
# hash slot. This check fails (as a warning) when a renamed key breaks the co-location.
# Provider functions need Terraform 1.8 or later, or OpenTofu 1.7 or later.
terraform {
  required_providers {
    valkey = { source = "echomq/valkey" }
  }
}

locals {
  stream = "emq:{orders}:stream:main"
  siblings = [
    "emq:{orders}:dead-letter",
    "emq:{orders}:idempotency",
    "emq:{orders}:lock",
  ]
}

check "orders_colocated" {
  assert {
    condition = alltrue([
      for key in local.siblings : provider::valkey::hash_slot(key) == provider::valkey::hash_slot(local.stream)
    ])
    error_message = "Keys not in slot ${provider::valkey::hash_slot(local.stream)} of ${local.stream}: ${join(", ", [for key in local.siblings : key if provider::valkey::hash_slot(key) != provider::valkey::hash_slot(local.stream)])}. Give them the same {hashtag}."
  }
}
