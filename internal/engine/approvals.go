package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mandate-dev/mandate/api"
	"github.com/mandate-dev/mandate/internal/approval"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/mandate"
	"github.com/mandate-dev/mandate/internal/policy"
	"github.com/mandate-dev/mandate/internal/store"
)

// Every ask becomes an approval, in the same transaction as its decision:
// bound to the exact call (tool + canonical hash of its redacted args), with
// its reasons, who may answer and a deadline. Before a new one is made, the
// session's earlier approvals are consulted, in this order:
//
//   - an approved, unused approval of this exact call allows it once (rule
//     approval.granted, the approval is marked used by the decision, in the
//     same transaction: a second identical call asks again);
//   - a pending approval of this exact call is reused: the decision names
//     it, and nobody is asked twice;
//   - a denial of this exact call denies it again (rule approval.denied):
//     retrying what a person refused does not put it to them again;
//   - a session-scoped answer about calls like this one (approval.Matches)
//     allows or denies it; a denial wins.
//
// Only asks are consulted: an approval never turns a deny into anything else.
// An expired or withdrawn approval answers nothing; the call asks again.

// Event types the engine publishes (the event bus's table lists every type).
const (
	EventDecision         = "decision"
	EventApproval         = "approval"
	EventApprovalAnswered = "approval.answered"
	EventGap              = "gap"
)

// Publisher receives what the engine committed, once it is durable: the
// event stream behind GET /v1/events and the webhooks. Publish must not
// block; data is not modified afterwards.
type Publisher interface {
	Publish(typ, sessionID string, data any)
}

// ApprovalOptions configure the approval queue.
type ApprovalOptions struct {
	// Timeout is a pending approval's deadline when neither the rule nor
	// the session sets one (default approval.DefaultTimeout).
	Timeout time.Duration
	// Judge, if set, is asked about eligible asks (judge.go).
	Judge Judge
	// Events receives decisions, approvals and gaps.
	Events Publisher
	// Hub wakes this process's waiters; nil makes one.
	Hub *approval.Hub
	// RecentCalls is how many of the session's last calls the judge sees
	// (default JudgeRecentCalls).
	RecentCalls int
}

func statusOf(a *store.Approval) *api.ApprovalStatus {
	return &api.ApprovalStatus{State: a.State, Deadline: a.Deadline, Scope: a.Scope, AnsweredBy: a.AnsweredBy, Via: a.Via, Note: a.Note}
}

// approvals is the engine's approval queue.
type approvals struct {
	st   store.Approvals // nil: the store keeps none, and an ask stays an ask
	opts ApprovalOptions
	hub  *approval.Hub

	mu sync.Mutex
	// inUse are approvals a decision still committing is using up: the
	// next identical call in the session must not use them too.
	inUse map[string]bool
	// kick wakes the expiry loop when a deadline earlier than the one it
	// sleeps towards appears.
	kick chan struct{}
	// cache holds what asks read of a session's approvals (nil: off;
	// approvals_cache.go).
	cache *approvalCache
}

func newApprovals(st Store, opts ApprovalOptions) *approvals {
	a := &approvals{opts: opts, hub: opts.Hub, inUse: map[string]bool{}, kick: make(chan struct{}, 1)}
	if a.hub == nil {
		a.hub = approval.NewHub()
	}
	if a.opts.Timeout <= 0 {
		a.opts.Timeout = approval.DefaultTimeout
	}
	if a.opts.RecentCalls <= 0 {
		a.opts.RecentCalls = JudgeRecentCalls
	}
	a.st, _ = st.(store.Approvals)
	if _, shared := st.(store.ApprovalWatcher); !shared && a.st != nil {
		a.cache = newApprovalCache()
	}
	return a
}

// Hub returns the engine's waiters, for surfaces that wait on approvals.
func (e *Engine) Hub() *approval.Hub { return e.appr.hub }

// askOutcome is what the approval queue did with an ask: the approval the
// decision names, the rows its change writes, and the judge's part.
type askOutcome struct {
	approvalID string
	status     *api.ApprovalStatus
	// create is a new approval; useCreate marks it used by the decision
	// (a judge resolved it); change updates an existing one (use).
	create    *store.Approval
	useCreate bool
	change    *store.ApprovalChange
	inUse     string
	judge     *store.JudgeOpinion
	exchange  *store.JudgeExchange
	// c is the change as submitted: redacted once submitted, so events
	// are published from it.
	c *store.Change
}

