package valkey_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

// botocorePresign prints botocore's presigned "connect" request (the way AWS's and GLIDE's
// Python examples build the token), without its scheme, once for each of the comma-separated
// Unix times it is given.
const botocorePresign = `
import sys, datetime
from unittest import mock
from urllib.parse import urlencode
import botocore.session, botocore.credentials
from botocore.model import ServiceId
from botocore.signers import RequestSigner
service, region, cache, user, serverless, key, secret, session_token, times = sys.argv[1:]
fixed = None
class Fixed(datetime.datetime):
    @classmethod
    def utcnow(cls):
        return fixed
    @classmethod
    def now(cls, tz=None):
        return fixed.replace(tzinfo=tz) if tz else fixed
creds = botocore.credentials.Credentials(key, secret, session_token or None)
params = {"Action": "connect", "User": user}
if serverless == "1":
    params["ResourceType"] = "ServerlessCache"
signer = RequestSigner(ServiceId(service), region, service, "v4", creds,
                       botocore.session.get_session().get_component("event_emitter"))
for at in times.split(","):
    fixed = datetime.datetime.fromtimestamp(int(at), datetime.timezone.utc).replace(tzinfo=None)
    with mock.patch("botocore.auth.datetime.datetime", Fixed):
        url = signer.generate_presigned_url(
            {"method": "GET", "url": "https://" + cache + "/?" + urlencode(params), "body": {}, "headers": {}, "context": {}},
            operation_name="connect", expires_in=900, region_name=region)
    print(url[len("https://"):])
`

// botocoreEnv names the python with botocore that checks the tokens. botocore is optional, as
// Redis is: without it the check skips, and it fails only when botocoreEnv names a python
// that lacks it (make ci sets it, so the full run cannot pass without the check).
const botocoreEnv = "BOTOCORE_PYTHON"

