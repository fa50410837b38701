package engine

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/approval"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/mandate"
	"github.com/mandate-dev/mandate/internal/policy"
	"github.com/mandate-dev/mandate/internal/store"
)

// live is a session's in-memory state. The store is the source of truth: a
// live entry is loaded from it on first use, and dropped (to be reloaded)
// after a failed commit or a long idle spell.
type live struct {
	mu sync.Mutex // serialises decisions and changes in the session
	// gone is set when the entry was dropped from the cache; whoever then
	// holds mu must look the session up again.
	gone atomic.Bool
	// pending counts the entry's commits in flight (commit.go).
	pending pending
	sess    store.Session
	// snap is read without mu by child sessions.
	snap atomic.Pointer[snapshot]

	derivedMu   sync.Mutex
	derived     *mandate.Mandate // own ∩ parent's effective mandate
	derivedFrom *mandate.Mandate // the parent's effective mandate it was built from
	derivedOwn  *mandate.Mandate // the own mandate it was built from

	lastUsed atomic.Int64
	// countersSaved is when the session's counters were last written
	// (guarded by mu).
	countersSaved time.Time
	// flow is the session's flow table, built on first use (flow.go;
	// guarded by mu).
	flow *flowState
	// seq is the session's sequence state (sequences.go; guarded by mu
	// for its creation, by itself for its content).
	seq *policy.SequenceState
	// classify is what its calls are classified with, as the latest
	// decision saw it: read without mu, to classify a call before the
	// lock is taken (classify.go).
	classify atomic.Pointer[classifyContext]
	// ver is versionOf(verOf), the agent's version as the session's
	// agent last had it (agentVersion; guarded by mu).
	ver    string
	verOf  store.Agent
	verSet bool
}

// snapshot is a session's status and own mandate at one moment.
type snapshot struct {
	status   string
	parentID string
	// own is the session's current stored mandate; for a child it was
	// already narrowed by its parent's when stored.
	own *mandate.Mandate
}

const (
	maxRecent = 32
	// cacheSoftLimit is the number of live sessions above which idle ones
	// are dropped from memory (they reload from the store on next use).
	cacheSoftLimit = 10000
	idleEviction   = 30 * time.Minute
)

func (l *live) publish() {
	l.snap.Store(&snapshot{status: l.sess.Status, parentID: l.sess.ParentID, own: l.ownMandate()})
}

func (l *live) ownMandate() *mandate.Mandate {
	if s := l.snap.Load(); s != nil {
		return s.own
	}
	return nil
}

// acquire returns the session's live entry with its mu held.
func (e *Engine) acquire(ctx context.Context, id string) (*live, error) {
	for {
		l, err := e.live(ctx, id)
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		if !l.gone.Load() {
			l.lastUsed.Store(e.now().UnixNano())
			return l, nil
		}
		l.mu.Unlock()
	}
}

// live returns the cached entry for a session, loading it if needed.
func (e *Engine) live(ctx context.Context, id string) (*live, error) {
	e.mu.Lock()
	l, ok := e.sessions[id]
	e.mu.Unlock()
	if ok {
		return l, nil
	}
	if err := e.awaitRetired(ctx, id); err != nil {
		return nil, err
	}
	loaded, err := e.load(ctx, id)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if l, ok := e.sessions[id]; ok {
		return l, nil // someone loaded it meanwhile
	}
	if len(e.sessions) >= cacheSoftLimit {
		e.evictIdleLocked()
	}
	e.sessions[id] = loaded
	return loaded, nil
}

