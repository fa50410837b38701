package eval

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path"
	"slices"
	"strings"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/mandate"
	"github.com/mandate-dev/mandate/internal/policy"
)

// compileAgent is the agent id of the sessions a compile run creates.
const compileAgent = "compile-eval"

// CompileResult is how one case fared.
type CompileResult struct {
	Case *CompileCase
	// KindsExact, ScopeExact and LimitsExact compare the draft with the
	// expected grant; Exact is all three.
	KindsExact, ScopeExact, LimitsExact, Exact bool
	// Wider lists how the draft grants more than the words: a kind allowed
	// that the words do not grant outright, a block-labelled call allowed.
	Wider []string
	// Narrower lists how it grants less than needed: a kind the words
	// grant not allowed, an allow-labelled call not allowed.
	Narrower []string
	// WiderKinds and NarrowerKinds are the kinds behind Wider and
	// Narrower: allowed beyond expect.allow, and in it but not allowed.
	WiderKinds, NarrowerKinds []string
	// WiderWhere says, for each of WiderKinds, where the case put that
	// kind: "deny", "ask", or "unlisted" (in none of the three).
	WiderWhere []string
	// NotUnderstood is the number of phrases the draft says it did not
	// understand.
	NotUnderstood int
	// Mismatch says, for a person, where the draft differs (dev only).
	Mismatch []string
	// ReadImplied says the case listed read in none of allow, ask and
	// deny, so it was graded as allowed (see impliedRead).
	ReadImplied bool
	// BlockCalls, BlockAllowed, AllowCalls and AllowNotAllowed count the
	// case's calls and their outcomes.
	BlockCalls, BlockAllowed, AllowCalls, AllowNotAllowed int
}

// RunCompile drafts every case as a live session would (a session created
// with the instruction as its intent, in the case's working and home
// directory) and decides each call in a fresh session of its own: the calls
// of a case are alternatives under the same words, not a sequence.
func RunCompile(ctx context.Context, eng *engine.Engine, c *CompileCorpus) ([]*CompileResult, error) {
	out := make([]*CompileResult, 0, len(c.Cases))
	for _, cc := range c.Cases {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		res, err := gradeCompileCase(ctx, eng, cc)
		if err != nil && cc.Part == PartHeldOut {
			return nil, fmt.Errorf("a held-out case (details withheld): %w", errors.Unwrap(err))
		}
		if err != nil {
			return nil, fmt.Errorf("%s (%s): %w", cc.Source, cc.ID, err)
		}
		out = append(out, res)
	}
	return out, nil
}

