package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/echomq/terraform-provider-valkey/internal/faultproxy"
)

// The campaign's model of the server: what each stream key holds, and of each group who
// created it, with which ID, in which step. It changes only by what the campaign did itself
// (out-of-band changes) and by the XGROUP CREATE commands the proxies saw reach the server,
// with the replies the server gave them; after every step it must equal what the server holds.
// Nothing in the campaign reads a group (no XREADGROUP), so a group stays where it was created.

type chaosModel struct {
	keys map[string]*modelKey
}

type modelKey struct {
	Type   string // "stream", or the type of another value ("string", "hash")
	LastID string // a stream's last-generated-id
	Length int64  // a stream's entries
	Groups map[string]modelGroup
}

type modelGroup struct {
	LastDelivered string // where it was created: "0-0" for ID 0, the stream's last ID for $
	By            string // "provider" or "consumer"
	ID            string // the ID of the XGROUP CREATE that made it
	Step          int
}

func newChaosModel() *chaosModel { return &chaosModel{keys: map[string]*modelKey{}} }

func (m *chaosModel) clone() *chaosModel {
	c := newChaosModel()
	for k, v := range m.keys {
		cp := *v
		cp.Groups = maps.Clone(v.Groups)
		c.keys[k] = &cp
	}
	return c
}

// group is the group name on stream, if the model holds it.
func (m *chaosModel) group(stream, name string) (modelGroup, bool) {
	k, ok := m.keys[stream]
	if !ok || k.Type != "stream" {
		return modelGroup{}, false
	}
	g, ok := k.Groups[name]
	return g, ok
}

func (m *chaosModel) has(stream, name string) bool {
	_, ok := m.group(stream, name)
	return ok
}

// createReply is the first word of what XGROUP CREATE stream name id MKSTREAM answers now.
func (m *chaosModel) createReply(stream, name string) string {
	k, ok := m.keys[stream]
	switch {
	case !ok:
		return "+OK"
	case k.Type != "stream":
		return "-WRONGTYPE"
	}
	if _, exists := k.Groups[name]; exists {
		return "-BUSYGROUP"
	}
	return "+OK"
}

// create is XGROUP CREATE stream name id MKSTREAM as the server runs it.
func (m *chaosModel) create(stream, name, id, by string, step int) string {
	reply := m.createReply(stream, name)
	if reply != "+OK" {
		return reply
	}
	k, ok := m.keys[stream]
	if !ok {
		k = &modelKey{Type: "stream", LastID: "0-0", Groups: map[string]modelGroup{}}
		m.keys[stream] = k
	}
	at := "0-0"
	if id == "$" {
		at = k.LastID
	}
	k.Groups[name] = modelGroup{LastDelivered: at, By: by, ID: id, Step: step}
	return reply
}

// applyCreates adds what the step's XGROUP CREATE commands did. A create whose reply came back
// to the proxy is applied with that reply, which must be the model's own prediction, unless it
// was a redirect (-MOVED, -ASK: redirected), which says it did not run; one that reached the
// server with no reply back may or may not have run, and snap (the server after the step)
// decides.
func (m *chaosModel) applyCreates(log []faultproxy.Record, snap *chaosModel, step int) []string {
	var problems []string
	for _, r := range log {
		if r.Command != "XGROUP CREATE" || !r.Forwarded || len(r.Args) < 3 {
			continue
		}
		stream, name, id := r.Args[0], r.Args[1], r.Args[2]
		want := m.createReply(stream, name)
		switch got, _, _ := strings.Cut(r.Reply, " "); {
		case redirected(r): // the node does not serve the key: it did not run there
		case r.Ran && got != want:
			problems = append(problems, fmt.Sprintf("XGROUP CREATE %s %s %s answered %q; the model expected %s", stream, name, id, r.Reply, want))
		case r.Ran:
			m.create(stream, name, id, "provider", step)
		case want == "+OK" && snap.has(stream, name):
			m.create(stream, name, id, "provider", step)
		}
	}
	return problems
}

