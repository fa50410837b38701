package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"strings"
)

// Installed lists the events Install registers, with each handler's
// timeout in seconds (Claude Code's unit). The hook's own deadline
// (--timeout, 10 s by default) is shorter, so it fails with its own message
// rather than be killed; and a kill blocks too, by "onFailure": "block".
// Stop, Notification and PreCompact are not installed: Mandate has nothing
// to do for them.
var Installed = []struct {
	Event   string
	Timeout int
	// Tool events take a matcher: "*" is every tool, MCP tools included.
	Matcher string
}{
	{EventSessionStart, 30, ""},
	{EventUserPromptSubmit, 30, ""},
	{EventPreToolUse, 30, "*"},
	{EventPostToolUse, 30, "*"},
	{EventSubagentStart, 30, ""},
	{EventSubagentStop, 15, ""},
	{EventSessionEnd, 15, ""},
}

// handler is one hook handler as settings.json holds it. Only Mandate's
// own handlers are decoded into it; the user's stay raw.
type handler struct {
	Type    string `json:"type"`
	Command string `json:"command,omitempty"`
	// URL, Headers and AllowedEnvVars are the http handler type's.
	URL            string            `json:"url,omitempty"`
	Headers        map[string]string `json:"headers,omitempty"`
	AllowedEnvVars []string          `json:"allowedEnvVars,omitempty"`
	Timeout        int               `json:"timeout,omitempty"`
	OnFailure      string            `json:"onFailure,omitempty"`
}

// HTTPPath is the path of `mandate serve`'s route for Claude Code's http
// hook handler type.
const HTTPPath = "/v1/hooks/claude-code"

// TokenVar is the environment variable the http handlers' Authorization
// header is filled from: the variable the hook command reads too, which the
// built-in self-protection rules keep out of the agent's command lines.
const TokenVar = "MANDATE_TOKEN"

// IsMandateURL reports whether an http hook handler's URL is Mandate's hook
// route: these are the http handlers InstallHTTP adds and Uninstall
// removes.
func IsMandateURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && strings.TrimRight(u.Path, "/") == HTTPPath
}

// ours reports whether a handler is one Install or InstallHTTP wrote.
func (h handler) ours() bool {
	return (h.Type == "command" && IsMandateCommand(h.Command)) || (h.Type == "http" && IsMandateURL(h.URL))
}

type group struct {
	Matcher string    `json:"matcher,omitempty"`
	Hooks   []handler `json:"hooks"`
}

// IsMandateCommand reports whether a hook command runs `mandate hook
// claude-code`: these are the handlers Install adds and Uninstall removes.
// The program may be given by any path, but must be named mandate.
func IsMandateCommand(command string) bool {
	words := strings.Fields(command)
	for i := 0; i+2 < len(words); i++ {
		prog := strings.Trim(words[i], `'"`)
		if path.Base(prog) == "mandate" && strings.Trim(words[i+1], `'"`) == "hook" && strings.Trim(words[i+2], `'"`) == "claude-code" {
			return true
		}
	}
	return false
}

// Install merges Mandate's hook handlers, running command, into the
// settings.json content settings (empty means a new file). Everything
// else — the user's other hooks, in the same events too, and every other
// setting — is kept in its order. Handlers of an earlier install are
// replaced, so installing twice gives the same file.
func Install(settings []byte, command string) ([]byte, error) {
	if !IsMandateCommand(command) {
		return nil, fmt.Errorf("hook command %q does not run `mandate hook claude-code`; Uninstall could not find it again", command)
	}
	return install(settings, handler{Type: "command", Command: command, OnFailure: "block"})
}

