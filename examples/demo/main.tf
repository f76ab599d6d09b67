# Applied by `make demo` against a throwaway valkey-server on loopback.
terraform {
  required_providers {
    valkey = {
      source = "echomq/valkey"
    }
  }
}

variable "url" {
  type        = string
  description = "The demo server, set by scripts/demo.sh."
}

provider "valkey" {
  url = var.url
}

locals {
  # One group per service; billing must see every order already queued.
  services = {
    billing  = "head"
    shipping = "new"
    audit    = "new"
  }
}

resource "valkey_stream_group" "orders" {
  for_each = local.services

  stream      = "emq:{orders}:stream:main"
  name        = each.key
  group_start = each.value
}

output "groups" {
  value = { for name, g in valkey_stream_group.orders : name => { id = g.id, adopted = g.adopted } }
}
