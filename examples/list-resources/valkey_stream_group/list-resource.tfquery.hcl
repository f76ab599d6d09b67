# groups.tfquery.hcl, beside the configuration that holds the provider block.
# `terraform query` lists what these blocks find; `terraform query -generate-config-out=groups.tf`
# writes an import block and a resource for each group found.

# Every group on every stream whose key matches the pattern (SCAN ... MATCH ... TYPE stream,
# on every primary of a cluster). Terraform returns at most `limit` results (default 100).
list "valkey_stream_group" "orders" {
  provider = valkey
  limit    = 1000

  config {
    match = "emq:{orders}:*"
  }
}

# The groups of streams named one by one; a key that does not exist yields nothing.
list "valkey_stream_group" "payments" {
  provider = valkey

  config {
    streams = ["emq:{payments}:stream:main", "emq:{payments}:stream:retry"]
  }
}
