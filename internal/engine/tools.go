package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/mandate-dev/mandate/api"
	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/store"
)

// Tool pinning. A tool's description and schema are instructions to the
// model: a server that changes them mid-session ("rug pull") can steer an
// agent that already trusts the tool. So the first listing of each tool in a
// session is pinned (the hash of its canonical definition, and the
// definition), every later listing is held against the pin, and a tool whose
// definition changed is refused for the rest of the session — even if it
// changes back, since the session has seen the other text. Pinned
// definitions also join the session's tool list, so the classifier reads
// their descriptions, schemas and annotations for tools it does not know.

// RuleToolChanged names the refusal of a call to a tool whose definition
// changed after it was pinned.
const RuleToolChanged = "engine.tool-changed"

// maxListedTools bounds one listing; real servers list tens of tools.
const maxListedTools = 10000

// The wire types of tool pinning (package api).
type (
	PinReport      = api.PinReport
	ToolChangeInfo = api.ToolChangeInfo
	SessionTools   = api.SessionTools
)

// ToolDefHash returns the hex SHA-256 of a tool definition's canonical JSON
// (object keys sorted, numbers normalised), and that JSON. Everything the
// model is shown counts: name, title, description, input and output schema,
// annotations.
func ToolDefHash(def action.ToolDef) (string, json.RawMessage, error) {
	b, err := json.Marshal(def)
	if err != nil {
		return "", nil, fmt.Errorf("tool %q: encode definition: %w", def.Name, err)
	}
	// Decoding into generic values and encoding again sorts object keys
	// and writes numbers one way, so equal definitions hash equal however
	// the server spelled them.
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return "", nil, fmt.Errorf("tool %q: decode definition: %w", def.Name, err)
	}
	canon, err := json.Marshal(v)
	if err != nil {
		return "", nil, fmt.Errorf("tool %q: canonical definition: %w", def.Name, err)
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), canon, nil
}

// toolCache holds each session's pins in memory; the store is the source of
// truth and an entry is (re)loaded from it on first use.
type toolCache struct {
	mu       sync.Mutex
	sessions map[string]*sessionPins
}

// sessionPins is one session's pins. It is read and written only with the
// session's live mu held, which orders pinning against decisions.
type sessionPins struct {
	pins    map[string]*store.ToolPin
	defs    map[string]action.ToolDef    // pinned definitions, decoded
	order   []string                     // pinned tool names, first listed first
	changed map[string]*store.ToolChange // latest change per tool
	// merged is the tool list the classifier sees; rebuilt on change.
	merged []action.ToolDef
}

// pinsLocked returns the session's pins, loading them if needed. The
// caller holds l.mu.
func (e *Engine) pinsLocked(ctx context.Context, l *live) (*sessionPins, error) {
	id := l.sess.ID
	e.tools.mu.Lock()
	sp, ok := e.tools.sessions[id]
	e.tools.mu.Unlock()
	if ok {
		return sp, nil
	}
	pins, err := e.store.ListToolPins(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("session %s: tool pins: %w", id, err)
	}
	changes, err := e.store.ListToolChanges(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("session %s: tool changes: %w", id, err)
	}
	sp = &sessionPins{pins: map[string]*store.ToolPin{}, defs: map[string]action.ToolDef{}, changed: map[string]*store.ToolChange{}}
	for _, p := range pins {
		var def action.ToolDef
		if err := json.Unmarshal(p.Definition, &def); err != nil {
			return nil, fmt.Errorf("session %s: pinned tool %q: %w", id, p.Tool, err)
		}
		sp.pins[p.Tool], sp.defs[p.Tool] = p, def
		sp.order = append(sp.order, p.Tool)
	}
	for _, c := range changes {
		sp.changed[c.Tool] = c
	}
	sp.merge(l.sess.Tools)
	e.tools.mu.Lock()
	defer e.tools.mu.Unlock()
	if e.tools.sessions == nil {
		e.tools.sessions = map[string]*sessionPins{}
	}
	if len(e.tools.sessions) >= cacheSoftLimit {
		e.evictPinsLocked()
	}
	e.tools.sessions[id] = sp
	return sp, nil
}