// attach puts the outcome's rows into the decision's change and names the
// approval on the decision.
func (o *askOutcome) attach(c *store.Change, d *Decision) {
	if o == nil {
		return
	}
	if o.create != nil {
		o.create.DecisionID = d.ID
		if o.useCreate {
			o.create.UsedBy = d.ID
		}
		c.Approvals = append(c.Approvals, o.create)
	}
	if o.change != nil {
		o.change.Approval.UsedBy = d.ID
		c.ApprovalChanges = append(c.ApprovalChanges, o.change)
	}
	if o.exchange != nil {
		o.exchange.DecisionID = d.ID
		c.JudgeExchanges = append(c.JudgeExchanges, o.exchange)
	}
	c.Decision.ApprovalID, c.Decision.Judge = o.approvalID, o.judge
	d.ApprovalID, d.Approval, d.Judge = o.approvalID, o.status, o.judge
	o.c = c
}

func (a *approvals) use(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.inUse[id] {
		return false
	}
	a.inUse[id] = true
	return true
}

func (a *approvals) release(id string) {
	if id == "" {
		return
	}
	a.mu.Lock()
	delete(a.inUse, id)
	a.mu.Unlock()
}

// failed undoes an outcome whose decision did not commit.
func (a *approvals) failed(o *askOutcome) {
	if o != nil {
		a.release(o.inUse)
	}
}

func (a *approvals) publish(typ, session string, data any) {
	if a.opts.Events != nil {
		a.opts.Events.Publish(typ, session, data)
	}
}

// decided publishes a durable decision, then what its ask did.
func (e *Engine) decided(d *Decision, o *askOutcome) {
	a := e.appr
	if r := d.rec; a.opts.Events != nil && r != nil {
		ev := &api.DecisionEvent{DecisionID: r.ID, SessionID: r.SessionID, Seq: r.Seq, Surface: r.Surface, Tool: r.Tool,
			Effect: r.Effect, Rules: r.Rules, Reasons: r.Reasons, ApprovalID: r.ApprovalID, Judge: r.Judge, CreatedAt: r.CreatedAt}
		if r.Action != nil {
			ev.Kind = string(r.Action.Kind)
		}
		a.publish(EventDecision, r.SessionID, ev)
	}
	if o == nil {
		return
	}
	a.release(o.inUse)
	if o.change != nil {
		a.hub.Wake(o.change.Approval.ID)
	}
	if o.c != nil {
		for _, ap := range o.c.Approvals {
			if ap.Final() {
				a.publish(EventApprovalAnswered, ap.SessionID, ap)
			} else {
				a.publish(EventApproval, ap.SessionID, ap)
				a.wakeExpiry()
			}
		}
	}
}

