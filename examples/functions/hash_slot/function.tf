# Provider functions need Terraform 1.8 or later, or OpenTofu 1.7 or later.
terraform {
  required_providers {
    valkey = { source = "echomq/valkey" }
  }
}

# 105: only "orders", the hashtag between the braces, is hashed.
output "orders_slot" {
  value = provider::valkey::hash_slot("emq:{orders}:stream:main")
}
