package valkey

import (
	"context"
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

// Survey is what to know of a stream before groups are created on it, read in one
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
// once per stream for all callers in this client's life; the groups it read also answer Group.
// A missing key is a survey with Exists false; an error is returned only when the groups could
// not be read (unreachable, refused, or a key of another type).
func (c *Client) Survey(ctx context.Context, stream string) (Survey, error) {
	sg, err := c.cached(ctx, stream, "survey", func(sg streamGroups) bool { return sg.backlog != nil }, c.fetchSurvey)
	if err != nil {
		return Survey{}, err
	}
	return Survey{Exists: sg.exists, Groups: sg.groups, Backlog: sg.backlog.backlog, BacklogErr: sg.backlog.err}, nil
}

// fetchSurvey asks the server; the groups are the survey's, and answer Group too.
func (c *Client) fetchSurvey(ctx context.Context, stream string) (streamGroups, error) {
	if err := c.routed(ctx, stream); err != nil {
		return streamGroups{}, c.classify(ctx, "XINFO GROUPS", stream, err)
	}
	var groups *redis.Cmd
	var info *redis.XInfoStreamCmd
	_, _ = c.Universal().Pipelined(ctx, func(p redis.Pipeliner) error {
		groups = p.Do(ctx, "XINFO", "GROUPS", stream)
		info = p.XInfoStream(ctx, stream)
		return nil
	})
	sg, err := c.groupsReply(ctx, stream, groups.Val(), groups.Err())
	if err != nil {
		return streamGroups{}, err
	}
	sg.backlog = &backlogRead{}
	switch {
	case !sg.exists:
	case info.Err() != nil:
		sg.backlog.err = c.classify(ctx, "XINFO STREAM", stream, info.Err())
	default:
		v := info.Val()
		sg.backlog.backlog = Backlog{Length: v.Length, FirstID: v.FirstEntry.ID, LastID: v.LastEntry.ID}
	}
	return sg, nil
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