func (a *approvals) wakeExpiry() {
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// resolveAsk runs the approval queue (and the judge) on an ask, with l.mu
// held. Asking the judge releases l.mu while the model thinks, then decides
// the call again on the session as it then is; the returned live entry is
// held either way. On error l.mu is not held.
func (e *Engine) resolveAsk(ctx context.Context, l *live, req EvaluateRequest, raw json.RawMessage, res Result, version int, pol *policy.Policy, now time.Time) (*live, Result, int, *policy.Policy, time.Time, error) {
	if e.appr.st == nil {
		return l, res, version, pol, now, nil
	}
	red, err := e.redactCall(raw, &res)
	if err == nil {
		var hash string
		if hash, err = approval.ArgsHash(red.Args); err == nil {
			var judgeIt bool
			judgeIt, err = e.matchAsk(ctx, l, req, &res, hash, pol, now)
			if err == nil && judgeIt {
				return e.judgeAsk(ctx, l, req, res, version, pol, red, hash, now)
			}
		}
	}
	if err != nil {
		e.log.Error("approval queue failed; denying", "session", req.SessionID, "tool", req.Tool, "err", err)
		res.Verdict, res.ask = DenyInternal(), nil
		if errors.Is(err, store.ErrTampered) {
			// The reason is the row edited behind the log's back.
			res.Verdict.Reasons = append(res.Verdict.Reasons, err.Error())
		}
	}
	return l, res, version, pol, now, nil
}

// redactCall is the call as it will be stored: args and action redacted.
func (e *Engine) redactCall(raw json.RawMessage, res *Result) (*store.Decision, error) {
	d := &store.Decision{Args: raw, Action: cloneAction(&res.Action)}
	if e.redactor == nil {
		return d, nil
	}
	c := &store.Change{Decision: d}
	if err := e.redactor.Redact(c); err != nil {
		return nil, fmt.Errorf("redact: %w", err)
	}
	return c.Decision, nil
}

// matchAsk consults the session's approvals for an ask (see the top of
// this file) and sets res's verdict and outcome. It reports whether a new
// approval was made that the judge may see.
func (e *Engine) matchAsk(ctx context.Context, l *live, req EvaluateRequest, res *Result, hash string, pol *policy.Policy, now time.Time) (bool, error) {
	a := e.appr
	list, err := a.callApprovals(ctx, l.sess.ID, req.Tool, hash)
	if err != nil {
		return false, err
	}
	for _, ap := range list {
		switch ap.State {
		case store.ApprovalApproved:
			if ap.Scope == store.ScopeSession {
				break // answered below, with the session's other grants
			}
			if ap.UsedBy != "" || !a.use(ap.ID) {
				continue
			}
			cp := approval.Clone(ap)
			cp.Rev++
			res.Verdict = granted(ap, res.Verdict)
			res.ask = &askOutcome{approvalID: ap.ID, status: statusOf(ap), change: &store.ApprovalChange{Approval: cp, From: ap.State}, inUse: ap.ID}
			return false, nil
		case store.ApprovalPending:
			if !now.Before(ap.Deadline) {
				continue // expired; the expiry loop records it
			}
			res.ask = &askOutcome{approvalID: ap.ID, status: statusOf(ap)}
			return false, nil
		case store.ApprovalDenied:
			if ap.Scope == store.ScopeSession {
				break
			}
			res.Verdict = refused(ap, res.Verdict)
			res.ask = &askOutcome{approvalID: ap.ID, status: statusOf(ap)}
			return false, nil
		}
	}
	grants, err := a.sessionGrants(ctx, l.sess.ID)
	if err != nil {
		return false, err
	}
	var allow *store.Approval
	for _, g := range slices.Backward(grants) {
		if !approval.Matches(g.Like, req.Tool, &res.Action) {
			continue
		}
		if g.State == store.ApprovalDenied {
			res.Verdict = refused(g, res.Verdict)
			res.ask = &askOutcome{approvalID: g.ID, status: statusOf(g)}
			return false, nil
		}
		if allow == nil && g.State == store.ApprovalApproved {
			allow = g
		}
	}
	if allow != nil {
		res.Verdict = granted(allow, res.Verdict)
		res.ask = &askOutcome{approvalID: allow.ID, status: statusOf(allow)}
		return false, nil
	}
	ap := e.newApproval(l, req, res, hash, pol, now)
	ap.Args, ap.Kind = approvalArgs(req, res), string(res.Action.Kind)
	res.ask = &askOutcome{approvalID: ap.ID, status: statusOf(ap), create: ap}
	j := a.opts.Judge
	return j != nil && j.Eligible(res.Verdict.Rules, judgeMarked(res.Verdict.Rules, pol)), nil
}

// newApproval makes the pending approval for an ask.
func (e *Engine) newApproval(l *live, req EvaluateRequest, res *Result, hash string, pol *policy.Policy, now time.Time) *store.Approval {
	var ruleTimeouts []time.Duration
	for _, r := range res.Verdict.Rules {
		if _, t, ok := pol.AskOptions(r); ok && t > 0 {
			ruleTimeouts = append(ruleTimeouts, t)
		}
	}
	sessionTimeout, _ := approval.ParseTimeout(l.sess.ApprovalTimeout)
	return &store.Approval{
		ID: newID(), SessionID: l.sess.ID, Tool: req.Tool, ArgsHash: hash,
		Like:  approval.Like(req.Tool, &res.Action),
		Rules: slices.Clone(res.Verdict.Rules), Reasons: slices.Clone(res.Verdict.Reasons),
		AnswerableBy: approval.Roles(), State: store.ApprovalPending,
		Deadline: approval.Deadline(now, ruleTimeouts, sessionTimeout, e.appr.opts.Timeout),
		Rev:      1, CreatedAt: now,
	}
}

// maxApprovalArgs bounds the arguments an approval shows; larger ones are
// summarised (the asking decision has them whole).
const maxApprovalArgs = 64 << 10

func approvalArgs(req EvaluateRequest, res *Result) json.RawMessage {
	raw := req.RawArgs
	if raw == nil {
		raw, _ = json.Marshal(req.Args)
	}
	if len(raw) <= maxApprovalArgs {
		return raw
	}
	b, _ := json.Marshal(map[string]any{"truncated": true, "bytes": len(raw), "see": "the asking decision"})
	return b
}

// judgeMarked reports whether any rule that fired says `judge: eligible`.
func judgeMarked(rules []string, pol *policy.Policy) bool {
	for _, r := range rules {
		if j, _, ok := pol.AskOptions(r); ok && j {
			return true
		}
	}
	return false
}

func envOf(s *store.Session) mandate.Env {
	return mandate.Env{WorkDir: s.WorkingDir, HomeDir: s.HomeDir}
}

func granted(ap *store.Approval, v policy.Verdict) policy.Verdict {
	reason := fmt.Sprintf("approved by %s (approval %s, %s)", orUnknown(ap.AnsweredBy), ap.ID, scopeWords(ap.Scope))
	if ap.Note != "" {
		reason += ": " + ap.Note
	}
	return policy.Verdict{Effect: policy.Allow, Rules: append([]string{approval.RuleGranted}, v.Rules...), Reasons: []string{reason}}
}

func refused(ap *store.Approval, v policy.Verdict) policy.Verdict {
	reason := fmt.Sprintf("denied by %s (approval %s, %s)", orUnknown(ap.AnsweredBy), ap.ID, scopeWords(ap.Scope))
	if ap.Note != "" {
		reason += ": " + ap.Note
	}
	return policy.Verdict{Effect: policy.Deny, Rules: append([]string{approval.RuleDenied}, v.Rules...), Reasons: []string{reason}}
}

func scopeWords(scope string) string {
	if scope == store.ScopeSession {
		return "for calls like this one in this session"
	}
	return "for this exact call"
}

func orUnknown(s string) string {
	if s == "" {
		return "an unknown answerer"
	}
	return s
}

// AnswerRequest is a person's answer to an approval.
type AnswerRequest struct {
	approval.Answer
	// Via says how it came (api, cli, …); default api.
	Via string
	// Reported marks an answer a surface relays from a person's action
	// elsewhere (an MCP client's elicitation form): recorded as reported.
	Reported bool
}

// Answer approves or denies a pending approval. Only a person's credential
// (user, approver, admin) may; the first answer wins and any later one is
// a conflict. scope session also amends the session's mandate (a new
// version whose source is the approver, the note kept verbatim), in the
// same transaction as the answer.
func (e *Engine) Answer(ctx context.Context, p auth.Principal, id string, req AnswerRequest) (*store.Approval, error) {
	if !p.Can(auth.AnswerApprovals) {
		return nil, fmt.Errorf("%w: role %s may not answer approvals (only user, approver and admin tokens may; an agent's or hook's never can)", ErrForbidden, p.Role)
	}
	if e.appr.st == nil {
		return nil, errNoApprovals
	}
	if err := req.Check(); err != nil {
		return nil, invalid("%v", err)
	}
	if req.Via == "" {
		req.Via = approval.ViaAPI
	}
	ap, err := e.appr.st.GetApproval(ctx, id)
	if err != nil {
		return nil, err
	}
	now := e.now().UTC()
	if err := approval.Answerable(ap, now); err != nil {
		if errors.Is(err, approval.ErrExpired) && ap.State == store.ApprovalPending {
			e.expire(ctx, ap, now)
		}
		return nil, fmt.Errorf("%w: %w", ErrConflict, err)
	}
	sess, err := e.store.GetSession(ctx, ap.SessionID)
	if err != nil {
		return nil, fmt.Errorf("approval %s: %w", id, err)
	}
	if sess.Status == store.StatusCompleted || sess.Status == store.StatusTerminated {
		e.withdraw(ctx, ap, sess.Status, now)
		return nil, fmt.Errorf("%w: approval %s was withdrawn: its session is %s", ErrConflict, id, sess.Status)
	}
	origin := "observed"
	if req.Reported {
		origin = "reported"
	}
	next := approval.Resolve(ap, req.State(), req.Scope, p.String(), string(p.Role), req.Via, origin, req.Note, now)
	c := &store.Change{ApprovalChanges: []*store.ApprovalChange{{Approval: next, From: ap.State}}}
	if req.Decision == approval.Approve && req.Scope == store.ScopeSession {
		err = e.answerForSession(ctx, p, ap, next, c, now)
	} else {
		err = e.commit(ctx, c)
	}
	if err != nil {
		if errors.Is(err, store.ErrConflict) {
			// Someone else's answer (or the deadline) came first.
			if cur, gerr := e.appr.st.GetApproval(ctx, id); gerr == nil {
				if aerr := approval.Answerable(cur, now); aerr != nil {
					return nil, fmt.Errorf("%w: %w", ErrConflict, aerr)
				}
			}
		}
		return nil, fmt.Errorf("answer approval %s: %w", id, err)
	}
	e.answered(c)
	e.log.Info("approval answered", "approval", id, "session", ap.SessionID, "state", next.State, "scope", next.Scope, "by", p.String(), "via", req.Via)
	return c.ApprovalChanges[0].Approval, nil
}

var errNoApprovals = fmt.Errorf("%w: this store keeps no approvals", ErrInvalid)

// answerForSession commits a session-scoped approval with its mandate
// amendment, under the session's lock.
func (e *Engine) answerForSession(ctx context.Context, p auth.Principal, ap, next *store.Approval, c *store.Change, now time.Time) error {
	d, err := e.store.GetDecision(ctx, ap.DecisionID)
	if err != nil {
		return fmt.Errorf("the asking decision: %w", err)
	}
	l, err := e.acquire(ctx, ap.SessionID)
	if err != nil {
		return err
	}
	defer l.mu.Unlock()
	m, err := e.effective(ctx, l, 0)
	if err != nil {
		return err
	}
	act := d.Action
	if act == nil {
		return invalid("decision %s has no classified action to widen the mandate by", d.ID)
	}
	rep := m.CheckIn(act, envOf(&l.sess), now)
	prev := l.snap.Load().own
	amended := approval.Amendment(prev, act, rep, ap.ID, p.String(), next.Note, now)
	if l.sess.ParentID != "" {
		parent, err := e.live(ctx, l.sess.ParentID)
		if err != nil {
			return fmt.Errorf("parent session: %w", err)
		}
		pe, err := e.effective(ctx, parent, 0)
		if err != nil {
			return err
		}
		amended = narrow(pe, parent.sess.WorkingDir, amended, l.sess.WorkingDir)
		amended.Parent = l.sess.ParentID
	}
	amended.Version = prev.Version + 1
	next.MandateVersion = amended.Version
	sess := copySession(&l.sess)
	sess.MandateVersion, sess.UpdatedAt = amended.Version, now
	c.Session = sess
	c.Mandate = &store.MandateVersion{SessionID: l.sess.ID, Version: amended.Version, Mandate: amended, Source: "approver", CreatedBy: p.String(), CreatedAt: now}
	if err := e.settle(ctx, l, e.submitLocked(l, c), false); err != nil {
		return err
	}
	l.sess.MandateVersion, l.sess.UpdatedAt = amended.Version, now
	l.snap.Store(&snapshot{status: l.sess.Status, parentID: l.sess.ParentID, own: amended})
	e.log.Info("mandate amended by an approval", "session", l.sess.ID, "version", amended.Version, "approval", ap.ID, "by", p.String())
	return nil
}

// answered wakes waiters on, and publishes, the approvals a durable change
// answered.
func (e *Engine) answered(c *store.Change) {
	for _, ac := range c.ApprovalChanges {
		e.appr.hub.Wake(ac.Approval.ID)
		if ac.From == store.ApprovalPending {
			e.appr.publish(EventApprovalAnswered, ac.Approval.SessionID, ac.Approval)
		}
	}
}

// expire records a pending approval's deadline passing. A conflict means
// someone answered first, which is fine.
func (e *Engine) expire(ctx context.Context, ap *store.Approval, now time.Time) {
	next := approval.Resolve(ap, store.ApprovalExpired, "", "", "", approval.ViaDeadline, "observed", "", now)
	next.AnsweredAt = &next.Deadline
	e.closeApproval(ctx, ap, next)
}

func (e *Engine) withdraw(ctx context.Context, ap *store.Approval, status string, now time.Time) {
	next := approval.Resolve(ap, store.ApprovalWithdrawn, "", "", "", approval.ViaSession, "observed", "session "+status, now)
	e.closeApproval(ctx, ap, next)
}

func (e *Engine) closeApproval(ctx context.Context, ap, next *store.Approval) {
	c := &store.Change{ApprovalChanges: []*store.ApprovalChange{{Approval: next, From: ap.State}}}
	if err := e.commit(ctx, c); err != nil {
		if !errors.Is(err, store.ErrConflict) {
			e.log.Error("closing an approval failed", "approval", ap.ID, "state", next.State, "err", err)
		}
		return
	}
	e.answered(c)
	e.log.Info("approval closed", "approval", ap.ID, "session", ap.SessionID, "state", next.State)
}

// ExpireDue expires the pending approvals whose deadline is at or before
// at, and returns how many it expired.
func (e *Engine) ExpireDue(ctx context.Context, at time.Time) (int, error) {
	if e.appr.st == nil {
		return 0, nil
	}
	n := 0
	for {
		due, err := e.appr.st.DueApprovals(ctx, at, 200)
		if err != nil {
			return n, err
		}
		for _, ap := range due {
			e.expire(ctx, ap, at)
			n++
		}
		if len(due) < 200 || ctx.Err() != nil {
			return n, ctx.Err()
		}
	}
}

// withdrawEnded withdraws pending approvals of sessions that have ended
// (completed or terminated): nobody is left to run the call.
func (e *Engine) withdrawEnded(ctx context.Context) error {
	pending, err := e.appr.st.ListApprovals(ctx, store.ApprovalFilter{State: store.ApprovalPending, Limit: 1000})
	if err != nil {
		return err
	}
	status := map[string]string{}
	for _, ap := range pending {
		st, ok := status[ap.SessionID]
		if !ok {
			s, err := e.store.GetSession(ctx, ap.SessionID)
			if err != nil {
				return err
			}
			st = s.Status
			status[ap.SessionID] = st
		}
		if st == store.StatusCompleted || st == store.StatusTerminated {
			e.withdraw(ctx, ap, st, e.now().UTC())
		}
	}
	return nil
}

// RunApprovals expires approvals as their deadlines pass and withdraws
// those of ended sessions, until ctx ends. `mandate serve` runs it; a
// restart picks up where it left off, since the deadlines are stored.
//
// On a store shared by several servers it also follows the approvals the
// others change (store.ApprovalWatcher), waking this process's waiters.
func (e *Engine) RunApprovals(ctx context.Context) error {
	if e.appr.st == nil {
		<-ctx.Done()
		return nil
	}
	if w, ok := e.store.(store.ApprovalWatcher); ok {
		watching := make(chan struct{})
		defer func() { <-watching }()
		go func() {
			defer close(watching)
			if err := w.WatchApprovals(ctx, e.wakeApproval); err != nil && ctx.Err() == nil {
				e.log.Error("following other servers' approvals stopped", "err", err)
			}
		}()
	}
	const idle = time.Minute
	lastWithdraw := time.Time{}
	for {
		now := e.now().UTC()
		if _, err := e.ExpireDue(ctx, now); err != nil && ctx.Err() == nil {
			e.log.Error("expiring approvals failed", "err", err)
		}
		if now.Sub(lastWithdraw) >= idle {
			if err := e.withdrawEnded(ctx); err != nil && ctx.Err() == nil {
				e.log.Error("withdrawing approvals of ended sessions failed", "err", err)
			}
			lastWithdraw = now
		}
		sleep := idle
		if next, err := e.appr.st.NextDeadline(ctx); err == nil {
			sleep = min(sleep, max(next.Sub(e.now()), 10*time.Millisecond))
		}
		t := time.NewTimer(sleep)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-e.appr.kick:
		case <-t.C:
		}
		t.Stop()
	}
}

