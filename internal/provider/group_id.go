package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
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

// notFoundForImport says which group an import looked up and did not find, and, when another
// reading of the same ID names a group that exists (a "/" in the name left unescaped:
// "s/team/b" read as group "b" of stream "s/team"), names that group and its ID.
func (r *streamGroupResource) notFoundForImport(ctx context.Context, id, stream, name string) string {
	detail := fmt.Sprintf("The server at %s has no consumer group %q on stream %q", r.data.client.Addr(), name, stream)
	if id != "" {
		detail += fmt.Sprintf(" (the import ID %q read as stream %q and group %q: the last \"/\" separates them)", id, stream, name)
	}
	detail += ". Check the names, and the database in the provider's url."
	for i := strings.Index(id, "/"); id != "" && i >= 0 && i < len(id)-1 && i < len(stream); i = nextSlash(id, i) {
		otherStream, otherName := id[:i], id[i+1:]
		if unescaped, err := unescapeName(otherName); err == nil {
			otherName = unescaped
		}
		if _, found, err := r.data.client.Group(ctx, otherStream, otherName); err == nil && found {
			detail += fmt.Sprintf(" Group %q of stream %q exists: if that is the group to import, use the ID %q, in which "+
				"the name's \"/\" is written %%2F (or an import block with identity = { stream = %q, name = %q }).",
				otherName, otherStream, groupID(otherStream, otherName), otherStream, otherName)
			break
		}
	}
	return detail
}

// nextSlash is the index of the next "/" in id after i, or -1.
func nextSlash(id string, i int) int {
	j := strings.Index(id[i+1:], "/")
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// plannedID plans the id as soon as stream and name are known, replacements included: it is
// groupID of them, so reviewers see the real ID instead of "known after apply".
type plannedID struct{}

func (plannedID) Description(context.Context) string {
	return "The id is known at plan time once stream and name are."
}

func (m plannedID) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }

func (plannedID) PlanModifyString(ctx context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if !req.PlanValue.IsUnknown() {
		return // nothing changes: the id in state stands
	}
	var stream, name types.String
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("stream"), &stream)...)
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("name"), &name)...)
	if stream.IsUnknown() || name.IsUnknown() || stream.IsNull() || name.IsNull() {
		return
	}
	resp.PlanValue = types.StringValue(groupID(stream.ValueString(), name.ValueString()))
}
