# A single server. The password is best kept in VALKEY_PASSWORD: Terraform copies literal
# values of the provider block into `terraform show -json`.
provider "valkey" {
  url      = "valkey://127.0.0.1:6379/0"
  username = "terraform"
}

# TLS with a private CA and a client certificate (mutual TLS).
provider "valkey" {
  alias = "tls"
  url   = "valkeys://valkey.internal:6380/0"

  tls = {
    ca_cert_file = "/etc/valkey/tls/ca.crt"
    cert_file    = "/etc/valkey/tls/client.crt"
    key_file     = "/etc/valkey/tls/client.key"
  }
}

# A Valkey Cluster: seed nodes; the rest is discovered, and keys are routed by slot.
provider "valkey" {
  alias    = "cluster"
  username = "terraform"

  cluster = {
    addresses = ["valkey-1.internal:6379", "valkey-2.internal:6379", "valkey-3.internal:6379"]
  }
}

# A primary found through Sentinel, followed across failovers.
provider "valkey" {
  alias = "sentinel"

  sentinel = {
    master_name = "primary"
    addresses   = ["sentinel-1.internal:26379", "sentinel-2.internal:26379", "sentinel-3.internal:26379"]
  }
}

# Timeouts and retries, and an address known only after apply (nothing dials until needed).
resource "terraform_data" "valkey_endpoint" {
  input = "valkey://valkey.example.internal:6379/0"
}

provider "valkey" {
  alias           = "lazy"
  url             = terraform_data.valkey_endpoint.output
  dial_timeout    = "2s"
  command_timeout = "1s"
  max_retries     = 1
}
