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

# AWS ElastiCache or MemoryDB with IAM: every new connection's password is a fresh SigV4 token
# signed with the standard AWS credential chain (environment, profiles and SSO, web identity,
# metadata). TLS is required; username is the IAM-enabled user.
provider "valkey" {
  alias    = "elasticache"
  url      = "valkeys://my-cache-abc123.serverless.euw1.cache.amazonaws.com:6379"
  username = "terraform"

  aws_iam = {
    service    = "elasticache-serverless" # "elasticache" (node-based) or "memorydb"
    cache_name = "my-cache"
    region     = "eu-west-1"
  }
}

# Google Memorystore for Valkey with IAM: an OAuth2 access token from Application Default
# Credentials, over TLS with the instance's CA.
provider "valkey" {
  alias = "memorystore"

  tls = {
    ca_cert_file = "server-ca.pem"
  }
  cluster = {
    addresses = ["10.0.0.3:6379"] # the discovery endpoint
  }
  gcp_iam = {}
}

# A private cluster from a runner outside its network: every connection goes through a SOCKS5
# proxy (here `ssh -D 1080 bastion`), and the proxy resolves the host names.
provider "valkey" {
  alias    = "bastion"
  username = "terraform"
  proxy    = "socks5://127.0.0.1:1080"

  cluster = {
    addresses = ["valkey-1.internal:6379"]
  }
}

# A TLS cluster reached through local forwards (`ssh -L`): the nodes announce their private
# addresses, which address_map turns into the forwards'; the certificate is checked against
# server_name.
provider "valkey" {
  alias    = "forwarded"
  username = "terraform"

  tls = {
    ca_cert_file = "/etc/valkey/tls/ca.crt"
    server_name  = "valkey.internal"
  }
  cluster = {
    addresses = ["10.0.1.5:6379"]
    address_map = {
      "10.0.1.5:6379" = "127.0.0.1:7001"
      "10.0.1.6:6379" = "127.0.0.1:7002"
      "10.0.1.7:6379" = "127.0.0.1:7003"
    }
  }
}

# Certificate login (Valkey 9 with tls-auth-clients yes and tls-auth-clients-user CN): the
# certificate's common name is the ACL user, so no username or password is set.
provider "valkey" {
  alias = "certificate"
  url   = "valkeys://valkey.internal:6380/0"

  tls = {
    ca_cert_file = "/etc/valkey/tls/ca.crt"
    cert_file    = "/etc/valkey/tls/terraform.crt"
    key_file     = "/etc/valkey/tls/terraform.key"
  }
}
