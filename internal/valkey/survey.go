package valkey

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Backlog is what a stream holds at one moment: how many entries, and the IDs of the first and
// last. The IDs are empty when the stream is.
type Backlog struct {
	Length  int64
	FirstID string
	LastID  string
}

// Survey is what a plan needs to know of a stream before groups are created on it, read in one
// round trip: whether it exists, its groups, and its backlog.
type Survey struct {
	Exists  bool
	Groups  []Group
	Backlog Backlog
	// BacklogErr is set when the backlog could not be read although the groups could (XINFO
	// STREAM refused, for example NOPERM for a user without xinfo|stream): Backlog is then empty.
	BacklogErr error
}

// Survey reads stream's groups and backlog with XINFO GROUPS and XINFO STREAM in one pipeline,
// once per stream for all callers in this client's life (one Terraform command); the groups it
// read also answer later calls of Group and Groups. A missing key is a survey with Exists false;
// an error is returned only when the groups could not be read (unreachable, or a key of
// another type).
func (c *Client) Survey(ctx context.Context, stream string) (Survey, error) {
	if s, ok := c.groups.loadSurvey(stream); ok {
		return s, nil
	}
	gen := c.groups.generation(stream)
	v, err, _ := c.groups.flight.Do(fmt.Sprintf("survey/%d/%s", gen, stream), func() (any, error) {
		if s, ok := c.groups.loadSurvey(stream); ok {
			return s, nil
		}
		s, err := c.fetchSurvey(ctx, stream)
		if err == nil {
			c.groups.store(stream, gen, streamGroups{exists: s.Exists, groups: s.Groups, survey: &s})
		}
		return s, err
	})
	if err != nil {
		return Survey{}, err
	}
	s, _ := v.(Survey) // the flight only ever returns a Survey
	return s, nil
}

func (c *Client) fetchSurvey(ctx context.Context, stream string) (Survey, error) {
	var groups *redis.Cmd
	var info *redis.XInfoStreamCmd
	_, pipeErr := c.Universal().Pipelined(ctx, func(p redis.Pipeliner) error {
		groups = p.Do(ctx, "XINFO", "GROUPS", stream)
		info = p.XInfoStream(ctx, stream)
		return nil
	})
	err := cmdErr(groups, pipeErr)
	if msg, isReply := reply(err); isReply && msg == "ERR no such key" {
		return Survey{}, nil
	}
	if err != nil {
		return Survey{}, c.classify(ctx, "XINFO GROUPS", stream, err)
	}
	parsed, err := parseGroups(groups.Val())
	if err != nil {
		return Survey{}, err
	}
	s := Survey{Exists: true, Groups: parsed}
	if err := info.Err(); err != nil {
		s.BacklogErr = c.classify(ctx, "XINFO STREAM", stream, err)
		return s, nil
	}
	v := info.Val()
	s.Backlog = Backlog{Length: v.Length, FirstID: v.FirstEntry.ID, LastID: v.LastEntry.ID}
	return s, nil
}

// EntryTime is when the entry with this ID was added, as its ID says: an entry ID's first part
// is a Unix time in milliseconds. ok is false for an ID not of the form <ms>-<seq>.
func EntryTime(id string) (t time.Time, ok bool) {
	ms, _, found := strings.Cut(id, "-")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !found || err != nil || n < 0 {
		return time.Time{}, false
	}
	return time.UnixMilli(n).UTC(), true
}