func (e *Engine) load(ctx context.Context, id string) (*live, error) {
	sess, err := e.store.GetSession(ctx, id)
	if err != nil {
		return nil, err
	}
	mv, err := e.store.GetMandate(ctx, id, sess.MandateVersion)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	// The counters are derived from the session's decisions, each bound to
	// its evidence record as the store reads it: the saved ones trail the
	// decisions (they are written at most once a second) and are not
	// bound, so an edited counter (a spend reset) is never acted on.
	sess.State = store.Counters{}
	fillCounters(&sess.State)
	for {
		newer, err := e.store.ListDecisions(ctx, store.DecisionFilter{SessionID: id, AfterSeq: sess.State.Calls, Limit: 1000})
		if err != nil {
			return nil, fmt.Errorf("session %s: %w", id, err)
		}
		for _, d := range newer {
			if d.Seq != sess.State.Calls+1 {
				return nil, fmt.Errorf("session %s: decision %d follows %d: the decisions have a gap", id, d.Seq, sess.State.Calls)
			}
			a := d.Action
			if a == nil {
				a = &action.Action{}
			}
			count(&sess.State, a, policy.Effect(d.Effect), d.Rules)
		}
		if len(newer) < 1000 {
			break
		}
	}
	recent, err := e.store.ListDecisions(ctx, store.DecisionFilter{SessionID: id, AfterSeq: max(0, sess.State.Calls-maxRecent), Limit: maxRecent})
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	for _, d := range recent {
		if len(d.Rules) == 1 && d.Rules[0] == ruleSessionStatus {
			continue
		}
		kind := ""
		if d.Action != nil {
			kind = string(d.Action.Kind)
		}
		sess.State.Recent = append(sess.State.Recent, store.Recent{Tool: d.Tool, Kind: kind, Effect: d.Effect})
	}
	l := &live{sess: *sess}
	l.snap.Store(&snapshot{status: sess.Status, parentID: sess.ParentID, own: mv.Mandate})
	l.lastUsed.Store(e.now().UnixNano())
	return l, nil
}

func (e *Engine) evictIdleLocked() {
	cutoff := e.now().Add(-idleEviction).UnixNano()
	for id, l := range e.sessions {
		if l.lastUsed.Load() < cutoff && l.pending.idle() && l.mu.TryLock() {
			l.gone.Store(true)
			delete(e.sessions, id)
			l.mu.Unlock()
		}
	}
	for id, ls := range e.retired {
		if ls = slices.DeleteFunc(ls, func(l *live) bool { return l.pending.idle() }); len(ls) == 0 {
			delete(e.retired, id)
		} else {
			e.retired[id] = ls
		}
	}
}

// blocked says why a session may not act — its own status, or an
// ancestor's suspension or termination — or "" if it may.
func (e *Engine) blocked(ctx context.Context, l *live) (string, error) {
	s := l.snap.Load()
	switch s.status {
	case store.StatusSuspended, store.StatusTerminated, store.StatusCompleted:
		return fmt.Sprintf("session %s is %s", l.sess.ID, s.status), nil
	}
	seen := map[string]bool{l.sess.ID: true}
	for id := s.parentID; id != ""; {
		if seen[id] {
			return "", fmt.Errorf("session %s: parent chain loops at %s", l.sess.ID, id)
		}
		seen[id] = true
		p, err := e.live(ctx, id)
		if err != nil {
			return "", fmt.Errorf("parent session %s: %w", id, err)
		}
		ps := p.snap.Load()
		if ps.status == store.StatusSuspended || ps.status == store.StatusTerminated {
			return fmt.Sprintf("parent session %s is %s", id, ps.status), nil
		}
		id = ps.parentID
	}
	return "", nil
}

// effective is the mandate calls in l are held against: its own, narrowed
// again by its parent's current effective mandate, so a parent's later
// narrowing reaches its children.
func (e *Engine) effective(ctx context.Context, l *live, depth int) (*mandate.Mandate, error) {
	s := l.snap.Load()
	if s.parentID == "" {
		return s.own, nil
	}
	if depth > 64 {
		return nil, fmt.Errorf("session %s: delegation deeper than 64 levels", l.sess.ID)
	}
	p, err := e.live(ctx, s.parentID)
	if err != nil {
		return nil, fmt.Errorf("parent session %s: %w", s.parentID, err)
	}
	pe, err := e.effective(ctx, p, depth+1)
	if err != nil {
		return nil, err
	}
	l.derivedMu.Lock()
	defer l.derivedMu.Unlock()
	if l.derived == nil || l.derivedFrom != pe || l.derivedOwn != s.own {
		d := narrow(pe, p.sess.WorkingDir, s.own, l.sess.WorkingDir)
		d.Version, d.Parent = s.own.Version, s.own.Parent
		l.derived, l.derivedFrom, l.derivedOwn = d, pe, s.own
	}
	return l.derived, nil
}