// RemotePublisher is implemented by an event bus that can carry what
// other servers committed to this server's streams without its webhooks
// sending it again (events.Bus).
type RemotePublisher interface {
	PublishRemote(typ, sessionID string, data any)
}

// wakeApproval wakes the waiters of an approval a server changed (an empty
// ID wakes every waiter: the feed was interrupted), and publishes on this
// server's event stream what another server did: a new approval, an
// answered one.
func (e *Engine) wakeApproval(n store.ApprovalNotice) {
	if n.ID == "" {
		e.appr.hub.WakeAll()
		return
	}
	e.appr.hub.Wake(n.ID)
	rp, ok := e.appr.opts.Events.(RemotePublisher)
	if n.Mine || n.Event == "" || !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ap, err := e.appr.st.GetApproval(ctx, n.ID)
	if err != nil {
		e.log.Warn("reading an approval another server changed failed; its event is not on this server's stream", "approval", n.ID, "err", err)
		return
	}
	rp.PublishRemote(n.Event, ap.SessionID, ap)
}

// ListApprovals lists approvals, newest first.
func (e *Engine) ListApprovals(ctx context.Context, p auth.Principal, f store.ApprovalFilter) ([]*store.Approval, error) {
	if !p.Can(auth.ReadApprovals) {
		return nil, forbidden(p, auth.ReadApprovals)
	}
	if e.appr.st == nil {
		return nil, errNoApprovals
	}
	switch f.State {
	case "", store.ApprovalPending, store.ApprovalApproved, store.ApprovalDenied, store.ApprovalExpired, store.ApprovalWithdrawn:
	default:
		return nil, invalid("state %q: want pending, approved, denied, expired or withdrawn", f.State)
	}
	list, err := e.appr.st.ListApprovals(ctx, f)
	if err != nil {
		return nil, err
	}
	now := e.now()
	for i, ap := range list {
		list[i] = current(ap, now)
	}
	return list, nil
}