// evictPinsLocked forgets the pins of sessions no longer live in memory;
// they reload from the store on next use. The caller holds e.tools.mu.
func (e *Engine) evictPinsLocked() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for id := range e.tools.sessions {
		if _, ok := e.sessions[id]; !ok {
			delete(e.tools.sessions, id)
		}
	}
}

// merge builds the classifier's tool list: pinned definitions, then the
// tools the session was created with that were never listed.
func (sp *sessionPins) merge(base []action.ToolDef) {
	out := make([]action.ToolDef, 0, len(sp.order)+len(base))
	for _, name := range sp.order {
		out = append(out, sp.defs[name])
	}
	for _, t := range base {
		if _, ok := sp.pins[t.Name]; !ok {
			out = append(out, t)
		}
	}
	sp.merged = out
}

// toolContextLocked returns the tool list to classify a call with, and why
// a call to tool must be refused ("" if it need not). The caller holds l.mu.
func (e *Engine) toolContextLocked(ctx context.Context, l *live, tool string) ([]action.ToolDef, string, error) {
	sp, err := e.pinsLocked(ctx, l)
	if err != nil {
		return l.sess.Tools, "", err
	}
	if c, ok := sp.changed[tool]; ok {
		return sp.merged, changedReason(c.Tool, c.PinnedHash, c.Hash), nil
	}
	return sp.merged, "", nil
}

