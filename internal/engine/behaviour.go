package engine

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/baseline"
	"github.com/mandate-dev/mandate/internal/flow"
	"github.com/mandate-dev/mandate/internal/policy"
	"github.com/mandate-dev/mandate/internal/store"
)

// The behaviour layer's part of the engine: every decision gets its
// baseline signals (computed from the agent's profile in memory, a few map
// lookups), and a background fold learns decided calls into the stored
// profiles, session by session, idempotently (store.BaselineFold's cursor),
// so it catches up after a crash and several replicas can fold at once.

// Bounds of the behaviour layer's memory.
const (
	// maxCachedAgents bounds the agent profiles kept in memory; past it
	// the cache is cleared and profiles reload from the store.
	maxCachedAgents = 10_000
	// profileTTL is how long a cached profile is used before it is read
	// again (another replica may have learned since).
	profileTTL = 5 * time.Second
	// catchUpSessions is how many recent sessions the first fold of a
	// process looks at for decisions a crash left unfolded.
	catchUpSessions = 500
	// foldPace spaces the fold's rounds while sessions keep deciding. A
	// fold is one transaction per session whatever it learns, so its cost
	// grows with the sessions deciding, not with their decisions; the
	// signals see what it learned a round later (FlushBaselines skips the
	// wait).
	foldPace = time.Second
	// maxHeldDecisions bounds the decisions held for one session's next
	// fold; past it they are dropped and the fold reads the store.
	maxHeldDecisions = 4096
)

// heldDecisions are one session's durable decisions waiting for the fold,
// as this process committed them (redacted, as stored), in sequence order.
// The fold learns them without reading them back from the store — which
// cost a fifth of a busy server's CPU in decoding them and checking their
// evidence binding again — whenever they are exactly the decisions after
// the session's cursor; otherwise (another replica decided in the session,
// a decision was committed elsewhere, a restart, too many held) it reads
// the store as before. Either way each decision is learned once.
type heldDecisions struct {
	agent   store.Agent
	workDir string
	list    []*store.Decision
	// incomplete: some were not held (dropped past the bound, or the
	// session was queued without them); the fold reads the store.
	incomplete bool
}

type behaviour struct {
	e   *Engine
	cfg *baseline.Config
	bs  store.Baselines // nil: the store keeps no baselines
	// noLearn stops the fold (Options.NoBaselineLearning).
	noLearn bool
	// scanner finds injected instructions in observations (traces).
	scanner *flow.Scanner

	mu       sync.Mutex
	cond     *sync.Cond // signalled when the fold goes idle
	profiles map[string]cachedProfile
	// pending are the queued sessions, with the durable decisions this
	// process made in them since their last fold (held, so the fold need
	// not read them back from the store).
	pending  map[string]*heldDecisions
	queue    []string
	running  bool
	caughtUp bool
	// flushing skips the fold's pacing while someone waits for it.
	flushing atomic.Bool
	// folded are the profiles the fold last stored, decoded, with the
	// bytes it stored (b.mu): a fold round that reads exactly those bytes
	// learns on the kept profile instead of decoding its JSON again; any
	// other bytes (another replica's write, a drift mark, a rolled-back
	// fold) are decoded as before. A round takes its entries out, so a
	// fold whose Apply runs again decodes; they come back once it has
	// committed. Never shared: the profile cache gets a copy.
	folded map[store.BaselineKey]foldedProfile
}

// foldedProfile is a profile the fold stored under key, its stored bytes
// and its shapes' bytes among them (the next round, learning one
// session's decisions, writes only that session's shape again).
type foldedProfile struct {
	key    store.BaselineKey
	raw    []byte
	p      *baseline.Profile
	shapes baseline.ShapeJSON
}

type cachedProfile struct {
	p  *baseline.Profile // never modified once cached
	at time.Time
}

