package provider

import (
	"errors"
	"fmt"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

// tokenHint says what to check when a connection authenticated with a cloud token could not
// be opened: the token was refused, or none could be made. ok is false for other failures,
// which unreachableHint words.
func tokenHint(u *valkey.UnreachableError) (hint string, ok bool) {
	if u.Token == "Google IAM" {
		var file *valkey.CredentialsFileError
		switch {
		case u.Step == "IAM token" && errors.As(u.Err, &file):
			return fmt.Sprintf("The Google credentials file %q, named by gcp_iam.credentials_file (or "+
				"VALKEY_GCP_IAM_CREDENTIALS_FILE), is missing or unreadable, or is not a credentials file (a service account "+
				"key, authorized user or external account): check the path as seen from where Terraform runs, or unset it to "+
				"use Application Default Credentials.", file.File), true
		case u.Step == "IAM token":
			return "The provider could not get a Google access token from Application Default Credentials: set " +
				"GOOGLE_APPLICATION_CREDENTIALS or gcp_iam.credentials_file to a credentials file, run `gcloud auth " +
				"application-default login`, or run where the metadata server gives a service account.", true
		case u.Cause() == valkey.CauseAuth:
			return "The server refused the Google access token. Check: the principal has roles/memorystore.dbConnectionUser " +
				"(the memorystore.instances.connect permission) on the instance or its project; the instance has IAM " +
				"authentication enabled; and the principal is a user or service account (groups are not supported).", true
		}
		return "", false
	}
	if u.Token != "AWS IAM" {
		return "", false
	}
	switch {
	case u.Step == "IAM token":
		return "The provider could not sign an AWS IAM token, because the AWS credential chain gave no credentials: set " +
			"AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile (aws_iam.profile or AWS_PROFILE, SSO included: run " +
			"`aws sso login`), a web identity (AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE, as CI pipelines do), or run " +
			"where container or instance metadata gives a role.", true
	case u.Cause() == valkey.CauseAuth:
		return "The server refused the AWS IAM token. Check: the IAM policy of the identity signing it allows " +
			"`elasticache:Connect` (or `memorydb:Connect`) on both the cache and the user; the user is IAM-enabled and, on " +
			"ElastiCache, its user id equals its user name, which username must be; aws_iam.region is the cache's region; " +
			"aws_iam.cache_name is the replication group id, the serverless cache's name or the MemoryDB cluster's name, in " +
			"lower case, and aws_iam.service matches it (elasticache, elasticache-serverless or memorydb); and the clock of " +
			"this machine is right, since a token is valid for 15 minutes from its signing time.", true
	}
	return "", false
}
