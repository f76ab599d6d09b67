package valkey

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// NewClientWithAWS is NewClient with the AWS credentials and the clock replaced, so that tests
// sign tokens with credentials they know at times they choose, and never sleep.
func NewClientWithAWS(opts Options, creds aws.CredentialsProvider, now func() time.Time) (*Client, error) {
	s, err := resolve(opts)
	if err != nil {
		return nil, err
	}
	if s.aws != nil {
		s.aws.creds, s.aws.now = creds, now
	}
	return newClient(s), nil
}

// AWSIAMToken is the token a client made from opts would send at now with creds.
func AWSIAMToken(opts Options, creds aws.CredentialsProvider, now time.Time) (string, error) {
	s, err := resolve(opts)
	if err != nil {
		return "", err
	}
	s.aws.creds, s.aws.now = creds, func() time.Time { return now }
	return s.aws.token(context.Background())
}