// narrow is delegation: the child's grant inside its parent's, never wider.
// Relative path globs are made absolute first when the two sessions work in
// different directories. The child keeps its own words.
func narrow(parent *mandate.Mandate, parentWD string, child *mandate.Mandate, childWD string) *mandate.Mandate {
	if parentWD != childWD {
		parent, child = parent.ResolvePaths(parentWD), child.ResolvePaths(childWD)
	}
	out := mandate.Intersect(parent, child)
	out.Instructions = child.Instructions
	return out
}

// SessionRequest creates a session.
type SessionRequest struct {
	// ID is optional: clients that correlate their own sessions (hooks, MCP
	// gateways) may choose it.
	ID      string
	AgentID string
	Agent   store.Agent
	// Intent is the user's words; Mandate a structured grant. Either, both
	// (the words are kept beside the grant) or neither (nothing granted).
	Intent     string
	Mandate    *mandate.Mandate
	Tools      []action.ToolDef
	WorkingDir string
	HomeDir    string
	ParentID   string
	// Source labels where the mandate's words came from; only admins may
	// set it (user, admin, file). Other roles get their role's label.
	Source string
	// ApprovalTimeout is the deadline of the session's approvals ("5m");
	// empty means the server's default.
	ApprovalTimeout string
}

// SessionInfo is a session with its effective mandate.
type SessionInfo struct {
	Session *store.Session
	Mandate *mandate.Mandate
	// Draft explains a mandate compiled from plain words, if one was.
	Draft *mandate.Draft
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$`)

// CreateSession creates a session and its first mandate version.
func (e *Engine) CreateSession(ctx context.Context, p auth.Principal, req SessionRequest) (*SessionInfo, error) {
	if !p.Can(auth.CreateSession) {
		return nil, forbidden(p, auth.CreateSession)
	}
	if req.Agent.ID == "" {
		req.Agent.ID = req.AgentID
	}
	if req.AgentID == "" {
		req.AgentID = req.Agent.ID
	}
	switch {
	case req.AgentID == "":
		return nil, invalid("agent_id is required")
	case req.Agent.ID != req.AgentID:
		return nil, invalid("agent.id %q differs from agent_id %q", req.Agent.ID, req.AgentID)
	case !idPattern.MatchString(req.AgentID):
		return nil, invalid("agent_id %q: use letters, digits and . _ : @ - (at most 128)", req.AgentID)
	case req.ID != "" && !idPattern.MatchString(req.ID):
		return nil, invalid("session_id %q: use letters, digits and . _ : @ - (at most 128)", req.ID)
	case req.WorkingDir != "" && !filepath.IsAbs(req.WorkingDir):
		return nil, invalid("working_directory %q must be an absolute path", req.WorkingDir)
	case req.HomeDir != "" && !filepath.IsAbs(req.HomeDir):
		return nil, invalid("home_directory %q must be an absolute path", req.HomeDir)
	}
	for i, t := range req.Tools {
		if strings.TrimSpace(t.Name) == "" {
			return nil, invalid("tools[%d]: name is required", i)
		}
	}
	if err := relaysOwnAgent(p, req.AgentID, req.Mandate); err != nil {
		return nil, err
	}
	source, err := mandateSource(p, req.Source)
	if err != nil {
		return nil, err
	}
	if _, err := approval.ParseTimeout(req.ApprovalTimeout); err != nil {
		return nil, invalid("approval_timeout: %v", err)
	}
	now := e.now().UTC()
	m, draft, err := buildMandate(req.Intent, ownWords(p, req.Mandate, source), source, now)
	if err != nil {
		return nil, err
	}
	if req.ParentID != "" {
		parent, err := e.live(ctx, req.ParentID)
		if err != nil {
			return nil, fmt.Errorf("parent session: %w", err)
		}
		if !p.Owns(parent.sess.Agent.ID) {
			return nil, fmt.Errorf("%w: parent session %s belongs to agent %q, which this %s token does not serve", ErrForbidden, req.ParentID, parent.sess.Agent.ID, p.Role)
		}
		why, err := e.blocked(ctx, parent)
		if err != nil {
			return nil, err
		}
		if why != "" {
			return nil, fmt.Errorf("%w: cannot delegate: %s", ErrConflict, why)
		}
		pe, err := e.effective(ctx, parent, 0)
		if err != nil {
			return nil, err
		}
		if req.WorkingDir == "" {
			req.WorkingDir = parent.sess.WorkingDir
		}
		if req.HomeDir == "" {
			req.HomeDir = parent.sess.HomeDir
		}
		narrowed := narrow(pe, parent.sess.WorkingDir, m, cleanPath(req.WorkingDir))
		narrowed.Parent = req.ParentID
		m = narrowed
	}
	if req.ID == "" {
		req.ID = newID()
	}
	m.Version = 1
	sess := &store.Session{
		ID: req.ID, Agent: req.Agent, Tools: req.Tools, WorkingDir: cleanPath(req.WorkingDir),
		HomeDir: cleanPath(req.HomeDir), ParentID: req.ParentID, Status: store.StatusActive,
		MandateVersion: 1, CreatedBy: p.String(), CreatedAt: now, UpdatedAt: now,
		ApprovalTimeout: req.ApprovalTimeout,
	}
	fillCounters(&sess.State)
	sess.Head = newID()
	c := &store.Change{
		Guard:      &store.Guard{SessionID: sess.ID, NewHead: sess.Head, Sessions: e.ancestorStates(req.ParentID)},
		NewSession: true,
		Session:    sess,
		Mandate:    &store.MandateVersion{SessionID: sess.ID, Version: 1, Mandate: m, Source: source, CreatedBy: p.String(), CreatedAt: now},
	}
	if err := e.commit(ctx, c); err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	l := &live{sess: *copySession(sess)}
	l.snap.Store(&snapshot{status: sess.Status, parentID: sess.ParentID, own: m})
	l.lastUsed.Store(now.UnixNano())
	e.mu.Lock()
	if _, ok := e.sessions[sess.ID]; !ok {
		e.sessions[sess.ID] = l
	}
	e.mu.Unlock()
	e.log.Info("session created", "session", sess.ID, "agent", sess.Agent.ID, "parent", sess.ParentID, "by", p.String())
	e.metrics.sessionCreated()
	return &SessionInfo{Session: sess, Mandate: m, Draft: draft}, nil
}

func cleanPath(p string) string {
	if p == "" {
		return ""
	}
	return filepath.Clean(p)
}

func fillCounters(c *store.Counters) {
	if c.Counts == nil {
		c.Counts = map[string]int{}
	}
	if c.Spend == nil {
		c.Spend = map[string]float64{}
	}
}

// relaysOwnAgent refuses what a hook token may not do for a session of
// agentID: act for an agent other than the one it serves, or give a
// structured grant instead of the user's words (the hook relays what the
// user typed, and the agent it serves can reach its token).
func relaysOwnAgent(p auth.Principal, agentID string, structured *mandate.Mandate) error {
	if !p.Owns(agentID) {
		return fmt.Errorf("%w: this %s token serves agent %q (and its sub-agents), not %q", ErrForbidden, p.Role, p.HookAgent(), agentID)
	}
	if structured != nil && p.RelaysWords() {
		return fmt.Errorf("%w: a hook token relays the user's words; it cannot give a structured mandate (use a user token for that)", ErrForbidden)
	}
	return nil
}

// mandateSource is the label a principal's words carry. Only an admin may
// choose it; a hook's words are always labelled as relayed by the hook, and
// a hook asking for another label is refused, not relabelled.
func mandateSource(p auth.Principal, requested string) (string, error) {
	switch p.Role {
	case auth.RoleAdmin:
		switch requested {
		case "":
			return "admin", nil
		case "user", "admin", "file", "operator":
			return requested, nil
		}
		return "", invalid("source %q: want user, admin, file or operator", requested)
	case auth.RoleUser:
		if requested != "" && requested != "user" {
			return "", invalid("source %q: a user token's words are labelled user", requested)
		}
		return "user", nil
	case auth.RoleHook:
		if requested != "" && requested != "hook" {
			return "", fmt.Errorf("%w: source %q: a hook token's words are labelled hook — it relays what the user typed and cannot vouch for them as the user's own (use a user token for that)", ErrForbidden, requested)
		}
		return "hook", nil
	}
	return "", forbidden(p, auth.AmendMandate)
}

// buildMandate makes a mandate from words, a structured grant, both or
// neither.
func buildMandate(intent string, given *mandate.Mandate, source string, now time.Time) (*mandate.Mandate, *mandate.Draft, error) {
	intent = strings.TrimSpace(intent)
	var (
		m     *mandate.Mandate
		draft *mandate.Draft
	)
	switch {
	case given != nil:
		cp := *given
		m = &cp
		if err := m.Validate(); err != nil {
			return nil, nil, invalid("mandate: %v", err)
		}
		if intent != "" {
			m.Instructions = append(append([]mandate.Instruction(nil), m.Instructions...), mandate.Instruction{Text: intent, Source: source, At: now})
		}
	case intent != "":
		d, err := mandate.Compile(intent, mandate.WithNow(now))
		if err != nil {
			return nil, nil, invalid("intent: %v", err)
		}
		draft, m = d, d.Mandate
		for i := range m.Instructions {
			m.Instructions[i].Source, m.Instructions[i].At = source, now
		}
	default:
		m = &mandate.Mandate{}
	}
	return m, draft, nil
}

// GetSession returns a session and its effective mandate.
func (e *Engine) GetSession(ctx context.Context, p auth.Principal, id string) (*SessionInfo, error) {
	if !p.Can(auth.Read) {
		return nil, forbidden(p, auth.Read)
	}
	l, err := e.acquire(ctx, id)
	if err != nil {
		return nil, err
	}
	sess := copySession(&l.sess)
	l.mu.Unlock()
	m, err := e.effective(ctx, l, 0)
	if err != nil {
		return nil, err
	}
	return &SessionInfo{Session: sess, Mandate: m}, nil
}

func copySession(s *store.Session) *store.Session {
	cp := *s
	cp.State.Counts = maps.Clone(s.State.Counts)
	cp.State.Spend = maps.Clone(s.State.Spend)
	cp.State.Recent = append([]store.Recent(nil), s.State.Recent...)
	return &cp
}

// AmendRequest is a new mandate version: the user's further words (merged
// into the current mandate) or a whole structured grant (replacing it).
type AmendRequest struct {
	Intent  string
	Mandate *mandate.Mandate
	Source  string
}

// AmendMandate stores a new version of a session's mandate. Agents can never
// do this; their tokens lack the permission.
func (e *Engine) AmendMandate(ctx context.Context, p auth.Principal, id string, req AmendRequest) (*SessionInfo, error) {
	return retryStale(ctx, e, id, func() (*SessionInfo, error) { return e.amendMandate(ctx, p, id, req) })
}

func (e *Engine) amendMandate(ctx context.Context, p auth.Principal, id string, req AmendRequest) (*SessionInfo, error) {
	if !p.Can(auth.AmendMandate) {
		return nil, forbidden(p, auth.AmendMandate)
	}
	if strings.TrimSpace(req.Intent) == "" && req.Mandate == nil {
		return nil, invalid("give intent (the user's words) or mandate (a structured grant)")
	}
	source, err := mandateSource(p, req.Source)
	if err != nil {
		return nil, err
	}
	now := e.now().UTC()
	l, err := e.acquire(ctx, id)
	if err != nil {
		return nil, err
	}
	defer l.mu.Unlock()
	if err := relaysOwnAgent(p, l.sess.Agent.ID, req.Mandate); err != nil {
		return nil, err
	}
	if l.sess.Status == store.StatusTerminated {
		return nil, fmt.Errorf("%w: session %s is terminated", ErrConflict, id)
	}
	prev := l.snap.Load().own
	var next *mandate.Mandate
	var draft *mandate.Draft
	if req.Mandate != nil {
		next, draft, err = buildMandate(req.Intent, ownWords(p, req.Mandate, source), source, now)
	} else {
		var add *mandate.Mandate
		add, draft, err = buildMandate(req.Intent, nil, source, now)
		if err == nil {
			next = mandate.Amend(prev, add)
		}
	}
	if err != nil {
		return nil, err
	}
	if l.sess.ParentID != "" {
		// A child's grant stays inside its parent's, whatever it is amended to.
		parent, err := e.live(ctx, l.sess.ParentID)
		if err != nil {
			return nil, fmt.Errorf("parent session: %w", err)
		}
		pe, err := e.effective(ctx, parent, 0)
		if err != nil {
			return nil, err
		}
		next = narrow(pe, parent.sess.WorkingDir, next, l.sess.WorkingDir)
		next.Parent = l.sess.ParentID
	}
	next.Version = prev.Version + 1
	sess := copySession(&l.sess)
	sess.MandateVersion, sess.UpdatedAt = next.Version, now
	c := &store.Change{
		Guard:   e.guardFor(l, newID()),
		Session: sess,
		Mandate: &store.MandateVersion{SessionID: id, Version: next.Version, Mandate: next, Source: source, CreatedBy: p.String(), CreatedAt: now},
	}
	if err := e.settle(ctx, l, e.submitLocked(l, c), false); err != nil {
		return nil, fmt.Errorf("amend mandate: %w", err)
	}
	l.sess.MandateVersion, l.sess.UpdatedAt, l.sess.Head = next.Version, now, c.Guard.NewHead
	l.snap.Store(&snapshot{status: l.sess.Status, parentID: l.sess.ParentID, own: next})
	e.log.Info("mandate amended", "session", id, "version", next.Version, "source", source, "by", p.String())
	return &SessionInfo{Session: copySession(&l.sess), Mandate: next, Draft: draft}, nil
}

// SetStatus moves a session through its lifecycle. Terminated is final. Only
// a user or admin may lift a suspension: a hook's token is within the agent's
// reach, so it can stop a session but never restart a stopped one. A
// session that becomes completed has its summary recorded (summary.go);
// one already completed (a repeated end event) does not.
func (e *Engine) SetStatus(ctx context.Context, p auth.Principal, id, status string) (*store.Session, error) {
	changed := false
	sess, err := retryStale(ctx, e, id, func() (*store.Session, error) { return e.setStatus(ctx, p, id, status, &changed) })
	if err == nil && changed && status == store.StatusCompleted {
		// After setStatus has let go of the session: the summary's
		// trace takes the session's lock.
		e.recordSummary(ctx, id)
	}
	return sess, err
}

// setStatus sets *changed when it committed a change of status.
func (e *Engine) setStatus(ctx context.Context, p auth.Principal, id, status string, changed *bool) (*store.Session, error) {
	if !p.Can(auth.ChangeStatus) {
		return nil, forbidden(p, auth.ChangeStatus)
	}
	if !store.ValidStatus(status) {
		return nil, invalid("status %q: want active, idle, completed, suspended or terminated", status)
	}
	l, err := e.acquire(ctx, id)
	if err != nil {
		return nil, err
	}
	defer l.mu.Unlock()
	if !p.Owns(l.sess.Agent.ID) {
		return nil, fmt.Errorf("%w: session %s belongs to agent %q, which this %s token does not serve", ErrForbidden, id, l.sess.Agent.ID, p.Role)
	}
	from := l.sess.Status
	switch {
	case from == status:
		return copySession(&l.sess), nil
	case from == store.StatusTerminated:
		return nil, fmt.Errorf("%w: session %s is terminated; that is final", ErrConflict, id)
	case from == store.StatusSuspended && p.Role != auth.RoleUser && p.Role != auth.RoleAdmin && status != store.StatusTerminated:
		return nil, fmt.Errorf("%w: only a user or admin may lift a suspension", ErrForbidden)
	}
	now := e.now().UTC()
	sess := copySession(&l.sess)
	sess.Status, sess.UpdatedAt = status, now
	g := e.guardFor(l, newID())
	if err := e.settle(ctx, l, e.submitLocked(l, &store.Change{Guard: g, Session: sess, Actor: p.String()}), false); err != nil {
		return nil, fmt.Errorf("set status: %w", err)
	}
	l.sess.Status, l.sess.UpdatedAt, l.sess.Head = status, now, g.NewHead
	*changed = true
	l.publish()
	e.log.Info("session status", "session", id, "from", from, "to", status, "by", p.String())
	return copySession(&l.sess), nil
}

// ListSessions lists sessions for readers.
func (e *Engine) ListSessions(ctx context.Context, p auth.Principal, f store.SessionFilter) ([]*store.Session, error) {
	if !p.Can(auth.Read) {
		return nil, forbidden(p, auth.Read)
	}
	return e.store.ListSessions(ctx, f)
}

// Mandates lists a session's mandate versions, oldest first.
func (e *Engine) Mandates(ctx context.Context, p auth.Principal, id string) ([]*store.MandateVersion, error) {
	if !p.Can(auth.Read) {
		return nil, forbidden(p, auth.Read)
	}
	if _, err := e.store.GetSession(ctx, id); err != nil {
		return nil, err
	}
	return e.store.ListMandates(ctx, id)
}
