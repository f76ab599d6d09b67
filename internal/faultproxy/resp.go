package faultproxy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The proxy's RESP reading: replies as the server sends them (RESP2 and RESP3), and commands
// as a client writes them, each read whole so that a fault can act on exactly one of them.

// readReply reads one complete RESP2 or RESP3 reply and returns its bytes.
func readReply(rd *bufio.Reader) ([]byte, error) {
	var out bytes.Buffer
	if err := copyReply(rd, &out); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func copyReply(rd *bufio.Reader, out *bytes.Buffer) error {
	line, err := rd.ReadBytes('\n')
	if err != nil {
		return err
	}
	out.Write(line)
	if len(line) < 3 || !bytes.HasSuffix(line, []byte("\r\n")) {
		return fmt.Errorf("malformed reply line %q", line)
	}
	head := string(line[1 : len(line)-2])
	switch line[0] {
	case '+', '-', ':', '_', ',', '#', '(':
		return nil
	case '$', '!', '=':
		n, err := strconv.Atoi(head)
		if err != nil || n < 0 {
			return err // $-1: a null bulk string
		}
		_, err = io.CopyN(out, rd, int64(n)+2)
		return err
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(head)
		if err != nil || n < 0 {
			return err // *-1: a null array
		}
		if line[0] == '%' || line[0] == '|' {
			n *= 2
		}
		if line[0] == '|' {
			n++ // an attribute precedes the reply it describes
		}
		for range n {
			if err := copyReply(rd, out); err != nil {
				return err
			}
		}
		return nil
	}
	return errors.New("unknown reply type " + strconv.Quote(string(line[:1])))
}

// command is one command a client wrote, as the proxy names it (the command, plus the
// subcommand for container commands), with its first arguments after that name.
type command struct {
	name string
	args []string // at most maxArgs; none for HELLO and AUTH, which carry passwords
}

// maxArgs is how many arguments of a command the proxy keeps: XGROUP CREATE's key, group, ID
// and MKSTREAM.
const maxArgs = 4

// keyless are the commands, as the proxy names them, whose first argument is not a key.
var keyless = map[string]bool{
	"HELLO": true, "AUTH": true, "SELECT": true, "PING": true, "WAIT": true, "SCAN": true, "INFO": true,
	"QUIT": true, "READONLY": true, "ASKING": true, "MULTI": true, "EXEC": true, "COMMAND": true,
	"INLINE": true, "EMPTY": true,
}

// key is the key the command names, or "" for a command without one.
func (c command) key() string {
	if len(c.args) == 0 || keyless[c.name] || strings.HasPrefix(c.name, "CLUSTER ") ||
		strings.HasPrefix(c.name, "CLIENT ") || strings.HasPrefix(c.name, "CONFIG ") {
		return ""
	}
	return c.args[0]
}

// parseCommand reads one RESP array of bulk strings from b. used is 0 when b holds no complete
// command yet.
func parseCommand(b []byte) (cmd command, used int) {
	line := func(at int) (string, int) {
		i := bytes.Index(b[at:], []byte("\r\n"))
		if i < 0 {
			return "", -1
		}
		return string(b[at : at+i]), at + i + 2
	}
	head, at := line(0)
	if at < 0 || !strings.HasPrefix(head, "*") {
		if at < 0 {
			return command{}, 0
		}
		return command{name: "INLINE"}, at // an inline command, as a bare PING might be
	}
	n, _ := strconv.Atoi(head[1:])
	var args []string
	for range n {
		var h string
		h, at = line(at)
		if at < 0 {
			return command{}, 0
		}
		size, _ := strconv.Atoi(strings.TrimPrefix(h, "$"))
		if len(b) < at+size+2 {
			return command{}, 0
		}
		if len(args) < 2+maxArgs {
			args = append(args, string(b[at:at+size]))
		}
		at += size + 2
	}
	if len(args) == 0 {
		return command{name: "EMPTY"}, at
	}
	cmd.name, args = strings.ToUpper(args[0]), args[1:]
	switch cmd.name {
	case "XGROUP", "XINFO", "CONFIG", "CLIENT", "CLUSTER", "OBJECT", "MEMORY":
		if len(args) > 0 {
			cmd.name += " " + strings.ToUpper(args[0])
			args = args[1:]
		}
	}
	if cmd.name != "HELLO" && cmd.name != "AUTH" {
		cmd.args = args[:min(len(args), maxArgs)]
	}
	return cmd, at
}

// respValue is one reply read into a tree, so that a rewrite can take part of it out and write
// the rest back with its counts put right.
type respValue struct {
	kind  byte        // the type byte: '+', '$', '*', '%'...
	head  string      // the first line after the type byte, for every kind but aggregates
	bulk  []byte      // a bulk string's bytes, for '$', '!' and '='
	items []respValue // an aggregate's elements; a map's keys and values in turn
}

// parseReply reads one whole reply, as readReply returned it.
func parseReply(b []byte) (respValue, error) {
	return readValue(bufio.NewReader(bytes.NewReader(b)))
}

func readValue(rd *bufio.Reader) (respValue, error) {
	line, err := rd.ReadBytes('\n')
	if err != nil {
		return respValue{}, err
	}
	if len(line) < 3 || !bytes.HasSuffix(line, []byte("\r\n")) {
		return respValue{}, fmt.Errorf("malformed reply line %q", line)
	}
	v := respValue{kind: line[0], head: string(line[1 : len(line)-2])}
	n, _ := strconv.Atoi(v.head)
	switch v.kind {
	case '$', '!', '=':
		if n >= 0 {
			v.bulk = make([]byte, n+2)
			_, err = io.ReadFull(rd, v.bulk)
			v.bulk = v.bulk[:n]
		}
	case '*', '~', '>', '%', '|':
		if n < 0 {
			return v, nil // a null array
		}
		if v.kind == '%' || v.kind == '|' {
			n *= 2
		}
		if v.kind == '|' {
			n++
		}
		for range n {
			item, err := readValue(rd)
			if err != nil {
				return v, err
			}
			v.items = append(v.items, item)
		}
		v.head = ""
	}
	return v, err
}

// bytes writes v back as RESP, its aggregates counted anew.
func (v respValue) bytes() []byte {
	var out bytes.Buffer
	v.write(&out)
	return out.Bytes()
}

func (v respValue) write(out *bytes.Buffer) {
	out.WriteByte(v.kind)
	switch v.kind {
	case '*', '~', '>', '%', '|':
		n := len(v.items)
		switch {
		case v.items == nil && v.head != "":
			out.WriteString(v.head + "\r\n") // a null array
			return
		case v.kind == '%':
			n /= 2
		case v.kind == '|':
			n = (n - 1) / 2
		}
		out.WriteString(strconv.Itoa(n) + "\r\n")
		for _, item := range v.items {
			item.write(out)
		}
	default:
		out.WriteString(v.head + "\r\n")
		if v.bulk != nil {
			out.Write(v.bulk)
			out.WriteString("\r\n")
		}
	}
}

// text is v's string, and whether v is one (simple, bulk or verbatim).
func (v respValue) text() (string, bool) {
	switch v.kind {
	case '+':
		return v.head, true
	case '$', '=':
		return string(v.bulk), v.bulk != nil
	}
	return "", false
}

// dropFields takes the fields named in names out of every field list in v, at any depth: a map,
// or an array whose elements at even places are all strings (the RESP2 form of XINFO's replies).
func (v respValue) dropFields(names map[string]bool) respValue {
	for i := range v.items {
		v.items[i] = v.items[i].dropFields(names)
	}
	if !v.isFieldList() {
		return v
	}
	kept := v.items[:0:0]
	for i := 0; i+1 < len(v.items); i += 2 {
		if name, _ := v.items[i].text(); !names[name] {
			kept = append(kept, v.items[i], v.items[i+1])
		}
	}
	v.items = kept
	return v
}

func (v respValue) isFieldList() bool {
	if v.kind == '%' {
		return true
	}
	if v.kind != '*' || len(v.items) == 0 || len(v.items)%2 != 0 {
		return false
	}
	for i := 0; i < len(v.items); i += 2 {
		if _, ok := v.items[i].text(); !ok {
			return false
		}
	}
	return true
}

// withoutFields is reply with the fields named taken out of its field lists; a reply that does
// not parse is relayed as it is.
func withoutFields(reply []byte, fields []string) []byte {
	v, err := parseReply(reply)
	if err != nil {
		return reply
	}
	names := map[string]bool{}
	for _, f := range fields {
		names[f] = true
	}
	return v.dropFields(names).bytes()
}
