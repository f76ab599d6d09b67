# The ID is <stream>/<name>; in the name, "%" is written %25 and "/" is written %2F.
terraform import valkey_stream_group.billing 'emq:{orders}:stream:main/billing'
terraform import valkey_stream_group.team_billing 'emq:{orders}:stream:main/team%2Fbilling'