// readChaosServer reads what the server holds under the campaign's keys, through the direct
// clients.
func readChaosServer(ctx context.Context, tg *chaosTarget) (*chaosModel, error) {
	m := newChaosModel()
	for _, key := range chaosStreams {
		rdb := tg.admin(key)
		kind, err := rdb.Type(ctx, key).Result()
		if err != nil {
			return nil, fmt.Errorf("TYPE %s: %w", key, err)
		}
		if kind == "none" {
			continue
		}
		k := &modelKey{Type: kind}
		m.keys[key] = k
		if kind != "stream" {
			continue
		}
		info, err := rdb.XInfoStream(ctx, key).Result()
		if err != nil {
			return nil, fmt.Errorf("XINFO STREAM %s: %w", key, err)
		}
		k.LastID, k.Length = info.LastGeneratedID, info.Length
		groups, err := rdb.XInfoGroups(ctx, key).Result()
		if err != nil {
			return nil, fmt.Errorf("XINFO GROUPS %s: %w", key, err)
		}
		k.Groups = map[string]modelGroup{}
		for _, g := range groups {
			k.Groups[g.Name] = modelGroup{LastDelivered: g.LastDeliveredID}
		}
	}
	return m, nil
}

// diff lists where the server (m, as read) differs from the model.
func (m *chaosModel) diff(model *chaosModel) []string {
	var out []string
	keys := slices.Sorted(maps.Keys(m.keys))
	for k := range model.keys {
		if m.keys[k] == nil {
			keys = append(keys, k)
		}
	}
	for _, key := range keys {
		got, want := m.keys[key], model.keys[key]
		switch {
		case got == nil:
			out = append(out, fmt.Sprintf("%s: the model holds a %s, the server nothing", key, want.Type))
			continue
		case want == nil:
			out = append(out, fmt.Sprintf("%s: the server holds a %s (groups %v), the model nothing", key, got.Type, slices.Sorted(maps.Keys(got.Groups))))
			continue
		case got.Type != want.Type:
			out = append(out, fmt.Sprintf("%s: the server holds a %s, the model a %s", key, got.Type, want.Type))
			continue
		case got.LastID != want.LastID || got.Length != want.Length:
			out = append(out, fmt.Sprintf("%s: last ID %s and %d entries on the server, %s and %d in the model", key, got.LastID, got.Length, want.LastID, want.Length))
		}
		for _, name := range unionKeys(got.Groups, want.Groups) {
			g, onServer := got.Groups[name]
			w, inModel := want.Groups[name]
			switch {
			case !onServer:
				out = append(out, fmt.Sprintf("%s: group %q is in the model (made by %s in step %d) but not on the server", key, name, w.By, w.Step))
			case !inModel:
				out = append(out, fmt.Sprintf("%s: group %q is on the server but not in the model", key, name))
			case g.LastDelivered != w.LastDelivered:
				out = append(out, fmt.Sprintf("%s: group %q is at %s on the server, %s in the model (made by %s with ID %s in step %d)",
					key, name, g.LastDelivered, w.LastDelivered, w.By, w.ID, w.Step))
			}
		}
	}
	return out
}

func unionKeys(a, b map[string]modelGroup) []string {
	set := map[string]bool{}
	for k := range a {
		set[k] = true
	}
	for k := range b {
		set[k] = true
	}
	out := slices.Collect(maps.Keys(set))
	sort.Strings(out)
	return out
}

// groups lists every (stream, name) the model holds, sorted.
func (m *chaosModel) groups() [][2]string {
	var out [][2]string
	for _, key := range slices.Sorted(maps.Keys(m.keys)) {
		for _, name := range slices.Sorted(maps.Keys(m.keys[key].Groups)) {
			out = append(out, [2]string{key, name})
		}
	}
	return out
}

