# The ID is <stream>/<name>, split at the last "/": stream keys may contain "/", group names may not.
terraform import valkey_stream_group.billing 'emq:{orders}:stream:main/billing'
