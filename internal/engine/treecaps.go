package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/mandate"
	"github.com/mandate-dev/mandate/internal/policy"
	"github.com/mandate-dev/mandate/internal/store"
)

// Spend and count caps hold across a delegation tree (store/budget.go): a
// session's cap bounds what it and every session delegated from it spend
// or act on together. The policy's limit rules hold a call against the
// session's own counters; holdTreeCaps then holds it against the budget of
// each session on its chain (itself and its ancestors) as the store has
// it, and an allowed call carries its draws into its decision's change,
// where the store applies them in the same transaction, each only if its
// budget still stands where it was read. A draw that lost a race (another
// session of the tree, perhaps through another replica, drew first) fails
// the change with store.ErrBudget, and the call is decided again on the
// budget as it now stands: it is allowed on what is left, or denied with
// RuleTreeCap. No draw is ever made outside a decision's commit, so a
// decision retried never draws twice and a failed one leaves nothing.

// RuleTreeCap denies a call that would take a delegation tree past a cap.
const RuleTreeCap = "engine.tree-cap"

// maxChain bounds the ancestors a call's draws reach (as effective does).
const maxChain = 64

// plannedDraw is one budget a call draws on, as read before it commits.
type plannedDraw struct {
	session string
	dim     string
	from    float64
	amount  float64
	cap     *float64
}

// inflight counts this process's draws submitted and not yet settled, per
// budget. A call drawing on a budget waits for them first, so it reads
// the budget they leave and does not lose the commit race to its own
// process's earlier draws (a pipelined session paying twice).
type inflight struct {
	mu sync.Mutex
	n  map[string]int
	// zero is closed when a budget's count drops to 0.
	zero map[string]chan struct{}
}

func budgetKey(session, dim string) string { return session + "\x00" + dim }

func (f *inflight) add(keys []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == nil {
		f.n, f.zero = map[string]int{}, map[string]chan struct{}{}
	}
	for _, k := range keys {
		if f.n[k] == 0 {
			f.zero[k] = make(chan struct{})
		}
		f.n[k]++
	}
}

func (f *inflight) done(keys []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, k := range keys {
		if f.n[k]--; f.n[k] == 0 {
			close(f.zero[k])
			delete(f.n, k)
			delete(f.zero, k)
		}
	}
}

// wait returns once no draw of this process on key is in flight.
func (f *inflight) wait(ctx context.Context, key string) error {
	for {
		f.mu.Lock()
		z := f.zero[key]
		f.mu.Unlock()
		if z == nil {
			return nil
		}
		select {
		case <-z:
		case <-ctx.Done():
			return fmt.Errorf("waiting for the delegation tree's earlier draws to commit: %w", ctx.Err())
		}
	}
}

// callDims are the amounts a call would draw, per capped dimension of the
// mandates on its chain: money in a capped currency (the largest amount
// per currency, as count does), and the items of each capped kind.
func callDims(a *action.Action, chain []*mandate.Mandate) map[string]float64 {
	out := map[string]float64{}
	spend := map[string]bool{}
	counts := map[action.Kind]bool{}
	for _, m := range chain {
		if m == nil {
			continue
		}
		if s := m.Limits.Spend; s != nil {
			spend[s.Currency] = true
		}
		for k := range m.Limits.Counts {
			counts[k] = true
		}
	}
	if len(spend) > 0 && (a.Effects.Financial || a.Kind == action.Pay) {
		for _, m := range a.Amounts {
			if spend[m.Currency] && m.Value > 0 {
				d := store.SpendDim(m.Currency)
				out[d] = max(out[d], m.Value)
			}
		}
	}
	if len(counts) > 0 {
		kinds := a.Kinds
		if len(kinds) == 0 && a.Kind != "" {
			kinds = []action.Kind{a.Kind}
		}
		for _, k := range kinds {
			if counts[k] {
				out[store.CountDim(string(k))] = float64(max(a.Items, 1))
			}
		}
	}
	return out
}

// capOf is a mandate's own cap on a budget dimension, or nil.
func capOf(m *mandate.Mandate, dim string) *float64 {
	if m == nil {
		return nil
	}
	if cur, ok := strings.CutPrefix(dim, "spend:"); ok {
		if s := m.Limits.Spend; s != nil && s.Currency == cur {
			return new(s.Amount)
		}
		return nil
	}
	if k, ok := strings.CutPrefix(dim, "count:"); ok {
		if n, ok := m.Limits.Counts[action.Kind(k)]; ok {
			return new(float64(n))
		}
	}
	return nil
}

// chainLocked lists l's session and its ancestors, nearest first, with
// their own mandates. The caller holds l.mu.
func (e *Engine) chainLocked(ctx context.Context, l *live) ([]string, []*mandate.Mandate, error) {
	s := l.snap.Load()
	ids, ms := []string{l.sess.ID}, []*mandate.Mandate{s.own}
	for id := s.parentID; id != ""; {
		if len(ids) > maxChain || slices.Contains(ids, id) {
			return nil, nil, fmt.Errorf("session %s: its delegation chain is deeper than %d or loops at %s", l.sess.ID, maxChain, id)
		}
		p, err := e.live(ctx, id)
		if err != nil {
			return nil, nil, fmt.Errorf("parent session %s: %w", id, err)
		}
		ps := p.snap.Load()
		ids, ms = append(ids, id), append(ms, ps.own)
		id = ps.parentID
	}
	return ids, ms, nil
}

