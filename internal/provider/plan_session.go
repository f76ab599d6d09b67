package provider

import (
	"context"
	"errors"
	"sync"

	"github.com/echomq/terraform-provider-valkey/internal/valkey"
)

// planSession is what plan-time checks remember during the life of one provider process
// (Terraform starts one per command, and sometimes more: the apply walk plans again in a
// process of its own): the first failure to ask the server, so that a plan of a thousand groups
// waits for the network once and warns once, and the notes already given.
type planSession struct {
	mu     sync.Mutex
	failed error
	given  map[string]bool
}

// survey answers like valkey.Client.Survey for checks made while planning. Once the server could
// not be asked (unreachable, the configuration not known yet, or any failure that is not about
// one stream), it returns that first error again without asking: first is true for the one call
// that met it, so that the caller says it once. Answers about one stream (a key of another type,
// a refusal such as NOPERM for its key, a slot whose nodes kept redirecting) are not remembered:
// other streams are still asked.
func (s *planSession) survey(ctx context.Context, client *valkey.Client, stream string) (survey valkey.Survey, first bool, err error) {
	s.mu.Lock()
	failed := s.failed
	s.mu.Unlock()
	if failed != nil {
		return valkey.Survey{}, false, failed
	}
	survey, err = client.Survey(ctx, stream)
	var (
		wrongType *valkey.WrongTypeError
		refused   *valkey.RefusedError
		redirect  *valkey.RedirectError
	)
	if err == nil || errors.As(err, &wrongType) || errors.As(err, &refused) || errors.As(err, &redirect) {
		return survey, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		return valkey.Survey{}, false, s.failed
	}
	s.failed = err
	return valkey.Survey{}, true, err
}

// once reports whether this is the first call with key, so that a note (about a stream, say)
// is given once per plan, not once per group.
func (s *planSession) once(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.given == nil {
		s.given = map[string]bool{}
	}
	if s.given[key] {
		return false
	}
	s.given[key] = true
	return true
}