func newBehaviour(e *Engine, cfg *baseline.Config, opts *Options) (*behaviour, error) {
	if cfg == nil {
		var err error
		if cfg, err = baseline.Builtin(); err != nil {
			return nil, fmt.Errorf("engine: baseline knowledge: %w", err)
		}
	}
	b := &behaviour{e: e, cfg: cfg, profiles: map[string]cachedProfile{}, pending: map[string]*heldDecisions{},
		folded: map[store.BaselineKey]foldedProfile{}}
	b.cond = sync.NewCond(&b.mu)
	b.bs, _ = e.store.(store.Baselines)
	b.noLearn = opts.NoBaselineLearning
	sc, err := flow.NewScanner()
	if err != nil {
		return nil, fmt.Errorf("engine: injection scanner: %w", err)
	}
	b.scanner = sc
	return b, nil
}

// BaselineConfig returns the behaviour layer's knowledge.
func (e *Engine) BaselineConfig() *baseline.Config { return e.beh.cfg }

// versionOf is a session's agent version.
func versionOf(a store.Agent) string {
	return baseline.Version(a.Model, a.SystemPromptHash, a.ToolsetHash, a.RetrievalSource)
}

// agentVersion is versionOf the session's agent, computed once for the
// agent it was computed for (l.mu held).
func (l *live) agentVersion() string {
	if !l.verSet || l.verOf != l.sess.Agent {
		l.ver, l.verOf, l.verSet = versionOf(l.sess.Agent), l.sess.Agent, true
	}
	return l.ver
}

// assessLocked compares a call with its agent's baseline, before the call
// is counted in the session (l.mu held).
func (e *Engine) assessLocked(ctx context.Context, l *live, tool string, a *action.Action, f *flow.Facts, now time.Time) baseline.Result {
	b := e.beh
	p := b.profile(ctx, l.sess.Agent.ID)
	cur := baseline.Current{Event: b.cfg.EventOf(l.sess.ID, l.sess.WorkingDir, tool, "", now.Hour(), a), Counts: l.sess.State.Counts,
		Version: l.agentVersion(), Exposure: exposureOf(f)}
	for i := len(l.sess.State.Recent) - 1; i >= 0; i-- {
		if r := l.sess.State.Recent[i]; r.Effect == "allow" {
			cur.PrevTool, cur.PrevKind = r.Tool, r.Kind
			break
		}
	}
	return b.cfg.Assess(p, cur)
}

// callBaseline is the BaselineSource of one call in its session (l.mu
// held while the call is decided).
type callBaseline struct {
	e    *Engine
	ctx  context.Context
	l    *live
	tool string
	now  time.Time
}

func (c *callBaseline) Assess(a *action.Action, f *flow.Facts) baseline.Result {
	return c.e.assessLocked(c.ctx, c.l, c.tool, a, f, c.now)
}

// exposureOf says what in a call's flow makes a new destination riskier:
// data it carries from a sensitive or private read, secrets the session
// read, a destination named by open content or an injected instruction.
// Reading open content or the user's own data alone is not in it: a
// research agent reads the web and a mail agent the user's mail every
// session.
func exposureOf(f *flow.Facts) []string {
	if f == nil {
		return nil
	}
	var out []string
	switch {
	case f.CarriesSensitive:
		out = append(out, "carrying data from a sensitive read")
	case f.CarriesPrivate:
		out = append(out, "carrying the user's private data")
	case len(f.SensitiveRead) > 0:
		out = append(out, "after the session read secrets or sensitive data")
	}
	if len(f.OpenBody) > 0 {
		out = append(out, "named in the body of open content")
	}
	if f.Injected || len(f.FollowsInjection) > 0 {
		out = append(out, "following an injected instruction")
	}
	return out
}

// baselineFacts is what rules see of an assessment (`baseline`).
// unlike_self keeps its meaning for rules — monitoring, and the score at
// or above the threshold — so a policy that asks on it alone does not
// start asking while a baseline learns; the learning flag is on the
// decision's signals (baseline.unlike_self) only.
func baselineFacts(r baseline.Result) *policy.BaselineFacts {
	return &policy.BaselineFacts{
		State: r.State, FirstSeen: r.FirstSeen, RareTool: r.RareTool, RareTransition: r.RareTransition,
		Rate: r.Rate, RateHigh: r.RateHigh, Score: r.Score, Reasons: r.Reasons, UnlikeSelf: r.UnlikeSelf && r.State == baseline.Monitoring,
	}
}