// InstallHTTP is Install with Claude Code's http handler type: each event
// is POSTed to hookURL (a `mandate serve` address and HTTPPath), with the
// hook token from Claude Code's environment variable TokenVar in the
// Authorization header — listed in allowedEnvVars, without which Claude
// Code sends it empty. "onFailure": "block" makes a connection failure or
// timeout block; every answer of the server itself is already one Claude
// Code reads (a refusal on errors). Installing either form replaces the
// other.
func InstallHTTP(settings []byte, hookURL string) ([]byte, error) {
	if !IsMandateURL(hookURL) {
		return nil, fmt.Errorf("hook URL %q is not an http(s) URL ending in %s; Uninstall could not find it again", hookURL, HTTPPath)
	}
	return install(settings, handler{
		Type: "http", URL: hookURL,
		Headers:        map[string]string{"Authorization": "Bearer $" + TokenVar},
		AllowedEnvVars: []string{TokenVar},
		OnFailure:      "block",
	})
}

func install(settings []byte, h handler) ([]byte, error) {
	top, err := parseObject(settings, "settings")
	if err != nil {
		return nil, err
	}
	hooks, err := top.object("hooks")
	if err != nil {
		return nil, err
	}
	// Uninstall reads every event's list to find Mandate's handlers: an
	// entry it could not read is refused now, so that install never writes
	// a file uninstall refuses.
	for _, ev := range hooks.keys {
		groups, err := hooks.array(ev)
		if err != nil {
			return nil, err
		}
		if _, err := removeOurs(groups, ev); err != nil {
			return nil, err
		}
	}
	for _, ev := range Installed {
		groups, err := hooks.array(ev.Event)
		if err != nil {
			return nil, err
		}
		groups, err = removeOurs(groups, ev.Event)
		if err != nil {
			return nil, err
		}
		h.Timeout = ev.Timeout
		g, err := marshal(group{Matcher: ev.Matcher, Hooks: []handler{h}})
		if err != nil {
			return nil, err
		}
		groups = append(groups, g)
		if err := hooks.setArray(ev.Event, groups); err != nil {
			return nil, err
		}
	}
	if err := top.setObject("hooks", hooks); err != nil {
		return nil, err
	}
	return top.encode()
}

// Uninstall removes every handler that runs `mandate hook claude-code`,
// and every http handler posting to Mandate's hook route, from settings, and the matcher groups and event lists that held only
// them; nothing else changes. It reports whether anything was removed.
func Uninstall(settings []byte) ([]byte, bool, error) {
	top, err := parseObject(settings, "settings")
	if err != nil {
		return nil, false, err
	}
	if !top.has("hooks") {
		return settings, false, nil
	}
	hooks, err := top.object("hooks")
	if err != nil {
		return nil, false, err
	}
	removed := false
	for _, ev := range append([]string(nil), hooks.keys...) {
		groups, err := hooks.array(ev)
		if err != nil {
			return nil, false, err
		}
		kept, err := removeOurs(groups, ev)
		if err != nil {
			return nil, false, err
		}
		if len(kept) == len(groups) && !changedGroups(groups, kept) {
			continue
		}
		removed = true
		if len(kept) == 0 {
			hooks.delete(ev)
			continue
		}
		if err := hooks.setArray(ev, kept); err != nil {
			return nil, false, err
		}
	}
	if !removed {
		return settings, false, nil
	}
	if len(hooks.keys) == 0 {
		top.delete("hooks")
	} else if err := top.setObject("hooks", hooks); err != nil {
		return nil, false, err
	}
	out, err := top.encode()
	return out, true, err
}

func changedGroups(a, b []json.RawMessage) bool {
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return true
		}
	}
	return false
}

// removeOurs drops Mandate's handlers from an event's matcher groups, and
// groups left with no handler. Groups it does not touch stay byte for byte.
func removeOurs(groups []json.RawMessage, event string) ([]json.RawMessage, error) {
	var out []json.RawMessage
	for i, raw := range groups {
		g, err := parseObject(raw, fmt.Sprintf("hooks.%s[%d]", event, i))
		if err != nil {
			return nil, err
		}
		if !g.has("hooks") {
			out = append(out, raw)
			continue
		}
		handlers, err := g.array("hooks")
		if err != nil {
			return nil, err
		}
		var kept []json.RawMessage
		for _, h := range handlers {
			var hd handler
			if json.Unmarshal(h, &hd) == nil && hd.ours() {
				continue
			}
			kept = append(kept, h)
		}
		switch {
		case len(kept) == len(handlers):
			out = append(out, raw)
		case len(kept) == 0:
			// The group held only Mandate's handlers.
		default:
			if err := g.setArray("hooks", kept); err != nil {
				return nil, err
			}
			b, err := g.encodeCompact()
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		}
	}
	return out, nil
}

