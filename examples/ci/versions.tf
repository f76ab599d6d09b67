# The provider in a configuration of your own. `terraform init` (or `tofu init`) records the
# version it picked, and the checksums of the package it installed, in .terraform.lock.hcl:
# commit that file.
terraform {
  required_version = ">= 1.5"

  required_providers {
    valkey = {
      source  = "echomq/valkey"
      version = "~> 0.1.0"
    }
  }
}