// botocore runs the script with $BOTOCORE_PYTHON, else python3 (Debian: apt-get install
// python3-botocore, which make deps does).
func botocore(t *testing.T, args ...string) string {
	t.Helper()
	name := os.Getenv(botocoreEnv)
	if name == "" {
		name = "python3"
	}
	python, err := exec.LookPath(name)
	if err == nil {
		err = exec.Command(python, "-c", "import botocore").Run()
	}
	if err != nil {
		reason := name + " with botocore is needed to check AWS IAM tokens (apt-get install python3-botocore, or pip install botocore): " + err.Error()
		if os.Getenv(botocoreEnv) != "" {
			t.Fatal(reason)
		}
		t.Skip(reason)
	}
	out, err := exec.Command(python, append([]string{"-c", botocorePresign}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("botocore: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// sdkToken is the token for opts (an AWS IAM client of staticAWS's credentials) at at, as the
// SDK's signer presigns it when called directly: what the server of a test accepts at that
// time. (Its bytes are botocore's but for the order of the parameters, which is not signed;
// TestAWSIAMToken_MatchesBotocore holds the provider's to botocore's.)
func sdkToken(t *testing.T, opts valkey.Options, at time.Time) string {
	t.Helper()
	iam := opts.AWSIAM
	query := url.Values{"Action": {"connect"}, "User": {opts.Username}, "X-Amz-Expires": {"900"}}
	signingName := "elasticache"
	switch iam.Service {
	case valkey.AWSMemoryDB:
		signingName = "memorydb"
	case valkey.AWSElastiCacheServerless:
		query.Set("ResourceType", "ServerlessCache")
	}
	req, err := http.NewRequest(http.MethodGet, "https://"+iam.CacheName+"/?"+query.Encode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	creds, _ := staticAWS.Retrieve(context.Background())
	const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	signed, _, err := v4.NewSigner().PresignHTTP(context.Background(), creds, req, emptySHA256, signingName, iam.Region, at)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(signed, "https://")
}

// TestAWSIAMToken_MatchesBotocore: the token is byte for byte the one botocore presigns for
// the same request, credentials, region, user and time, for node-based ElastiCache, serverless
// ElastiCache and MemoryDB, with and without a session token (what web identity and SSO give).
func TestAWSIAMToken_MatchesBotocore(t *testing.T) {
	at := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	for _, tc := range []struct {
		service, signingName, cache, user, sessionToken, region string
		serverless                                              bool
	}{
		{service: valkey.AWSElastiCache, signingName: "elasticache", cache: "my-replication-group", user: "iam-user-01", region: "eu-west-1"},
		{service: valkey.AWSElastiCacheServerless, signingName: "elasticache", cache: "my-serverless", user: "ci-runner", region: "us-east-1",
			serverless: true, sessionToken: "FwoGZXIvYXdzEJr//////////wEaDAbc+def/ghi=="},
		{service: valkey.AWSMemoryDB, signingName: "memorydb", cache: "my-memorydb-cluster", user: "app user+1", region: "ap-southeast-2",
			sessionToken: "IQoJb3JpZ2luX2VjEAAaCXVzLWVhc3QtMSJHMEUCIQ"},
	} {
		t.Run(tc.service, func(t *testing.T) {
			const key, secret = "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
			creds := credentials.NewStaticCredentialsProvider(key, secret, tc.sessionToken)
			opts := valkey.Options{URL: "valkeys://" + tc.cache + ".example:6379", Username: tc.user,
				AWSIAM: &valkey.AWSIAMOptions{Service: tc.service, CacheName: tc.cache, Region: tc.region}}
			got, err := valkey.AWSIAMToken(opts, creds, at)
			if err != nil {
				t.Fatal(err)
			}
			serverless := "0"
			if tc.serverless {
				serverless = "1"
			}
			want := botocore(t, tc.signingName, tc.region, tc.cache, tc.user, serverless, key, secret, tc.sessionToken, strconv.FormatInt(at.Unix(), 10))
			if gotHost, gotParams := tokenParts(got); !slices.Equal(gotParams, tokenPartsParams(want)) || gotHost != tokenHost(want) {
				t.Errorf("token differs from botocore's:\n got %s\nwant %s", got, want)
			}
		})
	}
}

// tokenParts splits a token into its host and path, and its query's parameters exactly as
// written (still escaped), sorted. SigV4 signs the sorted canonical query, so the order the
// parameters are written in is not signed: botocore writes them in the order they were added,
// the Go SDK sorts them. Every byte of every parameter, the signature among them, must match.
func tokenParts(token string) (string, []string) {
	host, query, _ := strings.Cut(token, "?")
	params := strings.Split(query, "&")
	slices.Sort(params)
	return host, params
}

func tokenHost(token string) string          { host, _ := tokenParts(token); return host }
func tokenPartsParams(token string) []string { _, params := tokenParts(token); return params }

// staticAWS is credentials a test knows.
var staticAWS aws.CredentialsProvider = credentials.NewStaticCredentialsProvider(staticKey, staticSecret, "")

const staticKey, staticSecret = "AKIDTEST", "test-secret"

// TestAWSIAM_WithSentinelSaysHowEachServiceIsReached: ElastiCache and MemoryDB run no Sentinel,
// so aws_iam with sentinel is refused, and the refusal says what to set instead. A serverless
// cache is a cluster that shows its clients one endpoint serving every slot (AWS: CLUSTER SLOTS
// and CLUSTER SHARDS return "the single virtual shard"), so it is reached as a single server
// (url) or as a cluster seeded with that endpoint (cluster): the message offers both.
func TestAWSIAM_WithSentinelSaysHowEachServiceIsReached(t *testing.T) {
	_, err := valkey.NewClient(valkey.Options{Username: "iam-user", TLS: &valkey.TLSOptions{},
		Sentinel: &valkey.SentinelOptions{MasterName: "primary", Addrs: []string{"127.0.0.1:1"}},
		AWSIAM:   &valkey.AWSIAMOptions{Service: "elasticache-serverless", CacheName: "my-cache", Region: "eu-west-1"}})
	var optionErr *valkey.OptionError
	if !errors.As(err, &optionErr) || optionErr.Field != "AWSIAM" {
		t.Fatalf("NewClient = %v, want an OptionError on AWSIAM", err)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`no Sentinel`),
		regexp.MustCompile(`static password, never an IAM token`),
		regexp.MustCompile(`remove sentinel`),
		regexp.MustCompile(`url at [^;]*primary endpoint`),
		regexp.MustCompile(`url at [^;]*serverless cache's endpoint`),
		regexp.MustCompile(`cluster to [^;]*configuration endpoint`),
		regexp.MustCompile(`cluster to [^;]*serverless cache's endpoint`),
		regexp.MustCompile(`cluster to [^;]*MemoryDB cluster's endpoint`),
	} {
		if !want.MatchString(optionErr.Reason) {
			t.Errorf("the refusal does not match %q:\n%s", want, optionErr.Reason)
		}
	}
	if strings.Contains(optionErr.Reason, "serverless caches and MemoryDB are reached in cluster mode") {
		t.Errorf("the refusal says serverless caches are reached in cluster mode only:\n%s", optionErr.Reason)
	}
}