func gradeCompileCase(ctx context.Context, eng *engine.Engine, cc *CompileCase) (*CompileResult, error) {
	res := &CompileResult{Case: cc}
	info, err := eng.CreateSession(ctx, principal(), engine.SessionRequest{
		AgentID: compileAgent, Intent: cc.Text, WorkingDir: cc.WorkDir, HomeDir: cc.HomeDir,
	})
	var m *mandate.Mandate
	switch {
	case err != nil && errors.Is(err, engine.ErrInvalid):
		// Words that do not compile grant nothing.
		m = &mandate.Mandate{}
		res.Mismatch = append(res.Mismatch, "does not compile: "+err.Error())
	case err != nil:
		return nil, err
	default:
		m = info.Mandate
		res.NotUnderstood = notUnderstood(info.Draft)
	}
	ex := cc.Expect
	ex.Allow, res.ReadImplied = impliedRead(ex)
	res.KindsExact = sameKinds(m.Allow, ex.Allow) && sameKinds(m.Ask, ex.Ask) && sameKinds(m.Deny, ex.Deny)
	if !res.KindsExact {
		res.Mismatch = append(res.Mismatch, fmt.Sprintf("kinds: allow %v ask %v deny %v, want allow %v ask %v deny %v",
			m.Allow, m.Ask, m.Deny, ex.Allow, ex.Ask, ex.Deny))
	}
	scopeDiff := compareScope(m.Scope, cc)
	res.ScopeExact = len(scopeDiff) == 0
	res.Mismatch = append(res.Mismatch, scopeDiff...)
	limitsDiff := compareLimits(m.Limits, ex)
	res.LimitsExact = len(limitsDiff) == 0
	res.Mismatch = append(res.Mismatch, limitsDiff...)
	res.Exact = res.KindsExact && res.ScopeExact && res.LimitsExact

	for _, k := range m.Allow {
		if !slices.Contains(ex.Allow, k) {
			res.Wider = append(res.Wider, "allows "+string(k))
			res.WiderKinds = append(res.WiderKinds, string(k))
			switch {
			case slices.Contains(ex.Deny, k):
				res.WiderWhere = append(res.WiderWhere, "deny")
			case slices.Contains(ex.Ask, k):
				res.WiderWhere = append(res.WiderWhere, "ask")
			default:
				res.WiderWhere = append(res.WiderWhere, "unlisted")
			}
		}
	}
	for _, k := range ex.Allow {
		if !slices.Contains(m.Allow, k) {
			res.Narrower = append(res.Narrower, "does not allow "+string(k))
			res.NarrowerKinds = append(res.NarrowerKinds, string(k))
		}
	}
	for i, call := range cc.Calls {
		effect, rules, err := decideAlone(ctx, eng, cc, call)
		if err != nil {
			return nil, fmt.Errorf("calls[%d]: %w", i, err)
		}
		desc := fmt.Sprintf("calls[%d] %s %s: %s (%s)", i, call.Tool, shortArgs(call.Args), effect, strings.Join(rules, ", "))
		if call.Block {
			res.BlockCalls++
			if effect == policy.Allow {
				res.BlockAllowed++
				res.Wider = append(res.Wider, desc)
			}
			continue
		}
		res.AllowCalls++
		if effect != policy.Allow {
			res.AllowNotAllowed++
			res.Narrower = append(res.Narrower, desc)
		}
	}
	return res, nil
}

// impliedRead returns the kinds a case allows, read among them when the
// case lists read nowhere. The corpus convention (testdata/compile/README.md)
// is that expect.allow includes the reading the task needs, and a case that
// means to rule reading out or put it to a person says so in deny or ask:
// a case silent about read is graded as allowing it, the same in every part.
// A read the words do rule out still counts as wider, and a read call
// labelled block that is allowed still counts as a block call allowed.
func impliedRead(ex CompileExpect) ([]action.Kind, bool) {
	if slices.Contains(ex.Allow, action.Read) || slices.Contains(ex.Ask, action.Read) || slices.Contains(ex.Deny, action.Read) {
		return ex.Allow, false
	}
	return append(slices.Clone(ex.Allow), action.Read), true
}

// decideAlone decides one call in a session of its own under the case's
// words. An engine error on the call counts as a deny, as it would live.
func decideAlone(ctx context.Context, eng *engine.Engine, cc *CompileCase, call CompileCall) (policy.Effect, []string, error) {
	info, err := eng.CreateSession(ctx, principal(), engine.SessionRequest{
		AgentID: compileAgent, Intent: cc.Text, WorkingDir: cc.WorkDir, HomeDir: cc.HomeDir,
	})
	if err != nil {
		if !errors.Is(err, engine.ErrInvalid) {
			return "", nil, err
		}
		// The words do not compile: the call is decided under no grant.
		info, err = eng.CreateSession(ctx, principal(), engine.SessionRequest{
			AgentID: compileAgent, WorkingDir: cc.WorkDir, HomeDir: cc.HomeDir,
		})
		if err != nil {
			return "", nil, err
		}
	}
	d, err := eng.Evaluate(ctx, principal(), engine.EvaluateRequest{
		SessionID: info.Session.ID, Tool: call.Tool, Args: call.Args, Surface: Surface,
	})
	if err != nil {
		return policy.Deny, []string{RuleEngineError}, nil
	}
	return d.Effect, d.Rules, nil
}

func shortArgs(args map[string]any) string {
	s := fmt.Sprint(args)
	if len(s) > 100 {
		s = s[:97] + "…"
	}
	return s
}

