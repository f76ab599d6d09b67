package systemtest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
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
	// FirstID and LastEntry are the IDs of the first and last entries, as the server gave them
	// when read (readChaosServer): what a plan's backlog warning must quote. "" when empty.
	FirstID, LastEntry string
}

type modelGroup struct {
	LastDelivered string // where it was created: "0-0" for ID 0, the stream's last ID for $
	By            string // "provider" or "consumer"
	ID            string // the ID of the XGROUP CREATE that made it
	Step          int
	// Lag is XINFO GROUPS's lag as the server gave it when read (readChaosServer), "" when it
	// cannot compute one: what a plan's adoption warning must quote.
	Lag string
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
// was a redirect (-MOVED, -ASK: redirected), which says it did not run there; one that
// reached the server with no reply back may or may not have run, and snap (the server after the
// step) decides. The step's event (chaos_during_test.go; nil for none) is taken at the place
// of the command it struck: a change another client made right before it, or a restart, after
// which the command it struck never ran and a restarting server may refuse what comes.
// predicted is what the model expected of each group's first create of the step.
func (m *chaosModel) applyCreates(log []faultproxy.Record, snap *chaosModel, step int, ev *duringEvent) (problems []string, predicted map[[2]string]string) {
	predicted = map[[2]string]string{}
	for _, r := range log {
		if r.Before > 0 && ev != nil {
			if ran, problem := ev.at(m, r, step); problem != "" {
				problems = append(problems, problem)
			} else if !ran {
				continue
			}
		}
		if r.Command != "XGROUP CREATE" || !r.Forwarded || len(r.Args) < 3 {
			continue
		}
		if redirected(r) { // the node does not serve the key: it did not run there
			continue
		}
		stream, name, id := r.Args[0], r.Args[1], r.Args[2]
		want := m.createReply(stream, name)
		if _, seen := predicted[[2]string{stream, name}]; !seen {
			predicted[[2]string{stream, name}] = want
		}
		switch got, _, _ := strings.Cut(r.Reply, " "); {
		case r.Ran && ev.refusedWhileRestarting(got):
		case r.Ran && got != want:
			problems = append(problems, fmt.Sprintf("XGROUP CREATE %s %s %s answered %q; the model expected %s", stream, name, id, r.Reply, want))
		case r.Ran:
			m.create(stream, name, id, "provider", step)
		case want == "+OK" && snap.has(stream, name):
			m.create(stream, name, id, "provider", step)
		}
	}
	return problems, predicted
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
		k.FirstID, k.LastEntry = info.FirstEntry.ID, info.LastEntry.ID
		// Raw, since go-redis's XInfoGroups reads a lag the server cannot compute (nil) as 0.
		doer, _ := rdb.(interface {
			Do(context.Context, ...any) *redis.Cmd
		}) // every admin client is a *redis.Client or a *redis.ClusterClient
		raw, err := doer.Do(ctx, "XINFO", "GROUPS", key).Slice()
		if err != nil {
			return nil, fmt.Errorf("XINFO GROUPS %s: %w", key, err)
		}
		k.Groups = map[string]modelGroup{}
		for _, row := range raw {
			fields, _ := row.([]any)
			g := map[string]string{}
			for i := 0; i+1 < len(fields); i += 2 {
				name, _ := fields[i].(string)
				switch v := fields[i+1].(type) {
				case string:
					g[name] = v
				case int64:
					g[name] = strconv.FormatInt(v, 10)
				}
			}
			k.Groups[g["name"]] = modelGroup{LastDelivered: g["last-delivered-id"], Lag: g["lag"]}
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

// chaosChange is one change another client makes: a consumer's XGROUP CREATE ... MKSTREAM
// ("create"), XGROUP DESTROY ("destroy"), DEL ("del"), SET of a string ("set"), or a
// producer's XADD ("xadd"). Between steps (stepOutOfBand) it is drawn and made at once; during
// a step (chaos_during_test.go) it is made right before a chosen command of the CLI, and the
// model takes it at that command's place in the step's log.
type chaosChange struct {
	Kind             string
	Stream, Name, ID string // Name and ID: create and destroy
	Also             string // a second key a DEL removes (a producer's clean-up), "" for none
}

// outOfBand changes the server as another client would, through the direct clients, and the
// model with it. It returns what it did.
func (m *chaosModel) outOfBand(ctx context.Context, tg *chaosTarget, pick func(int) int, declared []chaosResource, step int) (string, error) {
	c, nothing := m.drawChange(pick, declared)
	if nothing != "" {
		return nothing, nil
	}
	result, err := c.do(ctx, tg)
	if err != nil {
		return "", err
	}
	return m.applyChange(c, result, step)
}

// drawChange draws a change, or says why there is nothing to do.
func (m *chaosModel) drawChange(pick func(int) int, declared []chaosResource) (chaosChange, string) {
	at := pick(len(chaosStreams))
	stream := chaosStreams[at]
	switch roll := pick(100); {
	case roll < 25: // a consumer's own door creates a group first: often one that is declared
		name := chaosNames[pick(len(chaosNames))]
		if len(declared) > 0 && pick(10) < 6 {
			r := declared[pick(len(declared))]
			stream, name = r.Stream, r.Name
		}
		return chaosChange{Kind: "create", Stream: stream, Name: name, ID: []string{"$", "0"}[pick(2)]}, ""
	case roll < 45: // XGROUP DESTROY of a group the server holds
		all := m.groups()
		if len(all) == 0 {
			return chaosChange{}, "XGROUP DESTROY: no group to destroy"
		}
		g := all[pick(len(all))]
		return chaosChange{Kind: "destroy", Stream: g[0], Name: g[1]}, ""
	case roll < 60: // DEL of two keys, stream or not: declared ones where there are, so that a plan meets several absent streams
		var named []string
		for _, r := range declared {
			if !slices.Contains(named, r.Stream) {
				named = append(named, r.Stream)
			}
		}
		if len(named) < 2 {
			named = chaosStreams
		}
		return chaosChange{Kind: "del", Stream: named[at%len(named)], Also: named[(at+1)%len(named)]}, ""
	case roll < 70: // a key of another type where a stream is declared
		if m.keys[stream] != nil {
			return chaosChange{}, fmt.Sprintf("SET %s: the key exists, nothing done", stream)
		}
		return chaosChange{Kind: "set", Stream: stream}, ""
	default: // a producer appends an entry
		if k := m.keys[stream]; k != nil && k.Type != "stream" {
			return chaosChange{}, fmt.Sprintf("XADD %s: the key holds a %s, nothing done", stream, k.Type)
		}
		return chaosChange{Kind: "xadd", Stream: stream}, ""
	}
}

// do makes the change on the server, through the direct clients: result is the reply's word
// for a create or a destroy ("+OK", "-BUSYGROUP", "-WRONGTYPE", "-ERR"), the new entry's ID for
// an XADD.
func (c chaosChange) do(ctx context.Context, tg *chaosTarget) (result string, err error) {
	rdb := tg.admin(c.Stream)
	switch c.Kind {
	case "create":
		return replyWord(rdb.XGroupCreateMkStream(ctx, c.Stream, c.Name, c.ID).Err()), nil
	case "destroy": // on a key that is gone or of another type, the server's refusal is the result
		return replyWord(rdb.XGroupDestroy(ctx, c.Stream, c.Name).Err()), nil
	case "del":
		err = rdb.Del(ctx, c.Stream).Err()
		if err == nil && c.Also != "" {
			err = tg.admin(c.Also).Del(ctx, c.Also).Err() // apart: in a cluster the two keys live in other slots
		}
	case "set":
		err = rdb.Set(ctx, c.Stream, "not a stream", 0).Err()
	case "xadd":
		result, err = rdb.XAdd(ctx, &redis.XAddArgs{Stream: c.Stream, Values: []string{"order", "1"}}).Result()
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", c, err)
	}
	return result, nil
}

func (c chaosChange) String() string {
	switch c.Kind {
	case "create":
		return fmt.Sprintf("XGROUP CREATE %s %s %s MKSTREAM", c.Stream, c.Name, c.ID)
	case "destroy":
		return fmt.Sprintf("XGROUP DESTROY %s %s", c.Stream, c.Name)
	case "set":
		return "SET " + c.Stream
	case "xadd":
		return "XADD " + c.Stream
	}
	return strings.TrimSpace("DEL " + c.Stream + " " + c.Also)
}

// applyChange makes in the model the change the server made with result, and says what it did;
// it fails when the server answered a consumer's create otherwise than the model expected.
func (m *chaosModel) applyChange(c chaosChange, result string, step int) (string, error) {
	switch c.Kind {
	case "create":
		if want := m.create(c.Stream, c.Name, c.ID, "consumer", step); result != want {
			return "", fmt.Errorf("consumer %s answered %s; the model expected %s", c, result, want)
		}
		return fmt.Sprintf("a consumer ran %s: %s", c, result), nil
	case "destroy":
		k, want := m.keys[c.Stream], "+OK"
		switch {
		case k == nil:
			want = "-ERR" // "The XGROUP subcommand requires the key to exist"
		case k.Type != "stream":
			want = "-WRONGTYPE"
		default:
			delete(k.Groups, c.Name)
		}
		if result != want {
			return "", fmt.Errorf("%s answered %s; the model expected %s", c, result, want)
		}
		return fmt.Sprintf("another client ran %s: %s", c, result), nil
	case "del":
		delete(m.keys, c.Stream)
		delete(m.keys, c.Also)
		return "another client ran " + c.String(), nil
	case "set":
		m.keys[c.Stream] = &modelKey{Type: "string"}
		return "another client ran " + c.String() + " (a string where a stream is declared)", nil
	}
	if m.keys[c.Stream] == nil {
		m.keys[c.Stream] = &modelKey{Type: "stream", Groups: map[string]modelGroup{}}
	}
	m.keys[c.Stream].LastID = result
	m.keys[c.Stream].Length++
	return fmt.Sprintf("a producer ran XADD %s: %s", c.Stream, result), nil
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
