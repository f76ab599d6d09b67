package valkey

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/sync/singleflight"
)

// Group is one consumer group as XINFO GROUPS reports it. EntriesRead and Lag are nil when
// the server reports none.
type Group struct {
	Name            string
	Consumers       int64
	Pending         int64
	LastDeliveredID string
	EntriesRead     *int64
	Lag             *int64
}

// Group finds one group on stream. found is false when the stream or the group is missing;
// err is set when the server could not be reached, refused XINFO GROUPS, or holds another
// type at the key. Answers are shared per stream for the client's life, and always reflect
// the groups this client's EnsureGroup made; counters such as pending may be as old as that.
func (c *Client) Group(ctx context.Context, stream, name string) (g Group, found bool, err error) {
	sg, err := c.cached(ctx, stream, "groups", func(streamGroups) bool { return true }, c.fetchGroups)
	if err != nil || !sg.exists {
		return Group{}, false, err
	}
	g, found = FindGroup(sg.groups, name)
	return g, found, nil
}

// cached answers stream from the cache when the entry there will do (usable), and otherwise
// fetches once for every caller of the same kind in the same generation, storing the answer
// before the flight ends so that no caller falls between: a refresh of many groups on one
// stream costs one fetch. Callers share a fetch only within one generation, so none gets an
// answer older than an EnsureGroup this client ran. The fetch outlives a caller that gives up, since
// others may wait for it; the client's own timeouts bound it.
func (c *Client) cached(ctx context.Context, stream, kind string, usable func(streamGroups) bool,
	fetch func(context.Context, string) (streamGroups, error)) (streamGroups, error) {
	if sg, ok := c.groups.load(stream); ok && usable(sg) {
		return sg, nil
	}
	gen := c.groups.generation(stream)
	v, err, _ := c.groups.flight.Do(fmt.Sprintf("%s/%d/%s", kind, gen, stream), func() (any, error) {
		// A caller that missed the cache just before an earlier fetch stored its answer
		// starts a new flight: it finds that answer here instead of asking again.
		if sg, ok := c.groups.load(stream); ok && usable(sg) {
			return sg, nil
		}
		sg, err := fetch(context.WithoutCancel(ctx), stream)
		if err == nil {
			c.groups.store(stream, gen, sg)
		}
		return sg, err
	})
	if err != nil {
		return streamGroups{}, err
	}
	sg, _ := v.(streamGroups) // the flight only ever returns a streamGroups
	return sg, nil
}

// fetchGroups asks the server: XINFO GROUPS.
func (c *Client) fetchGroups(ctx context.Context, stream string) (streamGroups, error) {
	if err := c.routed(ctx, stream); err != nil {
		return streamGroups{}, c.classify(ctx, "XINFO GROUPS", stream, err)
	}
	cmd := c.Universal().Do(ctx, "XINFO", "GROUPS", stream)
	return c.groupsReply(ctx, stream, cmd.Val(), cmd.Err())
}

// groupsReply reads an XINFO GROUPS reply (raw) or its error, with a missing key read as
// "no stream".
func (c *Client) groupsReply(ctx context.Context, stream string, raw any, err error) (streamGroups, error) {
	if msg, isReply := reply(err); isReply && msg == "ERR no such key" {
		return streamGroups{exists: false}, nil
	}
	if err != nil {
		return streamGroups{}, c.classify(ctx, "XINFO GROUPS", stream, err)
	}
	groups, err := parseGroups(raw)
	if err != nil {
		return streamGroups{}, err
	}
	return streamGroups{exists: true, groups: groups}, nil
}

// FindGroup picks the group called name out of a list of groups.
func FindGroup(groups []Group, name string) (Group, bool) {
	for _, g := range groups {
		if g.Name == name {
			return g, true
		}
	}
	return Group{}, false
}