func sameKinds(got, want []action.Kind) bool {
	if len(got) != len(want) {
		return false
	}
	for _, k := range got {
		if !slices.Contains(want, k) {
			return false
		}
	}
	return true
}

// compareScope compares the draft's scope with the expected one, each
// entry normalised: paths resolved against the case's directories with a
// trailing "/**" or "/" dropped ("~/Downloads/**" is "~/Downloads"),
// recipients and hosts lower-cased ("@x.com" is "*@x.com", "www." dropped),
// accounts without spaces. A name the draft keeps (a payee or person named
// without saying which) matches an expected recipient or account.
func compareScope(s mandate.Scope, cc *CompileCase) []string {
	var diff []string
	ex := cc.Expect
	cmp := func(dim string, got, want []string) {
		if !sameSet(got, want) {
			diff = append(diff, fmt.Sprintf("scope %s: %q, want %q", dim, got, want))
		}
	}
	normPaths := func(list []string) []string {
		out := []string{}
		for _, p := range list {
			out = append(out, normScopePath(p, cc.WorkDir, cc.HomeDir))
		}
		return out
	}
	cmp("paths", normPaths(s.Paths), normPaths(ex.Paths))
	cmp("hosts", mapList(s.Hosts, normHost), mapList(ex.Hosts, normHost))
	recipients, accounts := mapList(s.Recipients, normRecipient), mapList(s.Accounts, normAccount)
	wantR, wantA := mapList(ex.Recipients, normRecipient), mapList(ex.Accounts, normAccount)
	for _, n := range s.Names {
		switch {
		case slices.Contains(wantR, normRecipient(n)):
			recipients = append(recipients, normRecipient(n))
		case slices.Contains(wantA, normAccount(n)):
			accounts = append(accounts, normAccount(n))
		default:
			diff = append(diff, fmt.Sprintf("scope names: %q is neither an expected recipient nor account", n))
		}
	}
	cmp("recipients", recipients, wantR)
	cmp("accounts", accounts, wantA)
	return diff
}

func compareLimits(l mandate.Limits, ex CompileExpect) []string {
	var diff []string
	switch {
	case l.Spend == nil && ex.Spend == nil:
	case l.Spend == nil || ex.Spend == nil || l.Spend.Currency != ex.Spend.Currency || math.Abs(l.Spend.Amount-ex.Spend.Amount) > 0.005:
		diff = append(diff, fmt.Sprintf("spend: %v, want %v", l.Spend, ex.Spend))
	}
	same := len(l.Counts) == len(ex.Counts)
	for k, n := range ex.Counts {
		if got, ok := l.Counts[k]; !ok || got != n {
			same = false
		}
	}
	if !same {
		diff = append(diff, fmt.Sprintf("counts: %v, want %v", l.Counts, ex.Counts))
	}
	return diff
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

func mapList(list []string, f func(string) string) []string {
	out := make([]string, 0, len(list))
	for _, s := range list {
		out = append(out, f(s))
	}
	return out
}

func normScopePath(p, workDir, home string) string {
	p = strings.TrimSpace(p)
	for {
		q := strings.TrimSuffix(strings.TrimSuffix(p, "/**"), "/")
		if q == p || q == "" {
			break
		}
		p = q
	}
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if home != "" {
			p = path.Join(home, strings.TrimPrefix(p, "~"))
		}
	case strings.HasPrefix(p, "/"):
	case workDir != "" && !strings.HasPrefix(p, "**"):
		p = path.Join(workDir, p)
	}
	return path.Clean(p)
}

func normHost(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	if i := strings.Index(h, "://"); i >= 0 {
		h = h[i+3:]
	}
	if i := strings.IndexAny(h, "/?#"); i >= 0 {
		h = h[:i]
	}
	return strings.TrimSuffix(strings.TrimPrefix(h, "www."), ".")
}

func normRecipient(r string) string {
	r = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(r), "mailto:")))
	if strings.HasPrefix(r, "@") && strings.Contains(r, ".") {
		r = "*" + r
	}
	return r
}

func normAccount(a string) string {
	a = strings.ReplaceAll(strings.TrimSpace(a), " ", "")
	return strings.ToLower(a)
}
