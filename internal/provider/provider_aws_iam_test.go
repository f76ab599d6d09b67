package provider

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/echomq/terraform-provider-valkey/internal/acctest"
	"github.com/echomq/terraform-provider-valkey/internal/valkeytest"
)

// awsEnv points the AWS credential chain of the provider (which runs in the test's process) at
// static credentials and nothing else: no shared files, no instance metadata.
func awsEnv(t *testing.T, key, secret string) {
	dir := t.TempDir()
	t.Setenv("AWS_ACCESS_KEY_ID", key)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "")
	t.Setenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "")
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", "")
}

func testAccAWSIAMConfig(url, caFile, stream string) string {
	tls := ""
	if caFile != "" {
		tls = fmt.Sprintf("\n  tls = { ca_cert_file = %q }", caFile)
	}
	return fmt.Sprintf(`provider "valkey" {
  url         = %q
  username    = "iam-user"
  max_retries = 0%s
  aws_iam = {
    service    = "elasticache-serverless"
    cache_name = "my-cache"
    region     = "eu-west-1"
  }
}
`, url, tls) + acctest.StreamGroupConfig(stream, "g", "new")
}

// TestAccProvider_AWSIAMWithoutTLSIsRefusedAtPlan: a token sent in the clear is refused before
// anything is dialled, and the words say why.
func TestAccProvider_AWSIAMWithoutTLSIsRefusedAtPlan(t *testing.T) {
	awsEnv(t, "AKIDTEST", "test-secret")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:             testAccAWSIAMConfig("valkey://127.0.0.1:1/0", "", acctest.StreamKey(t)),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ExpectError:        regexp.MustCompile(`(?s)Invalid Valkey Connection Settings.*aws_iam.*needs\s+TLS.*replayed`),
		}},
	})
}

// TestAccProvider_AWSIAMRefusedTokenSaysWhatToCheck: a server that refuses the token (here:
// its user has another password) gives the IAM diagnostic, naming the policy, the user id, the
// region and the cache name.
func TestAccProvider_AWSIAMRefusedTokenSaysWhatToCheck(t *testing.T) {
	awsEnv(t, "AKIDTEST", "test-secret")
	srv, pki := valkeytest.StartTLST(t, false)
	admin := srv.Client()
	t.Cleanup(func() { _ = admin.Close() })
	if err := admin.Do(context.Background(), "ACL", "SETUSER", "iam-user", "on", ">not-a-token", "~*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	stream := acctest.StreamKey(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: testAccAWSIAMConfig("valkey://"+srv.TLSAddr(), pki.CACertFile, stream),
			ExpectError: regexp.MustCompile(`(?s)Consumer Group Not Created.*` + regexp.QuoteMeta(srv.TLSAddr()) +
				`.*refused\s+the\s+AWS\s+IAM\s+token.*elasticache:Connect.*user\s+id\s+equals\s+its\s+user\s+name.*aws_iam.region.*aws_iam.cache_name`),
		}},
	})
	if keyExists(t, admin, stream) {
		t.Errorf("stream %s exists after a refused token", stream)
	}
}

// TestAccProvider_AWSIAMWithoutCredentialsSaysWhereTheyComeFrom: with no credentials anywhere in
// the chain, the error names the ways to give them.
func TestAccProvider_AWSIAMWithoutCredentialsSaysWhereTheyComeFrom(t *testing.T) {
	awsEnv(t, "", "")
	srv, pki := valkeytest.StartTLST(t, false)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      testAccAWSIAMConfig("valkey://"+srv.TLSAddr(), pki.CACertFile, acctest.StreamKey(t)),
			ExpectError: regexp.MustCompile(`(?s)IAM\s+token\s+failed.*AWS_ACCESS_KEY_ID.*AWS_WEB_IDENTITY_TOKEN_FILE`),
		}},
	})
}

// TestAccProvider_CloudIAMWithSentinelIsRefusedAtPlan: no service that issues IAM tokens runs
// Sentinel, and the sentinels would be sent a static password: aws_iam or gcp_iam with sentinel
// fails the plan on the attribute, saying why and what to use, before anything is dialled.
func TestAccProvider_CloudIAMWithSentinelIsRefusedAtPlan(t *testing.T) {
	awsEnv(t, "AKIDTEST", "test-secret")
	// Nothing listens at port 1: a plan that dialled would say so instead.
	for name, iam := range map[string]string{
		"aws_iam": `aws_iam = {
    service    = "elasticache"
    cache_name = "my-cache"
    region     = "eu-west-1"
  }`,
		"gcp_iam": "gcp_iam = {}",
	} {
		t.Run(name, func(t *testing.T) {
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config: fmt.Sprintf(`provider "valkey" {
  username = "iam-user"
  tls      = {}
  sentinel = {
    master_name = "primary"
    addresses   = ["127.0.0.1:1"]
  }
  %s
}
`, iam) + acctest.StreamGroupConfig(acctest.StreamKey(t), "g", "new"),
					PlanOnly:           true,
					ExpectNonEmptyPlan: true,
					ExpectError:        regexp.MustCompile(`(?s)Invalid Valkey Connection Settings.*` + name + `.*cannot\s+be\s+used\s+with\s+sentinel.*no\s+Sentinel.*static\s+password.*remove\s+sentinel`),
				}},
			})
		})
	}
}
