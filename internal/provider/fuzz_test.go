package provider

import (
	"strings"
	"testing"
)

// FuzzParseGroupID checks the import ID parser: it never panics; whatever it accepts splits
// into a non-empty stream and a non-empty name without "/" that join back into the same ID;
// and every (stream, name) the resource can write as an ID, with a name free of "/", parses
// back to itself.
func FuzzParseGroupID(f *testing.F) {
	for _, s := range [][2]string{
		{"emq:{orders}:stream:main", "billing"},
		{"emq:{orders}:stream/main", "billing"},
		{"a/b/c", "d"},
		{"/", "g"},
		{"s", ""},
		{"", "g"},
		{"s", "a/b"},
		{"{}", "g"},
		{"s\x00", "g\xff"},
		{"ключ/流", "グループ"},
		{"no-slash-here", ""},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, stream, name string) {
		// Any string as an ID: what is accepted must be a clean split.
		for _, id := range []string{stream, name, stream + "/" + name} {
			s, n, ok := parseGroupID(id)
			if !ok {
				if s != "" || n != "" {
					t.Errorf("parseGroupID(%q) refused but returned %q, %q", id, s, n)
				}
				continue
			}
			if s == "" || n == "" || strings.Contains(n, "/") || groupID(s, n) != id {
				t.Errorf("parseGroupID(%q) = %q, %q: want non-empty parts, a name without \"/\", joining back to the ID", id, s, n)
			}
		}
		// The round trip the resource relies on: ID written by Create, read by import.
		if stream == "" || name == "" || strings.Contains(name, "/") {
			return // not a pair the resource accepts: the first loop covers its ID
		}
		s, n, ok := parseGroupID(groupID(stream, name))
		if !ok || s != stream || n != name {
			t.Errorf("parseGroupID(groupID(%q, %q)) = %q, %q, %v; want the same stream and name back", stream, name, s, n, ok)
		}
	})
}
