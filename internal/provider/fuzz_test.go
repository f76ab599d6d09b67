package provider

import (
	"testing"
)

// FuzzParseGroupID checks that IDs and groups are one to one: every (stream, name) the resource
// can write as an ID parses back to itself, and every ID the parser accepts is the one the
// resource writes for what it parsed to, so no ID can name another group than the one that
// wrote it.
func FuzzParseGroupID(f *testing.F) {
	for _, s := range [][2]string{
		{"emq:{orders}:stream:main", "billing"},
		{"emq:{orders}:stream/main", "billing"},
		{"s:{x}:stream", "team/a"}, // the group whose ID once imported group "a" of "s:{x}:stream/team"
		{"s:{x}:stream/team", "a"},
		{"s", "50%"},
		{"s", "%2F"},
		{"a/b/c", "d"},
		{"/", "g"},
		{"s", ""},
		{"", "g"},
		{"{}", "g"},
		{"s\x00", "g\xff"},
		{"ключ/流", "グループ"},
		{"no-slash-here", ""},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, stream, name string) {
		// Any string as an ID: what is accepted is exactly what groupID writes for it.
		for _, id := range []string{stream, name, stream + "/" + name} {
			s, n, err := parseGroupID(id)
			if err != nil {
				if s != "" || n != "" {
					t.Errorf("parseGroupID(%q) refused but returned %q, %q", id, s, n)
				}
				continue
			}
			if s == "" || n == "" || groupID(s, n) != id {
				t.Errorf("parseGroupID(%q) = %q, %q, which the resource writes as %q", id, s, n, groupID(s, n))
			}
		}
		// The round trip the resource relies on: ID written by Create, read by import.
		if stream == "" || name == "" {
			return // the resource refuses empty keys and names at plan time
		}
		s, n, err := parseGroupID(groupID(stream, name))
		if err != nil || s != stream || n != name {
			t.Errorf("parseGroupID(groupID(%q, %q)) = %q, %q, %v; want the same stream and name back", stream, name, s, n, err)
		}
	})
}