// profile returns an agent's profile across versions, from memory or the
// store; an empty one when it has none or the store fails (the signals then
// say learning, and the failure is logged).
func (b *behaviour) profile(ctx context.Context, agent string) *baseline.Profile {
	b.mu.Lock()
	c, ok := b.profiles[agent]
	b.mu.Unlock()
	if ok && time.Since(c.at) < profileTTL {
		return c.p
	}
	p := baseline.NewProfile(agent, "")
	if b.bs != nil {
		row, err := b.bs.GetBaseline(ctx, agent, "")
		switch {
		case err == nil:
			if q, derr := decodeProfile(row); derr == nil {
				p = q
			} else {
				b.e.log.Error("baseline unreadable; signals use an empty one", "agent", agent, "err", derr)
			}
		case !errors.Is(err, store.ErrNotFound):
			b.e.log.Error("baseline not loaded; signals use an empty one", "agent", agent, "err", err)
			if ok {
				return c.p // keep what we had rather than forget it
			}
		}
	}
	b.cache(agent, p)
	return p
}

func (b *behaviour) cache(agent string, p *baseline.Profile) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.profiles) >= maxCachedAgents {
		clear(b.profiles)
	}
	b.profiles[agent] = cachedProfile{p: p, at: time.Now()}
}

func decodeProfile(row *store.Baseline) (*baseline.Profile, error) {
	p := baseline.NewProfile(row.Agent, row.Version)
	if err := json.Unmarshal(row.Profile, p); err != nil {
		return nil, fmt.Errorf("baseline %s/%s: %w", row.Agent, row.Version, err)
	}
	return baseline.NewProfileFrom(p), nil
}

