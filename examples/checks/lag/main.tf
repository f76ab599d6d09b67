# Warns on every plan and apply when the billing group falls behind. A failed check is a
# warning, not an error: it never blocks a run.
terraform {
  required_version = ">= 1.5"

  required_providers {
    valkey = { source = "echomq/valkey" }
  }
}

variable "max_lag" {
  description = "Entries the group may have left to read before the check fails."
  type        = number
  default     = 1000
}

check "billing_lag" {
  data "valkey_stream_group" "billing" {
    stream = "emq:{orders}:stream:main"
    name   = "billing"
  }

  assert {
    # lag is null when the server cannot compute it; treat that as a failure worth a look.
    condition     = coalesce(data.valkey_stream_group.billing.lag, var.max_lag + 1) <= var.max_lag
    error_message = "Group billing on emq:{orders}:stream:main is ${coalesce(data.valkey_stream_group.billing.lag, -1)} entries behind (limit ${var.max_lag}; -1 means the server reports no lag)."
  }
}