// chainCapped reports whether any mandate on l's chain caps spend or
// counts (or the chain cannot be walked: chainLocked then says why).
func (e *Engine) chainCapped(ctx context.Context, l *live) bool {
	s := l.snap.Load()
	for depth := 0; ; depth++ {
		if m := s.own; m != nil && (m.Limits.Spend != nil || len(m.Limits.Counts) > 0) {
			return true
		}
		if s.parentID == "" {
			return false
		}
		if depth > maxChain {
			return true
		}
		p, err := e.live(ctx, s.parentID)
		if err != nil {
			return true
		}
		s = p.snap.Load()
	}
}

// holdTreeCaps holds an allowed or asked call against the budgets of its
// chain. A call that would take one past its session's cap is denied
// (RuleTreeCap, naming the session whose tree's cap it is); an allowed one
// that fits keeps its planned draws for recordLocked. A budget that cannot
// be read denies the call: what Mandate did not check it does not allow.
// The caller holds l.mu.
func (e *Engine) holdTreeCaps(ctx context.Context, l *live, res *Result) {
	res.draws = nil
	if res.Verdict.Effect != policy.Allow && res.Verdict.Effect != policy.Ask {
		return
	}
	if !e.chainCapped(ctx, l) {
		return // the common case, at the cost of a walk up the snapshots
	}
	ids, ms, err := e.chainLocked(ctx, l)
	if err == nil {
		err = e.planDraws(ctx, l.sess.ID, ids, ms, res)
	}
	if err != nil {
		e.log.Error("delegation tree's budgets not read; denying", "session", l.sess.ID, "err", err)
		res.Verdict, res.draws = DenyInternal(), nil
		if errors.Is(err, store.ErrTampered) {
			// The reason is the budget row edited behind the log's back.
			res.Verdict.Reasons = append(res.Verdict.Reasons, err.Error())
		}
	}
}

func (e *Engine) planDraws(ctx context.Context, self string, ids []string, ms []*mandate.Mandate, res *Result) error {
	dims := callDims(&res.Action, ms)
	if len(dims) == 0 {
		return nil
	}
	names := make([]string, 0, len(dims))
	for d := range dims {
		names = append(names, d)
	}
	slices.Sort(names)
	var draws []plannedDraw
	for _, dim := range names {
		x := dims[dim]
		for i, id := range ids {
			if err := e.inflight.wait(ctx, budgetKey(id, dim)); err != nil {
				return err
			}
			b, err := e.store.GetBudget(ctx, id, dim)
			if err != nil {
				return fmt.Errorf("budget %s of session %s: %w", dim, id, err)
			}
			c := capOf(ms[i], dim)
			if c != nil && b.Used+x > *c {
				res.Verdict = policy.Verdict{Effect: policy.Deny, Rules: []string{RuleTreeCap}, Reasons: []string{treeCapReason(self, id, dim, x, b.Used, *c)}}
				res.draws = nil
				return nil
			}
			draws = append(draws, plannedDraw{session: id, dim: dim, from: b.Used, amount: x, cap: c})
		}
	}
	if res.Verdict.Effect == policy.Allow {
		res.draws = draws
	}
	return nil
}

// treeCapReason says which tree's cap a call would pass, and by how much.
func treeCapReason(self, owner, dim string, x, used, limit float64) string {
	whose := fmt.Sprintf("session %s's delegation tree (it and the sessions delegated from it)", owner)
	if owner != self {
		whose = fmt.Sprintf("the delegation tree of session %s, which session %s works under,", owner, self)
	}
	if cur, ok := strings.CutPrefix(dim, "spend:"); ok {
		return fmt.Sprintf("paying %s %s would take what %s has spent from %s to %s %s, past its cap of %s %s",
			num(x), cur, whose, num(used), num(used+x), cur, num(limit), cur)
	}
	kind := strings.TrimPrefix(dim, "count:")
	return fmt.Sprintf("acting on %s %s item(s) would take %s from %s to %s, past its cap of %s %s",
		num(x), kind, whose, num(used), num(used+x), num(limit), kind)
}

func num(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}

// drawsFor turns a decision's planned draws into the change's draws, and
// counts them in flight until ch settles; the returned channel reports
// ch's result after that.
func (e *Engine) drawsFor(c *store.Change, d *Decision, planned []plannedDraw, now time.Time) []string {
	if len(planned) == 0 {
		return nil
	}
	keys := make([]string, 0, len(planned))
	for _, p := range planned {
		c.Draws = append(c.Draws, &store.Draw{SessionID: p.session, Dim: p.dim, From: p.from, To: p.from + p.amount, Cap: p.cap,
			Drawer: d.SessionID, DecisionID: d.ID, CreatedAt: now})
		keys = append(keys, budgetKey(p.session, p.dim))
	}
	e.inflight.add(keys)
	return keys
}

// settleDraws releases a change's draws from the in-flight count once its
// commit has settled, passing the result on.
func (e *Engine) settleDraws(keys []string, ch <-chan error) <-chan error {
	if len(keys) == 0 {
		return ch
	}
	out := make(chan error, 1)
	go func() {
		err := <-ch
		e.inflight.done(keys)
		out <- err
	}()
	return out
}