// current shows a pending approval whose deadline passed as expired, as it
// is, whether or not the expiry loop has recorded it yet.
func current(ap *store.Approval, now time.Time) *store.Approval {
	if ap.State != store.ApprovalPending || now.Before(ap.Deadline) {
		return ap
	}
	cp := approval.Clone(ap)
	cp.State, cp.Via = store.ApprovalExpired, approval.ViaDeadline
	cp.AnsweredAt = &cp.Deadline
	return cp
}

// GetApproval returns one approval. With wait above 0 it long-polls: it
// returns once the approval has left pending, or when wait ends.
func (e *Engine) GetApproval(ctx context.Context, p auth.Principal, id string, wait time.Duration) (*store.Approval, error) {
	if !p.Can(auth.ReadApprovals) {
		return nil, forbidden(p, auth.ReadApprovals)
	}
	if e.appr.st == nil {
		return nil, errNoApprovals
	}
	return e.waitApproval(ctx, id, wait)
}

// waitApproval reads an approval, waiting up to wait for it to leave
// pending; a deadline that passes meanwhile is recorded as expiry.
func (e *Engine) waitApproval(ctx context.Context, id string, wait time.Duration) (*store.Approval, error) {
	end := time.Now().Add(wait)
	for {
		changed, stop := e.appr.hub.Watch(id)
		ap, err := e.appr.st.GetApproval(ctx, id)
		if err != nil {
			stop()
			return nil, err
		}
		now := e.now()
		if ap.Final() || wait <= 0 {
			stop()
			return current(ap, now), nil
		}
		if !now.Before(ap.Deadline) {
			stop()
			e.expire(ctx, ap, ap.Deadline)
			continue
		}
		left := time.Until(end)
		if left <= 0 {
			stop()
			return ap, nil
		}
		t := time.NewTimer(min(left, ap.Deadline.Sub(now)+time.Millisecond))
		select {
		case <-changed:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			stop()
			return nil, ctx.Err()
		}
		t.Stop()
		stop()
	}
}

