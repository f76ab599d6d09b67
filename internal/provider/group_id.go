package provider

import (
	"errors"
	"strings"
)

// The ID of a valkey_stream_group is the stream key, "/", and the group name with every "%"
// written "%25" and every "/" written "%2F". The last "/" therefore always separates the two
// (stream keys may hold "/", escaped names cannot), and the mapping is one to one: every ID
// the resource writes imports back to the same group, and no ID names two groups. A name
// without "%" or "/" appears as it is, so most IDs read like "emq:{orders}:stream:main/billing".

var nameEscaper = strings.NewReplacer("%", "%25", "/", "%2F")

// groupID is the ID the resource writes for a group.
func groupID(stream, name string) string { return stream + "/" + nameEscaper.Replace(name) }

// parseGroupID reverses groupID; its error says what is wrong with the ID.
func parseGroupID(id string) (stream, name string, err error) {
	i := strings.LastIndex(id, "/")
	switch {
	case i < 0:
		return "", "", errors.New(`it has no "/" between the stream key and the group name`)
	case i == 0:
		return "", "", errors.New(`it has no stream key before the last "/"`)
	case i == len(id)-1:
		return "", "", errors.New(`it has no group name after the last "/"`)
	}
	name, err = unescapeName(id[i+1:])
	if err != nil {
		return "", "", err
	}
	return id[:i], name, nil
}

// unescapeName undoes nameEscaper; any other "%" sequence is refused, so that an ID has one
// reading only.
func unescapeName(escaped string) (string, error) {
	if !strings.Contains(escaped, "%") {
		return escaped, nil
	}
	var b strings.Builder
	for i := 0; i < len(escaped); i++ {
		switch {
		case escaped[i] != '%':
			b.WriteByte(escaped[i])
		case strings.HasPrefix(escaped[i:], "%25"):
			b.WriteByte('%')
			i += 2
		case strings.HasPrefix(escaped[i:], "%2F"):
			b.WriteByte('/')
			i += 2
		default:
			return "", errors.New(`its group name has a "%" that is neither "%25" (a "%") nor "%2F" (a "/", with a capital F)`)
		}
	}
	return b.String(), nil
}
