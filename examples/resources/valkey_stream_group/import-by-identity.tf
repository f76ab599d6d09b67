# Terraform 1.12+ and OpenTofu 1.12+: name the group without an ID to parse. The name is given
# as it is, "/" and all.
import {
  to = valkey_stream_group.billing
  identity = {
    stream = "emq:{orders}:stream:main"
    name   = "team/billing"
  }
}