// parseGroups reads a RESP2 XINFO GROUPS reply: an array of flat field/value arrays. It is
// parsed here, not by go-redis's XInfoGroups, because that reads a nil entries-read as 0.
func parseGroups(reply any) ([]Group, error) {
	rows, ok := reply.([]any)
	if !ok {
		return nil, fmt.Errorf("XINFO GROUPS: unexpected reply %T", reply)
	}
	groups := make([]Group, 0, len(rows))
	for _, row := range rows {
		fields, ok := row.([]any)
		if !ok || len(fields)%2 != 0 {
			return nil, fmt.Errorf("XINFO GROUPS: unexpected field list %T", row)
		}
		var g Group
		for i := 0; i < len(fields); i += 2 {
			name, _ := fields[i].(string)
			switch value := fields[i+1]; name {
			case "name":
				g.Name, _ = value.(string)
			case "consumers":
				g.Consumers, _ = value.(int64)
			case "pending":
				g.Pending, _ = value.(int64)
			case "last-delivered-id":
				g.LastDeliveredID, _ = value.(string)
			case "entries-read":
				g.EntriesRead = optionalInt(value)
			case "lag":
				g.Lag = optionalInt(value)
			}
		}
		groups = append(groups, g)
	}
	return groups, nil
}

func optionalInt(v any) *int64 {
	if n, ok := v.(int64); ok {
		return &n
	}
	return nil
}

type streamGroups struct {
	exists  bool
	groups  []Group
	backlog *backlogRead // set when the answer came from Survey, which reads the backlog too
}

// backlogRead is Survey's XINFO STREAM answer: the backlog, or why it could not be read.
type backlogRead struct {
	backlog Backlog
	err     error
}

// groupCache keeps the last XINFO GROUPS answer per stream for the client's life. A
// generation per stream stops an answer fetched before a Create from overwriting the
// fresher one the Create read back.
type groupCache struct {
	mu      sync.Mutex
	streams map[string]streamGroups
	gens    map[string]uint64
	flight  singleflight.Group
}

func (gc *groupCache) load(stream string) (streamGroups, bool) {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	sg, ok := gc.streams[stream]
	return sg, ok
}

func (gc *groupCache) generation(stream string) uint64 {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	return gc.gens[stream]
}

// invalidate forgets stream's answer; fetches already under way will not store theirs.
func (gc *groupCache) invalidate(stream string) {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	if gc.gens == nil {
		gc.gens = map[string]uint64{}
	}
	delete(gc.streams, stream)
	gc.gens[stream]++
}

// replaceAfterCreate ends an EnsureGroup on stream that began at generation gen: it keeps its
// XINFO GROUPS read-back when no other EnsureGroup or invalidation touched the stream
// meanwhile, and forgets the stream otherwise. Either way, fetches begun before the XGROUP
// CREATE will not store their answers.
func (gc *groupCache) replaceAfterCreate(stream string, gen uint64, sg streamGroups) {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	if gc.gens == nil {
		gc.gens = map[string]uint64{}
	}
	if gc.streams == nil {
		gc.streams = map[string]streamGroups{}
	}
	if gc.gens[stream] == gen {
		gc.streams[stream] = withBacklogOf(gc.streams[stream], sg)
	} else {
		delete(gc.streams, stream)
	}
	gc.gens[stream]++
}

// store keeps sg unless stream changed generation since the caller's read began. A survey
// already there outlives a plain XINFO GROUPS answer of the same generation: its backlog stays.
func (gc *groupCache) store(stream string, gen uint64, sg streamGroups) {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	if gc.gens[stream] != gen {
		return
	}
	if gc.streams == nil {
		gc.streams = map[string]streamGroups{}
	}
	gc.streams[stream] = withBacklogOf(gc.streams[stream], sg)
}

// withBacklogOf is sg, carrying old's backlog when sg has none: neither a plain XINFO GROUPS
// answer nor an XGROUP CREATE changes the backlog, only the groups.
func withBacklogOf(old, sg streamGroups) streamGroups {
	if sg.backlog == nil {
		sg.backlog = old.backlog
	}
	return sg
}