// learn queues a session whose decision d just became durable for the
// fold, holding d for it. agent and workDir are the session's (fixed when
// it is made).
func (b *behaviour) learn(agent store.Agent, workDir string, d *store.Decision) {
	if b.bs == nil || b.noLearn {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	h := b.pending[d.SessionID]
	if h == nil {
		h = &heldDecisions{agent: agent, workDir: workDir}
		b.pending[d.SessionID] = h
		b.queue = append(b.queue, d.SessionID)
	}
	switch {
	case h.incomplete:
	case len(h.list) >= maxHeldDecisions || !storedAsIs(d):
		h.list, h.incomplete = nil, true
	default:
		h.list = append(h.list, d)
	}
	if !b.running {
		b.running = true
		go b.run()
	}
}

// run folds queued sessions until none is left. The first run of a process
// also queues recent sessions, so decisions a crash left unfolded are
// learned.
func (b *behaviour) run() {
	ctx := context.Background()
	b.mu.Lock()
	first := !b.caughtUp
	b.caughtUp = true
	b.mu.Unlock()
	if first {
		if sessions, err := b.e.store.ListSessions(ctx, store.SessionFilter{Limit: catchUpSessions}); err == nil {
			b.mu.Lock()
			for _, s := range sessions {
				if h := b.pending[s.ID]; h == nil {
					b.pending[s.ID] = &heldDecisions{incomplete: true}
					b.queue = append(b.queue, s.ID)
				} else {
					// Decisions a crash left unfolded may precede the
					// held ones.
					h.list, h.incomplete = nil, true
				}
			}
			b.mu.Unlock()
		}
	}
	for round := 0; ; round++ {
		b.mu.Lock()
		if len(b.queue) == 0 {
			b.running = false
			b.cond.Broadcast()
			b.mu.Unlock()
			return
		}
		batch := b.queue
		held := make([]*heldDecisions, len(batch))
		for i, id := range batch {
			held[i] = b.pending[id]
		}
		b.queue = nil
		clear(b.pending)
		b.mu.Unlock()
		if round > 0 && !b.flushing.Load() {
			// Sessions that kept deciding while the last round ran: wait
			// a little so one fold takes many decisions at once (a fold
			// is a transaction; one per decision would double the
			// store's write load).
			time.Sleep(foldPace)
		}
		for i, id := range batch {
			if err := b.foldHeld(ctx, id, held[i]); err != nil && !errors.Is(err, store.ErrClosed) {
				b.e.log.Error("baseline fold failed; it is retried with the session's next decision", "session", id, "err", err)
			}
		}
	}
}

// FlushBaselines waits until every decision made so far is folded into the
// baselines (the eval harness learns episode by episode; Close waits too).
func (e *Engine) FlushBaselines(ctx context.Context) error {
	b := e.beh
	b.flushing.Store(true)
	defer b.flushing.Store(false)
	done := make(chan struct{})
	go func() {
		b.mu.Lock()
		for b.running {
			b.cond.Wait()
		}
		b.mu.Unlock()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for the baseline fold: %w", ctx.Err())
	}
}

// errNotHeld stops a fold of held decisions that are not exactly the ones
// after the session's cursor; errNothingNew one that has nothing to learn.
var (
	errNotHeld    = errors.New("the held decisions do not follow the session's cursor")
	errNothingNew = errors.New("nothing after the session's cursor")
)

// foldHeld learns a session's decisions after its cursor from the ones
// held for it, or from the store when they do not cover them.
func (b *behaviour) foldHeld(ctx context.Context, sessionID string, h *heldDecisions) error {
	if h == nil || h.incomplete || len(h.list) == 0 {
		return b.fold(ctx, sessionID)
	}
	// A session's concurrent calls become durable in one group commit and
	// are handed to learn in any order.
	slices.SortFunc(h.list, func(x, y *store.Decision) int { return cmp.Compare(x.Seq, y.Seq) })
	err := b.foldDecisions(ctx, sessionID, h.agent, h.workDir, h.list, true)
	if errors.Is(err, errNotHeld) {
		return b.fold(ctx, sessionID)
	}
	return err
}

// fold learns a session's decisions after its cursor, read from the store.
func (b *behaviour) fold(ctx context.Context, sessionID string) error {
	sess, err := b.e.store.GetSession(ctx, sessionID)
	if err != nil {
		return err
	}
	cursor, err := b.bs.BaselineCursor(ctx, sessionID)
	if err != nil {
		return err
	}
	var decisions []*store.Decision
	for {
		page, err := b.e.store.ListDecisions(ctx, store.DecisionFilter{SessionID: sessionID, AfterSeq: cursor, Limit: 1000})
		if err != nil {
			return err
		}
		decisions = append(decisions, page...)
		if len(page) < 1000 {
			break
		}
		cursor = page[len(page)-1].Seq
	}
	if len(decisions) == 0 {
		return nil
	}
	return b.foldDecisions(ctx, sessionID, sess.Agent, sess.WorkingDir, decisions, false)
}

// foldDecisions learns decisions (in sequence order) of a session into its
// agent's profiles, those after the cursor only. With exact, they must be
// every decision after the cursor (sequence numbers are consecutive), or
// nothing is learned and errNotHeld says so.
func (b *behaviour) foldDecisions(ctx context.Context, sessionID string, ag store.Agent, workDir string, decisions []*store.Decision, exact bool) error {
	agent, version := ag.ID, versionOf(ag)
	var (
		learned    *baseline.Profile
		previous   string
		isNew      bool
		checkDrift bool
		kept       [2]foldedProfile
	)
	err := b.bs.FoldBaseline(ctx, &store.BaselineFold{
		SessionID: sessionID,
		Keys:      []store.BaselineKey{{Agent: agent}, {Agent: agent, Version: version}},
		Apply: func(cursor int, rows []*store.Baseline) (int, error) {
			if exact {
				want := cursor + 1
				for _, d := range decisions {
					if d.Seq <= cursor {
						continue
					}
					if d.Seq != want {
						return 0, errNotHeld
					}
					want++
				}
				if want == cursor+1 {
					return 0, errNothingNew
				}
			}
			all, ver, shapes, err := b.profilesOf(rows)
			if err != nil {
				return 0, err
			}
			previous, isNew = "", false
			if rows[1].Profile == nil {
				previous, isNew = all.AddVersion(version)
				ver.Previous = previous
				ver.Fingerprint = &baseline.Fingerprint{Model: ag.Model, SystemPromptHash: ag.SystemPromptHash,
					ToolsetHash: ag.ToolsetHash, RetrievalSource: ag.RetrievalSource}
			}
			next := cursor
			for _, d := range decisions {
				if d.Seq <= cursor {
					continue
				}
				ev := b.cfg.EventOf(sessionID, workDir, d.Tool, d.Effect, d.CreatedAt.Hour(), d.Action)
				all.Learn(b.cfg, ev, d.CreatedAt)
				ver.Learn(b.cfg, ev, d.CreatedAt)
				next = max(next, d.Seq)
			}
			for i, p := range []*baseline.Profile{all, ver} {
				// json.Marshal's bytes, written from the type.
				var next baseline.ShapeJSON
				if rows[i].Profile, next, err = p.AppendJSONReusing(make([]byte, 0, len(rows[i].Profile)+1024), shapes[i], sessionID); err != nil {
					return 0, err
				}
				kept[i] = foldedProfile{store.BaselineKey{Agent: rows[i].Agent, Version: rows[i].Version}, rows[i].Profile, p, next}
			}
			learned = all
			checkDrift = ver.Previous != "" && !ver.DriftAlerted
			return next, nil
		},
	})
	if errors.Is(err, errNothingNew) {
		return nil
	}
	if err != nil {
		return err
	}
	b.keepFolded(kept[:])
	b.cache(agent, learned.Clone())
	if isNew && previous != "" {
		b.record(ctx, &store.BehaviourRecord{Type: "version", Agent: agent, Version: version, SessionID: sessionID,
			Detail: mustJSON(map[string]any{"previous": previous, "agent": ag})})
	}
	if !checkDrift {
		return nil
	}
	return b.checkDrift(ctx, agent, version)
}

// storedAsIs reports whether the fold reads d's learned fields back from
// the store exactly as they are held: JSON replaces invalid UTF-8, so a
// decision naming such a string is learned from the store instead.
func storedAsIs(d *store.Decision) bool {
	if !utf8.ValidString(d.Tool) || !utf8.ValidString(d.Effect) {
		return false
	}
	a := d.Action
	if a == nil {
		return true
	}
	ok := utf8.ValidString(string(a.Kind))
	for _, k := range a.Kinds {
		ok = ok && utf8.ValidString(string(k))
	}
	for _, h := range a.Hosts {
		ok = ok && utf8.ValidString(h)
	}
	for _, r := range a.Recipients {
		ok = ok && utf8.ValidString(r.Address)
	}
	for _, acc := range a.Accounts {
		ok = ok && utf8.ValidString(acc)
	}
	for _, p := range a.Paths {
		ok = ok && utf8.ValidString(p.Path)
	}
	for _, c := range a.Commands {
		ok = ok && utf8.ValidString(c.Name)
		for _, arg := range c.Argv {
			ok = ok && utf8.ValidString(arg)
		}
	}
	return ok
}

// profilesOf are a fold's two profiles, the agent's and the version's:
// the ones the fold last stored when the rows hold their bytes (with their
// shapes' bytes), decoded otherwise.
func (b *behaviour) profilesOf(rows []*store.Baseline) (all, ver *baseline.Profile, shapes [2]baseline.ShapeJSON, err error) {
	out := make([]*baseline.Profile, len(rows))
	for i, r := range rows {
		if f := b.takeFolded(r); f.p != nil {
			out[i], shapes[i] = f.p, f.shapes
			continue
		}
		out[i] = baseline.NewProfile(r.Agent, r.Version)
		if r.Profile != nil {
			if err := json.Unmarshal(r.Profile, out[i]); err != nil {
				return nil, nil, shapes, fmt.Errorf("baseline %s/%s: %w", r.Agent, r.Version, err)
			}
			out[i] = baseline.NewProfileFrom(out[i])
		}
	}
	return out[0], out[1], shapes, nil
}

// takeFolded takes the profile the fold last stored for r's key out of
// b.folded; it returns it when r holds the bytes stored with it, none
// otherwise.
func (b *behaviour) takeFolded(r *store.Baseline) foldedProfile {
	k := store.BaselineKey{Agent: r.Agent, Version: r.Version}
	b.mu.Lock()
	f, ok := b.folded[k]
	delete(b.folded, k)
	b.mu.Unlock()
	if !ok || r.Profile == nil || !bytes.Equal(f.raw, r.Profile) {
		return foldedProfile{}
	}
	return f
}

// keepFolded keeps the profiles a fold just committed, with their bytes.
func (b *behaviour) keepFolded(kept []foldedProfile) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.folded)+len(kept) > 2*maxCachedAgents {
		clear(b.folded)
	}
	for _, f := range kept {
		b.folded[f.key] = f
	}
}