// WaitForAnswer waits up to req.Wait for the answer to the approval an ask
// decision d names. Approved: the call is decided again, and allowed once
// (rule approval.granted) — the returned decision is that new one. Denied,
// expired or withdrawn: d is returned with effect deny and the rule
// approval.denied, approval.expired or approval.withdrawn (the ask's record
// stands; the approval's own record says how it ended). Still pending when
// the wait ends: d as it was, effect ask.
func (e *Engine) WaitForAnswer(ctx context.Context, p auth.Principal, req EvaluateRequest, d *Decision) (*Decision, error) {
	if e.appr.st == nil {
		return d, nil
	}
	ap, err := e.waitApproval(ctx, d.ApprovalID, req.Wait)
	if err != nil {
		if ctx.Err() != nil {
			return d, nil // the caller left; the ask stands
		}
		return nil, fmt.Errorf("wait for approval %s: %w", d.ApprovalID, err)
	}
	switch ap.State {
	case store.ApprovalPending:
		d.Approval = statusOf(ap)
		return d, nil
	case store.ApprovalApproved:
		again := req
		again.Wait, again.OnAsk = 0, nil
		return e.Evaluate(ctx, p, again)
	}
	out := *d
	out.Effect, out.Approval = policy.Deny, statusOf(ap)
	switch ap.State {
	case store.ApprovalDenied:
		v := refused(ap, policy.Verdict{Rules: d.Rules})
		out.Rules, out.Reasons = v.Rules, v.Reasons
	case store.ApprovalExpired:
		out.Rules = append([]string{RuleApprovalExpired}, d.Rules...)
		out.Reasons = []string{fmt.Sprintf("nobody answered approval %s by %s; expired is denied", ap.ID, ap.Deadline.Format(time.RFC3339))}
	default:
		out.Rules = append([]string{RuleApprovalWithdrawn}, d.Rules...)
		out.Reasons = []string{fmt.Sprintf("approval %s was withdrawn (%s)", ap.ID, ap.Note)}
	}
	return &out, nil
}

