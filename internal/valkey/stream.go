package valkey

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Stream is a stream as XINFO STREAM reports it, with the names of its groups.
type Stream struct {
	Key               string
	Length            int64
	FirstEntryID      *string // nil when the stream holds no entries
	LastEntryID       *string // nil when the stream holds no entries
	LastGeneratedID   string
	EntriesAdded      int64
	MaxDeletedEntryID string
	Groups            []string
}

// Consumer is one consumer of a group as XINFO CONSUMERS reports it.
type Consumer struct {
	Name    string
	Pending int64
	IdleMs  int64
}

// NotFoundError reports a stream, or a group on it, that the server does not hold. Group is
// empty when the stream itself is missing.
type NotFoundError struct {
	Stream string
	Group  string
}

func (e *NotFoundError) Error() string {
	if e.Group == "" {
		return fmt.Sprintf("stream %q does not exist", e.Stream)
	}
	return fmt.Sprintf("group %q does not exist on stream %q", e.Group, e.Stream)
}

// StreamInfo reads one stream and its group names in one round trip (XINFO STREAM and
// XINFO GROUPS). A missing key is a *NotFoundError; any other failure is classified.
// It always asks the server: a data source wants the values as they are now.
func (c *Client) StreamInfo(ctx context.Context, key string) (Stream, error) {
	var info, groups *redis.Cmd
	_, pipeErr := c.Universal().Pipelined(ctx, func(p redis.Pipeliner) error {
		info = p.Do(ctx, "XINFO", "STREAM", key)
		groups = p.Do(ctx, "XINFO", "GROUPS", key)
		return nil
	})
	if err := c.readErr(ctx, "XINFO STREAM", key, "", cmdErr(info, pipeErr)); err != nil {
		return Stream{}, err
	}
	s, err := parseStream(key, info.Val())
	if err != nil {
		return Stream{}, err
	}
	if err := c.readErr(ctx, "XINFO GROUPS", key, "", cmdErr(groups, pipeErr)); err != nil {
		return Stream{}, err
	}
	parsed, err := parseGroups(groups.Val())
	if err != nil {
		return Stream{}, err
	}
	s.Groups = make([]string, 0, len(parsed))
	for _, g := range parsed {
		s.Groups = append(s.Groups, g.Name)
	}
	return s, nil
}

// GroupDetail reads one group and its consumers in one round trip (XINFO GROUPS and XINFO
// CONSUMERS). A missing stream or group is a *NotFoundError; any other failure is classified.
// Unlike Group, it bypasses the per-stream cache: a data source wants the values as they are now.
func (c *Client) GroupDetail(ctx context.Context, stream, name string) (Group, []Consumer, error) {
	var groups, consumers *redis.Cmd
	_, pipeErr := c.Universal().Pipelined(ctx, func(p redis.Pipeliner) error {
		groups = p.Do(ctx, "XINFO", "GROUPS", stream)
		consumers = p.Do(ctx, "XINFO", "CONSUMERS", stream, name)
		return nil
	})
	if err := c.readErr(ctx, "XINFO GROUPS", stream, "", cmdErr(groups, pipeErr)); err != nil {
		return Group{}, nil, err
	}
	parsed, err := parseGroups(groups.Val())
	if err != nil {
		return Group{}, nil, err
	}
	g, found := findGroup(parsed, name)
	if !found {
		return Group{}, nil, &NotFoundError{Stream: stream, Group: name}
	}
	if err := c.readErr(ctx, "XINFO CONSUMERS", stream, name, cmdErr(consumers, pipeErr)); err != nil {
		return Group{}, nil, err
	}
	list, err := parseConsumers(consumers.Val())
	if err != nil {
		return Group{}, nil, err
	}
	return g, list, nil
}

// readErr turns the error of one read on stream into a typed error. "ERR no such key" and
// NOGROUP (the group vanished between two commands) become a *NotFoundError.
func (c *Client) readErr(ctx context.Context, command, stream, group string, err error) error {
	if err == nil {
		return nil
	}
	if msg, isReply := reply(err); isReply {
		switch {
		case msg == "ERR no such key":
			return &NotFoundError{Stream: stream}
		case group != "" && strings.HasPrefix(msg, "NOGROUP"):
			return &NotFoundError{Stream: stream, Group: group}
		}
	}
	return c.classify(ctx, command, stream, err)
}

// cmdErr is cmd's error, or the pipeline's when the connection failed before any command
// ran: go-redis reports that on the pipeline only.
func cmdErr(cmd *redis.Cmd, pipeErr error) error {
	if err := cmd.Err(); err != nil {
		return err
	}
	if _, isReply := reply(pipeErr); pipeErr != nil && !isReply {
		return pipeErr
	}
	return nil
}

// parseStream reads a RESP2 XINFO STREAM reply: one flat field/value array.
func parseStream(key string, reply any) (Stream, error) {
	s := Stream{Key: key}
	err := eachField("XINFO STREAM", reply, func(name string, value any) {
		switch name {
		case "length":
			s.Length, _ = value.(int64)
		case "last-generated-id":
			s.LastGeneratedID, _ = value.(string)
		case "entries-added":
			s.EntriesAdded, _ = value.(int64)
		case "max-deleted-entry-id":
			s.MaxDeletedEntryID, _ = value.(string)
		case "first-entry":
			s.FirstEntryID = entryID(value)
		case "last-entry":
			s.LastEntryID = entryID(value)
		}
	})
	if err != nil {
		return Stream{}, err
	}
	return s, nil
}

// entryID is the ID of an [id, [field, value, ...]] entry, or nil for a nil reply.
func entryID(v any) *string {
	entry, ok := v.([]any)
	if !ok || len(entry) == 0 {
		return nil
	}
	id, ok := entry[0].(string)
	if !ok {
		return nil
	}
	return &id
}

// parseConsumers reads a RESP2 XINFO CONSUMERS reply: an array of flat field/value arrays.
func parseConsumers(reply any) ([]Consumer, error) {
	var consumers []Consumer
	err := eachRow("XINFO CONSUMERS", reply, func(row any) error {
		var cons Consumer
		err := eachField("XINFO CONSUMERS", row, func(name string, value any) {
			switch name {
			case "name":
				cons.Name, _ = value.(string)
			case "pending":
				cons.Pending, _ = value.(int64)
			case "idle":
				cons.IdleMs, _ = value.(int64)
			}
		})
		consumers = append(consumers, cons)
		return err
	})
	return consumers, err
}