// checkDrift compares a version with the one before it and reports a
// drift verdict once (an event and an evidence record), whichever replica
// sees it first.
func (b *behaviour) checkDrift(ctx context.Context, agent, version string) error {
	d, err := b.e.drift(ctx, agent, version)
	if err != nil || d == nil || d.Verdict != baseline.VerdictDrift {
		return err
	}
	alerted := false
	err = b.bs.FoldBaseline(ctx, &store.BaselineFold{
		Keys: []store.BaselineKey{{Agent: agent, Version: version}},
		Apply: func(_ int, rows []*store.Baseline) (int, error) {
			if rows[0].Profile == nil {
				return 0, nil
			}
			p := baseline.NewProfile(agent, version)
			if err := json.Unmarshal(rows[0].Profile, p); err != nil {
				return 0, err
			}
			alerted = !p.DriftAlerted
			p.DriftAlerted = true
			var err error
			rows[0].Profile, err = json.Marshal(p)
			return 0, err
		},
	})
	if err != nil || !alerted {
		return err
	}
	b.record(ctx, &store.BehaviourRecord{Type: "drift", Agent: agent, Version: version, Detail: mustJSON(d)})
	b.e.appr.publish("drift", "", d)
	return nil
}

// drift compares a version of an agent with its previous one; nil when
// the version is the agent's first.
func (e *Engine) drift(ctx context.Context, agent, version string) (*baseline.Drift, error) {
	to, err := e.loadProfile(ctx, agent, version)
	if err != nil || to.Previous == "" {
		return nil, err
	}
	from, err := e.loadProfile(ctx, agent, to.Previous)
	if err != nil {
		return nil, err
	}
	// A previous version too short to test against is pooled with the
	// ones before it (baseline.Config.Reference).
	cfg := e.beh.cfg
	var earlier []*baseline.Profile
	seen := map[string]bool{to.Version: true, from.Version: true}
	for n, prev := from.Sessions, from.Previous; n < cfg.Drift.MinSessions && prev != "" && !seen[prev]; {
		seen[prev] = true
		p, err := e.loadProfile(ctx, agent, prev)
		if err != nil {
			return nil, err
		}
		earlier = append(earlier, p)
		n, prev = n+p.Sessions, p.Previous
	}
	d := cfg.Compare(cfg.Reference(from, earlier...), to)
	return &d, nil
}

func (e *Engine) loadProfile(ctx context.Context, agent, version string) (*baseline.Profile, error) {
	if e.beh.bs == nil {
		return nil, fmt.Errorf("baseline %s/%s: %w (this store keeps no baselines)", agent, version, ErrNotFound)
	}
	row, err := e.beh.bs.GetBaseline(ctx, agent, version)
	if err != nil {
		return nil, err
	}
	return decodeProfile(row)
}

// record commits a behaviour record to the evidence log.
func (b *behaviour) record(ctx context.Context, r *store.BehaviourRecord) {
	if r.CreatedAt.IsZero() {
		r.CreatedAt = b.e.now().UTC()
	}
	if err := b.e.commit(ctx, &store.Change{Behaviour: []*store.BehaviourRecord{r}}); err != nil {
		b.e.log.Error("behaviour record not committed", "type", r.Type, "agent", r.Agent, "err", err)
	}
}

func mustJSON(v any) json.RawMessage {
	raw, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(fmt.Sprintf("%q", err.Error()))
	}
	return raw
}