// outOfBand changes the server as another client would, through the direct clients, and the
// model with it. It returns what it did.
func (m *chaosModel) outOfBand(ctx context.Context, tg *chaosTarget, pick func(int) int, declared []chaosResource, step int) (string, error) {
	stream := chaosStreams[pick(len(chaosStreams))]
	switch roll := pick(100); {
	case roll < 25: // a consumer's own door creates a group first: often one that is declared
		name := chaosNames[pick(len(chaosNames))]
		if len(declared) > 0 && pick(10) < 6 {
			r := declared[pick(len(declared))]
			stream, name = r.Stream, r.Name
		}
		id := []string{"$", "0"}[pick(2)]
		err := tg.admin(stream).XGroupCreateMkStream(ctx, stream, name, id).Err()
		want := m.create(stream, name, id, "consumer", step)
		if got := replyWord(err); got != want {
			return "", fmt.Errorf("consumer XGROUP CREATE %s %s %s answered %s; the model expected %s", stream, name, id, got, want)
		}
		return fmt.Sprintf("a consumer ran XGROUP CREATE %s %s %s MKSTREAM: %s", stream, name, id, want), nil
	case roll < 45: // XGROUP DESTROY of a group the server holds
		all := m.groups()
		if len(all) == 0 {
			return "XGROUP DESTROY: no group to destroy", nil
		}
		g := all[pick(len(all))]
		if err := tg.admin(g[0]).XGroupDestroy(ctx, g[0], g[1]).Err(); err != nil {
			return "", fmt.Errorf("XGROUP DESTROY %s %s: %w", g[0], g[1], err)
		}
		delete(m.keys[g[0]].Groups, g[1])
		return fmt.Sprintf("another client ran XGROUP DESTROY %s %s", g[0], g[1]), nil
	case roll < 60: // DEL of the key, stream or not
		if err := tg.admin(stream).Del(ctx, stream).Err(); err != nil {
			return "", fmt.Errorf("DEL %s: %w", stream, err)
		}
		delete(m.keys, stream)
		return "another client ran DEL " + stream, nil
	case roll < 70: // a key of another type where a stream is declared
		if m.keys[stream] != nil {
			return fmt.Sprintf("SET %s: the key exists, nothing done", stream), nil
		}
		if err := tg.admin(stream).Set(ctx, stream, "not a stream", 0).Err(); err != nil {
			return "", fmt.Errorf("SET %s: %w", stream, err)
		}
		m.keys[stream] = &modelKey{Type: "string"}
		return "another client ran SET " + stream + " (a string where a stream is declared)", nil
	default: // a producer appends an entry
		if k := m.keys[stream]; k != nil && k.Type != "stream" {
			return fmt.Sprintf("XADD %s: the key holds a %s, nothing done", stream, k.Type), nil
		}
		id, err := tg.admin(stream).XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []string{"order", "1"}}).Result()
		if err != nil {
			return "", fmt.Errorf("XADD %s: %w", stream, err)
		}
		if m.keys[stream] == nil {
			m.keys[stream] = &modelKey{Type: "stream", Groups: map[string]modelGroup{}}
		}
		m.keys[stream].LastID = id
		m.keys[stream].Length++
		return fmt.Sprintf("a producer ran XADD %s: %s", stream, id), nil
	}
}

// heal removes every key of another type, so that the declared groups can be created.
func (m *chaosModel) heal(ctx context.Context, tg *chaosTarget) error {
	for key, k := range m.keys {
		if k.Type == "stream" {
			continue
		}
		if err := tg.admin(key).Del(ctx, key).Err(); err != nil {
			return err
		}
		delete(m.keys, key)
	}
	return nil
}

// replyWord is the first word of a command's reply: "+OK", or "-" and the error's code.
func replyWord(err error) string {
	if err == nil {
		return "+OK"
	}
	code, _, _ := strings.Cut(err.Error(), " ")
	return "-" + code
}
