terraform {
  required_version = ">= 1.5"

  required_providers {
    valkey = {
      source = "echomq/valkey"
    }
  }
}
