package valkey

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Stream is a stream as XINFO STREAM reports it, with the names of its groups. EntriesAdded and
// MaxDeletedEntryID are nil when the server reports none (Redis before 7.0, and servers that
// speak its protocol, such as Upstash).
type Stream struct {
	Key               string
	Length            int64
	FirstEntryID      *string // nil when the stream holds no entries
	LastEntryID       *string // nil when the stream holds no entries
	LastGeneratedID   string
	EntriesAdded      *int64
	MaxDeletedEntryID *string
	Groups            []string
}

// Consumer is one consumer of a group as XINFO CONSUMERS reports it.
type Consumer struct {
	Name    string
	Pending int64
	IdleMs  int64
}

// StreamInfo reads one stream and its group names in one round trip (XINFO STREAM and
// XINFO GROUPS). A missing key is a *NotFoundError; any other failure is classified.
// It always asks the server: a data source wants the values as they are now.
func (c *Client) StreamInfo(ctx context.Context, key string) (Stream, error) {
	if err := c.routed(ctx, key); err != nil {
		return Stream{}, c.classify(ctx, "XINFO STREAM", key, err)
	}
	var info, groups *redis.Cmd
	_, _ = c.Universal().Pipelined(ctx, func(p redis.Pipeliner) error {
		info = p.Do(ctx, "XINFO", "STREAM", key)
		groups = p.Do(ctx, "XINFO", "GROUPS", key)
		return nil
	})
	if err := c.readErr(ctx, "XINFO STREAM", key, "", info.Err()); err != nil {
		return Stream{}, err
	}
	s, err := parseStream(info.Val())
	if err != nil {
		return Stream{}, err
	}
	s.Key = key
	if err := c.readErr(ctx, "XINFO GROUPS", key, "", groups.Err()); err != nil {
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
	if err := c.routed(ctx, stream); err != nil {
		return Group{}, nil, c.classify(ctx, "XINFO GROUPS", stream, err)
	}
	var groups *redis.Cmd
	var consumers *redis.XInfoConsumersCmd
	_, _ = c.Universal().Pipelined(ctx, func(p redis.Pipeliner) error {
		groups = p.Do(ctx, "XINFO", "GROUPS", stream)
		consumers = p.XInfoConsumers(ctx, stream, name)
		return nil
	})
	if err := c.readErr(ctx, "XINFO GROUPS", stream, "", groups.Err()); err != nil {
		return Group{}, nil, err
	}
	parsed, err := parseGroups(groups.Val())
	if err != nil {
		return Group{}, nil, err
	}
	g, found := FindGroup(parsed, name)
	if !found {
		return Group{}, nil, &NotFoundError{Stream: stream, Group: name}
	}
	if err := c.readErr(ctx, "XINFO CONSUMERS", stream, name, consumers.Err()); err != nil {
		return Group{}, nil, err
	}
	list := make([]Consumer, 0, len(consumers.Val()))
	for _, cons := range consumers.Val() {
		list = append(list, Consumer{Name: cons.Name, Pending: cons.Pending, IdleMs: cons.Idle.Milliseconds()})
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

// entryID is the ID of an entry XINFO STREAM reported, or nil when there was none.
// parseStream reads a RESP2 XINFO STREAM reply: a flat field/value array. It is parsed here, not
// by go-redis's XInfoStream, because that reads a missing entries-added as 0 and a missing
// max-deleted-entry-id as "", values a server that reports them could give.
func parseStream(reply any) (Stream, error) {
	fields, ok := reply.([]any)
	if !ok || len(fields)%2 != 0 {
		return Stream{}, fmt.Errorf("XINFO STREAM: unexpected reply %T", reply)
	}
	var s Stream
	for i := 0; i < len(fields); i += 2 {
		name, _ := fields[i].(string)
		switch value := fields[i+1]; name {
		case "length":
			s.Length, _ = value.(int64)
		case "last-generated-id":
			s.LastGeneratedID, _ = value.(string)
		case "entries-added":
			s.EntriesAdded = optionalInt(value)
		case "max-deleted-entry-id":
			if id, ok := value.(string); ok {
				s.MaxDeletedEntryID = &id
			}
		case "first-entry":
			s.FirstEntryID = rawEntryID(value)
		case "last-entry":
			s.LastEntryID = rawEntryID(value)
		}
	}
	return s, nil
}

// rawEntryID is the ID of an entry as XINFO STREAM gives it ([ID, [field, value...]]), or nil
// for none.
func rawEntryID(v any) *string {
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