// object is a JSON object that keeps its keys' order and its values'
// bytes, so a file is rewritten with only the changes made to it.
type object struct {
	where string
	keys  []string
	vals  map[string]json.RawMessage
}

func parseObject(data []byte, where string) (*object, error) {
	o := &object{where: where, vals: map[string]json.RawMessage{}}
	if len(bytes.TrimSpace(data)) == 0 {
		return o, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, jsonErr(err, dec))
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("%s: expected a JSON object", where)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, jsonErr(err, dec))
		}
		key := tok.(string) // object keys are always strings
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s: key %q: %w", where, key, jsonErr(err, dec))
		}
		if _, dup := o.vals[key]; dup {
			return nil, fmt.Errorf("%s: key %q appears twice", where, key)
		}
		o.keys = append(o.keys, key)
		o.vals[key] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("%s: %w", where, jsonErr(err, dec))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: unexpected data after the JSON object", where)
	}
	return o, nil
}

func jsonErr(err error, dec *json.Decoder) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("the JSON ends early")
	}
	return fmt.Errorf("at byte %d: %s", dec.InputOffset(), strings.TrimPrefix(err.Error(), "json: "))
}

func (o *object) has(key string) bool { _, ok := o.vals[key]; return ok }

// object returns the member key as an object (empty if absent).
func (o *object) object(key string) (*object, error) {
	v, ok := o.vals[key]
	if !ok {
		return &object{where: o.where + "." + key, vals: map[string]json.RawMessage{}}, nil
	}
	if t := bytes.TrimSpace(v); len(t) == 0 || t[0] != '{' {
		return nil, fmt.Errorf("%s.%s: expected an object", o.where, key)
	}
	return parseObject(v, o.where+"."+key)
}

// array returns the member key as a list of raw elements (none if absent).
func (o *object) array(key string) ([]json.RawMessage, error) {
	v, ok := o.vals[key]
	if !ok {
		return nil, nil
	}
	var out []json.RawMessage
	if t := bytes.TrimSpace(v); len(t) == 0 || t[0] != '[' {
		return nil, fmt.Errorf("%s.%s: expected a list", o.where, key)
	}
	if err := json.Unmarshal(v, &out); err != nil {
		return nil, fmt.Errorf("%s.%s: %w", o.where, key, err)
	}
	return out, nil
}

func (o *object) set(key string, v json.RawMessage) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

func (o *object) setArray(key string, elems []json.RawMessage) error {
	b := []byte{'['}
	for i, e := range elems {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e...)
	}
	b = append(b, ']')
	var c bytes.Buffer
	if err := json.Compact(&c, b); err != nil {
		return fmt.Errorf("%s.%s: %w", o.where, key, err)
	}
	o.set(key, c.Bytes())
	return nil
}

// marshal encodes v without escaping <, > and & — settings files are not
// HTML, and commands contain &&.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(b.Bytes()), nil
}

func (o *object) setObject(key string, v *object) error {
	b, err := v.encodeCompact()
	if err != nil {
		return err
	}
	o.set(key, b)
	return nil
}

func (o *object) delete(key string) {
	if _, ok := o.vals[key]; !ok {
		return
	}
	delete(o.vals, key)
	for i, k := range o.keys {
		if k == key {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
}

func (o *object) encodeCompact() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := marshal(k)
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(o.vals[k])
	}
	b.WriteByte('}')
	var c bytes.Buffer
	if err := json.Compact(&c, b.Bytes()); err != nil {
		return nil, fmt.Errorf("%s: %w", o.where, err)
	}
	return c.Bytes(), nil
}

// encode renders the object as settings files are written: indented by
// two spaces, with a final newline.
func (o *object) encode() ([]byte, error) {
	compact, err := o.encodeCompact()
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}