func changedReason(tool, pinned, now string) string {
	return fmt.Sprintf("tool %q changed its description or schema after it was first listed in this session (pinned definition %s, changed to %s); calls to it are refused for the rest of the session",
		tool, shortHash(pinned), shortHash(now))
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// PinTools holds one tools/list result against the session's pins: tools
// listed for the first time are pinned, tools whose definition differs from
// their pin are recorded as changed and refused from then on. Pins and
// changes are committed (with the session) before PinTools returns, so a
// gateway that shows a listing only after PinTools succeeded never shows a
// change Mandate did not record.
//
// Pinned definitions shape how calls are classified, so only principals
// that may create sessions (not agents) may pin.
func (e *Engine) PinTools(ctx context.Context, p auth.Principal, sessionID string, tools []action.ToolDef) (*PinReport, error) {
	return retryStale(ctx, e, sessionID, func() (*PinReport, error) { return e.pinTools(ctx, p, sessionID, tools) })
}

func (e *Engine) pinTools(ctx context.Context, p auth.Principal, sessionID string, tools []action.ToolDef) (*PinReport, error) {
	if !p.Can(auth.CreateSession) {
		return nil, forbidden(p, auth.CreateSession)
	}
	if sessionID == "" {
		return nil, invalid("session_id is required")
	}
	if len(tools) > maxListedTools {
		return nil, invalid("%d tools in one listing, over the limit of %d", len(tools), maxListedTools)
	}
	type hashed struct {
		def   action.ToolDef
		hash  string
		canon json.RawMessage
	}
	listed := make([]hashed, 0, len(tools))
	seen := make(map[string]bool, len(tools))
	for i, t := range tools {
		if t.Name == "" {
			return nil, invalid("tools[%d]: name is required", i)
		}
		if seen[t.Name] {
			return nil, invalid("tools[%d]: tool %q is listed twice", i, t.Name)
		}
		seen[t.Name] = true
		h, canon, err := ToolDefHash(t)
		if err != nil {
			return nil, invalid("tools[%d]: %v", i, err)
		}
		if len(canon) > e.maxArgs {
			return nil, invalid("tools[%d]: tool %q has a %d-byte definition, over the %d-byte limit", i, t.Name, len(canon), e.maxArgs)
		}
		listed = append(listed, hashed{t, h, canon})
	}

	l, err := e.acquire(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	defer l.mu.Unlock()
	if !p.Owns(l.sess.Agent.ID) {
		return nil, notServed(p, "session "+sessionID, l.sess.Agent.ID)
	}
	sp, err := e.pinsLocked(ctx, l)
	if err != nil {
		return nil, err
	}
	now := e.now().UTC()
	rep := &PinReport{SessionID: sessionID, Pinned: []string{}, Changed: []ToolChangeInfo{}}
	c := &store.Change{}
	for _, t := range listed {
		pin, ok := sp.pins[t.def.Name]
		if !ok {
			c.ToolPins = append(c.ToolPins, &store.ToolPin{SessionID: sessionID, Tool: t.def.Name, Hash: t.hash, Definition: t.canon, CreatedAt: now})
			rep.Pinned = append(rep.Pinned, t.def.Name)
			continue
		}
		prev, wasChanged := sp.changed[t.def.Name]
		if pin.Hash == t.hash && !wasChanged {
			rep.Unchanged++
			continue
		}
		info := ToolChangeInfo{Tool: t.def.Name, PinnedHash: pin.Hash, Hash: t.hash, Pinned: sp.defs[t.def.Name]}
		// Record each definition the tool changes to once, not every
		// listing that repeats it.
		if pin.Hash != t.hash && (!wasChanged || prev.Hash != t.hash) {
			c.ToolChanges = append(c.ToolChanges, &store.ToolChange{
				ID: newID(), SessionID: sessionID, Tool: t.def.Name, PinnedHash: pin.Hash,
				Hash: t.hash, Definition: t.canon, CreatedAt: now,
			})
			info.Recorded = true
		}
		reasonHash := t.hash
		if pin.Hash == t.hash {
			reasonHash = prev.Hash // changed back: name the change that was seen
		}
		info.Reason = changedReason(t.def.Name, pin.Hash, reasonHash)
		rep.Changed = append(rep.Changed, info)
	}
	if len(c.ToolPins) == 0 && len(c.ToolChanges) == 0 {
		return rep, nil
	}
	sess := copySession(&l.sess)
	sess.UpdatedAt = now
	c.Session = sess
	c.Guard = e.guardFor(l, newID())
	if err := e.settle(ctx, l, e.submitLocked(l, c), false); err != nil {
		return nil, fmt.Errorf("pin tools: %w", err)
	}
	l.sess.UpdatedAt, l.sess.Head = now, c.Guard.NewHead
	for _, pin := range c.ToolPins {
		var def action.ToolDef
		if err := json.Unmarshal(pin.Definition, &def); err != nil {
			// The definition was encoded by ToolDefHash a moment ago.
			return nil, fmt.Errorf("pin tools: decode %q: %w", pin.Tool, err)
		}
		sp.pins[pin.Tool], sp.defs[pin.Tool] = pin, def
		sp.order = append(sp.order, pin.Tool)
	}
	for _, tc := range c.ToolChanges {
		sp.changed[tc.Tool] = tc
		e.log.Warn("tool definition changed mid-session; refusing calls to it", "session", sessionID, "tool", tc.Tool, "pinned", shortHash(tc.PinnedHash), "now", shortHash(tc.Hash))
	}
	if len(c.ToolPins) > 0 {
		sp.merge(l.sess.Tools)
	}
	return rep, nil
}

// Tools returns a session's pins and recorded changes.
func (e *Engine) Tools(ctx context.Context, p auth.Principal, sessionID string) (*SessionTools, error) {
	if !p.Can(auth.Read) {
		return nil, forbidden(p, auth.Read)
	}
	if _, err := e.store.GetSession(ctx, sessionID); err != nil {
		return nil, err
	}
	pins, err := e.store.ListToolPins(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	changes, err := e.store.ListToolChanges(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if pins == nil {
		pins = []*store.ToolPin{}
	}
	if changes == nil {
		changes = []*store.ToolChange{}
	}
	return &SessionTools{Pins: pins, Changes: changes}, nil
}
