package valkey

import (
	"context"
	"errors"
	"hash/maphash"
	"iter"
	"slices"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// DefaultListPageSize is how many keys one SCAN asks for (its COUNT), and how many streams
// share one pipeline of XINFO GROUPS, unless ListOptions says otherwise.
const DefaultListPageSize = 1000

// ListOptions says which streams ListGroups reads: the named ones first, then the ones whose
// keys match a pattern. A stream both named and matched is read once.
type ListOptions struct {
	// Streams are stream keys, read as they are. A key that does not exist, or holds another
	// type, yields nothing.
	Streams []string
	// Match is a glob, as SCAN ... MATCH takes it; empty means no scan. Only keys that hold
	// streams are read (SCAN ... TYPE stream), on every primary of a cluster.
	Match string
	// PageSize is the SCAN COUNT and the most streams one pipeline reads; zero means
	// DefaultListPageSize.
	PageSize int
}

// ListedGroup is one group ListGroups found, with the stream it is on.
type ListedGroup struct {
	Stream string
	Group
}

// ListGroups reads the groups of the streams opts names, page by page: each SCAN page (or
// each PageSize named streams) costs one pipeline of XINFO GROUPS, one round trip per page
// on a single server and one per primary holding keys of the page in a cluster. Groups are
// yielded as each page is read, and only one page is held at a time; what is remembered
// across pages is a 64-bit hash per stream read, so that a key SCAN returns twice (it may,
// while the keyspace is resized) is read once.
//
// The first error ends the listing: it is yielded with a ListedGroup that names the stream
// being read, or none while scanning. Errors are this package's typed errors (unreachable,
// refused); a key of another type is skipped, never an error. Listing always asks the
// server, and leaves the client's per-stream cache alone.
func (c *Client) ListGroups(ctx context.Context, opts ListOptions) iter.Seq2[ListedGroup, error] {
	page := opts.PageSize
	if page <= 0 {
		page = DefaultListPageSize
	}
	return func(yield func(ListedGroup, error) bool) {
		l := &lister{c: c, seen: streamSet{seed: maphash.MakeSeed(), hashes: map[uint64]struct{}{}}, yield: yield}
		for streams := range slices.Chunk(opts.Streams, page) {
			if !l.readPage(ctx, streams) {
				return
			}
		}
		if opts.Match == "" {
			return
		}
		primaries, err := c.primaries(ctx)
		if err != nil {
			yield(ListedGroup{}, c.classify(ctx, "SCAN", opts.Match, err))
			return
		}
		for _, primary := range primaries {
			if !l.scan(ctx, primary, opts.Match, int64(page)) {
				return
			}
		}
	}
}

// lister is one ListGroups run: the streams read so far, and where the groups go.
type lister struct {
	c     *Client
	seen  streamSet
	yield func(ListedGroup, error) bool
}

// scan walks one primary's keyspace with SCAN ... MATCH ... TYPE stream, reading each page as
// it comes. It returns false when the listing must stop.
func (l *lister) scan(ctx context.Context, primary scanTarget, match string, count int64) bool {
	var cursor uint64
	for {
		keys, next, err := primary.client.ScanType(ctx, cursor, match, count, "stream").Result()
		if err != nil {
			l.yield(ListedGroup{}, withAddr(l.c.classify(ctx, "SCAN", match, err), primary.addr))
			return false
		}
		if !l.readPage(ctx, keys) {
			return false
		}
		if cursor = next; cursor == 0 {
			return true
		}
	}
}

// readPage reads the groups of streams not read before in one pipeline and yields them. It
// returns false when the listing must stop.
func (l *lister) readPage(ctx context.Context, streams []string) bool {
	streams = l.seen.addNew(streams)
	if len(streams) == 0 {
		return true
	}
	if err := l.c.routed(ctx, streams[0]); err != nil {
		l.yield(ListedGroup{Stream: streams[0]}, l.c.classify(ctx, "XINFO GROUPS", streams[0], err))
		return false
	}
	cmds := make([]*redis.Cmd, len(streams))
	_, _ = l.c.Universal().Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, stream := range streams {
			cmds[i] = p.Do(ctx, "XINFO", "GROUPS", stream)
		}
		return nil
	})
	for i, stream := range streams {
		groups, err := l.c.listedGroups(ctx, stream, cmds[i])
		if err != nil {
			l.yield(ListedGroup{Stream: stream}, err)
			return false
		}
		for _, g := range groups {
			if !l.yield(ListedGroup{Stream: stream, Group: g}, nil) {
				return false
			}
		}
	}
	return true
}

// listedGroups reads one XINFO GROUPS reply of a listing: a missing key, or a key that holds
// another type (named, or changed since SCAN saw a stream there), has no groups.
func (c *Client) listedGroups(ctx context.Context, stream string, cmd *redis.Cmd) ([]Group, error) {
	err := cmd.Err()
	if msg, isReply := reply(err); isReply && strings.HasPrefix(msg, "WRONGTYPE") {
		return nil, nil
	}
	sg, err := c.groupsReply(ctx, stream, cmd.Val(), err)
	return sg.groups, err
}

// scanTarget is a server SCAN must visit, and the address its errors name.
type scanTarget struct {
	client *redis.Client
	addr   string
}

// primaries are the servers SCAN must visit: every primary of a cluster, in address order, or
// the one server (the primary Sentinel names, with a failover client).
func (c *Client) primaries(ctx context.Context) ([]scanTarget, error) {
	switch u := c.Universal().(type) {
	case *redis.Client:
		return []scanTarget{{client: u, addr: c.Addr()}}, nil
	case *redis.ClusterClient:
		if err := c.routed(ctx, ""); err != nil { // any key: ForEachMaster needs the slot map too
			return nil, err
		}
		var (
			mu        sync.Mutex
			primaries []scanTarget
		)
		err := u.ForEachMaster(ctx, func(_ context.Context, primary *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			primaries = append(primaries, scanTarget{client: primary, addr: primary.Options().Addr})
			return nil
		})
		slices.SortFunc(primaries, func(a, b scanTarget) int { return strings.Compare(a.addr, b.addr) })
		return primaries, err
	}
	return nil, errors.New("ListGroups: unexpected go-redis client type")
}

// withAddr names addr, the server a SCAN failed on, in err: in a cluster, the node at fault
// rather than the client's seed addresses.
func withAddr(err error, addr string) error {
	var (
		refused     *RefusedError
		unreachable *UnreachableError
	)
	switch {
	case errors.As(err, &refused):
		refused.Addr = addr
	case errors.As(err, &unreachable):
		unreachable.Addr = addr
	}
	return err
}

// streamSet remembers the streams a listing read, as 64-bit hashes of their keys, not the keys
// themselves: 8 bytes a stream and the map's slack, where a key would cost its length and more.
// Two keys of one listing share a hash with a probability near n²/2⁶⁵ (below 10⁻⁷ for a
// million streams).
type streamSet struct {
	seed   maphash.Seed
	hashes map[uint64]struct{}
}

// addNew records streams and returns the ones not recorded before, in order.
func (s *streamSet) addNew(streams []string) []string {
	fresh := make([]string, 0, len(streams))
	for _, stream := range streams {
		h := maphash.String(s.seed, stream)
		if _, ok := s.hashes[h]; ok {
			continue
		}
		s.hashes[h] = struct{}{}
		fresh = append(fresh, stream)
	}
	return fresh
}