// Rules a waited-for ask ends with when nobody approved it.
const (
	RuleApprovalExpired   = "approval.expired"
	RuleApprovalWithdrawn = "approval.withdrawn"
)

// observedAsk settles a tool's result for a decision that asked. The call
// ran, so someone let it. When the ask was decided for Claude Code's
// PreToolUse (surface hook) and the result comes from the hook by call id,
// Claude Code showed the user its own prompt and ran the call only on a
// yes: the pending approval is recorded as approved through Claude Code
// (labelled reported, used by this decision), and the result is not a gap.
// An approval a person gave through Mandate is taken as used by it.
// Anything else — nobody approved, a person denied it, a result by decision
// id, an agent's own report — makes the result a gap. It returns the
// approval change to commit with the observation (nil for none) and the
// gap reason ("" for none).
func (e *Engine) observedAsk(ctx context.Context, p auth.Principal, d *store.Decision, byCallID bool) (*store.ApprovalChange, string) {
	if e.appr.st == nil || d.ApprovalID == "" {
		return nil, fmt.Sprintf("%s: decision %s asked for a person's answer, none is on record, and it ran", GapAsked, d.ID)
	}
	ap, err := e.appr.st.GetApproval(ctx, d.ApprovalID)
	if err != nil {
		e.log.Error("reading the approval of an observed ask failed; recording a gap", "decision", d.ID, "approval", d.ApprovalID, "err", err)
		return nil, fmt.Sprintf("%s: decision %s asked, and its approval %s could not be read", GapAsked, d.ID, d.ApprovalID)
	}
	now := e.now().UTC()
	switch {
	case ap.State == store.ApprovalApproved && (ap.UsedBy == "" || ap.UsedBy == d.ID):
		if ap.UsedBy == d.ID || ap.Scope == store.ScopeSession {
			return nil, ""
		}
		cp := approval.Clone(ap)
		cp.Rev++
		cp.UsedBy = d.ID
		return &store.ApprovalChange{Approval: cp, From: ap.State}, ""
	case ap.State == store.ApprovalPending && p.Role == auth.RoleHook && d.Surface == "hook" && byCallID:
		next := approval.Resolve(ap, store.ApprovalApproved, store.ScopeOnce, p.String(), string(p.Role), approval.ViaClaudeCode, "reported", "", now)
		next.UsedBy = d.ID
		return &store.ApprovalChange{Approval: next, From: ap.State}, ""
	}
	return nil, fmt.Sprintf("%s: decision %s asked for a person's answer; approval %s is %s, and it ran", GapAsked, d.ID, ap.ID, current(ap, now).State)
}

// observed publishes a durable observation: a gap, and an approval it
// settled.
func (e *Engine) observed(c *store.Change) {
	e.answered(c)
	if o := c.Observation; o != nil && o.Gap {
		e.appr.publish(EventGap, o.SessionID, o)
	}
}
