import {
  to = valkey_stream_group.billing
  id = "emq:{orders}:stream:main/billing"
}
