package valkey

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/config"
)

// AWS IAM authentication (ElastiCache node-based and serverless, MemoryDB): the password of
// each new connection is a SigV4-presigned request "GET https://<cache name>/?Action=connect&User=<user>",
// without its scheme, as AWS documents it
// (https://docs.aws.amazon.com/AmazonElastiCache/latest/dg/auth-iam.html,
// https://docs.aws.amazon.com/memorydb/latest/devguide/auth-iam.html). A token is valid for
// 15 minutes, which is why each connection gets its own when it opens.

// The services whose IAM tokens the provider signs (AWSIAMOptions.Service).
const (
	AWSElastiCache           = "elasticache"            // a node-based cache: the replication group's id
	AWSElastiCacheServerless = "elasticache-serverless" // a serverless cache: its name; signed with ResourceType=ServerlessCache
	AWSMemoryDB              = "memorydb"               // a MemoryDB cluster: its name
)

// AWSIAMServices are the values AWSIAMOptions.Service takes.
var AWSIAMServices = []string{AWSElastiCache, AWSElastiCacheServerless, AWSMemoryDB}

// AWSTokenExpiry is how long a token is valid: the 15 minutes ElastiCache and MemoryDB accept.
const AWSTokenExpiry = 15 * time.Minute

// TokenConnMaxLifetime is how long a connection authenticated with a cloud token is used:
// ElastiCache and MemoryDB close such connections after 12 hours, so the pool replaces them
// first, with a fresh token.
const TokenConnMaxLifetime = 11 * time.Hour

// AWSIAMOptions turn AWS IAM authentication on: Options.Username is the IAM-enabled user, and
// each connection's password is a token signed with the standard credential chain's
// credentials (environment, shared config and SSO, web identity, container or instance
// metadata). TLS is required.
type AWSIAMOptions struct {
	Service   string // one of AWSIAMServices
	CacheName string // the replication group id, the serverless cache's name or the MemoryDB cluster's name
	Region    string // "": the credential chain's region (AWS_REGION, the profile's region)
	Profile   string // "": AWS_PROFILE, then the default profile
}

// awsIAM signs the tokens of one client. creds and now are the credential chain and the
// clock; tests replace them.
type awsIAM struct {
	service, signingName, cacheName, region, user string
	creds                                         aws.CredentialsProvider
	now                                           func() time.Time
	signer                                        *v4.Signer
}

// emptyPayloadHash is the SHA-256 of an empty body, which a presigned GET signs.
const emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// newAWSIAM checks the options and loads the credential chain's configuration (files and
// environment only: credentials are fetched when a connection opens).
func newAWSIAM(ctx context.Context, o *AWSIAMOptions, user string) (*awsIAM, error) {
	if !slices.Contains(AWSIAMServices, o.Service) {
		return nil, &OptionError{Field: "AWSIAM.Service", Reason: "is " + strconv.Quote(o.Service) + ", not one of " + strings.Join(AWSIAMServices, ", ")}
	}
	if o.CacheName == "" {
		return nil, &OptionError{Field: "AWSIAM.CacheName", Reason: "is empty: the token names the cache (the replication group id, the serverless cache's name or the MemoryDB cluster's name)"}
	}
	if user == "" {
		return nil, &OptionError{Field: "Username", Reason: "is empty, but AWS IAM authentication needs the IAM-enabled user (on ElastiCache its user id, which must equal its user name)"}
	}
	var load []func(*config.LoadOptions) error
	if o.Region != "" {
		load = append(load, config.WithRegion(o.Region))
	}
	if o.Profile != "" {
		load = append(load, config.WithSharedConfigProfile(o.Profile))
	}
	cfg, err := config.LoadDefaultConfig(ctx, load...)
	if err != nil {
		return nil, &OptionError{Field: "AWSIAM", Reason: "cannot load the AWS configuration: " + err.Error()}
	}
	if cfg.Region == "" {
		return nil, &OptionError{Field: "AWSIAM.Region", Reason: "is not set, and the AWS configuration names no region: set it, or AWS_REGION, or the profile's region"}
	}
	signingName := "elasticache"
	if o.Service == AWSMemoryDB {
		signingName = "memorydb"
	}
	return &awsIAM{service: o.Service, signingName: signingName, cacheName: o.CacheName, region: cfg.Region, user: user,
		creds: cfg.Credentials, now: time.Now, signer: v4.NewSigner()}, nil
}

// token is a fresh token, signed now with the chain's current credentials.
func (a *awsIAM) token(ctx context.Context) (string, error) {
	if a.creds == nil {
		return "", &OptionError{Field: "AWSIAM", Reason: "found no AWS credentials"}
	}
	creds, err := a.creds.Retrieve(ctx)
	if err != nil {
		return "", err
	}
	query := url.Values{"Action": {"connect"}, "User": {a.user}}
	if a.service == AWSElastiCacheServerless {
		query.Set("ResourceType", "ServerlessCache")
	}
	query.Set("X-Amz-Expires", strconv.Itoa(int(AWSTokenExpiry/time.Second)))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+a.cacheName+"/?"+query.Encode(), nil)
	if err != nil {
		return "", err
	}
	signed, _, err := a.signer.PresignHTTP(ctx, creds, req, emptyPayloadHash, a.signingName, a.region, a.now().UTC())
	if err != nil {
		return "", err
	}
	return strings.TrimPrefix(signed, "https://"), nil
}
