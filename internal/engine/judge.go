package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/approval"
	"github.com/mandate-dev/mandate/internal/mandate"
	"github.com/mandate-dev/mandate/internal/policy"
	"github.com/mandate-dev/mandate/internal/store"
)

// The judge is optional and bounded. It sees only asks that are eligible
// (a rule that fired says `judge: eligible`, or the configuration names the
// rule or says all), and only redacted content. In advisory mode its
// opinion is attached to the approval for the person who answers; in auto
// mode an allow or deny from it resolves the ask. It never sees a deny and
// so never turns one into anything else; an answer that does not parse, a
// timeout or an error leaves the ask to a person. Every exchange is recorded
// (store.JudgeExchange, evidence type judge) with the decision it was for.

// Judge modes.
const (
	JudgeAdvisory = "advisory"
	JudgeAuto     = "auto"
)

// Judge is a judge model (internal/judge implements it).
type Judge interface {
	// Mode is JudgeAdvisory or JudgeAuto.
	Mode() string
	// Eligible reports whether an ask may go to the judge, given the
	// rules that fired and whether one of them says judge: eligible.
	Eligible(rules []string, marked bool) bool
	// Judge asks the model about one call. It does not fail: a timeout,
	// an error or an unusable answer comes back as an opinion with Error
	// set and no Decision. The exchange is returned for the record.
	Judge(ctx context.Context, q *JudgeQuestion) (*store.JudgeOpinion, *store.JudgeExchange)
}

// JudgeQuestion is everything a judge is shown about one ask, all of it
// redacted: the user's words, the mandate, the call, why policy asked, the
// provenance facts and the session's last calls.
type JudgeQuestion struct {
	SessionID string           `json:"session_id"`
	Words     []string         `json:"user_words"`
	Mandate   *mandate.Mandate `json:"mandate"`
	Tool      string           `json:"tool"`
	Args      json.RawMessage  `json:"args"`
	Action    *action.Action   `json:"action"`
	Rules     []string         `json:"rules"`
	Reasons   []string         `json:"reasons"`
	// Provenance are the flow facts about the call's values, when the
	// engine has them.
	Provenance json.RawMessage `json:"provenance,omitempty"`
	Recent     []JudgeCall     `json:"recent_calls"`
}

// JudgeCall is one of the session's earlier calls, as a judge sees it.
type JudgeCall struct {
	Seq    int             `json:"seq"`
	Tool   string          `json:"tool"`
	Kind   string          `json:"kind"`
	Effect string          `json:"effect"`
	Args   json.RawMessage `json:"args"`
}

// JudgeRecentCalls is how many of the session's latest calls a judge sees
// by default.
const JudgeRecentCalls = 10

// judgeArgsLimit bounds the arguments of each earlier call shown.
const judgeArgsLimit = 2 << 10

// judgeQuestion assembles what the judge sees, with l.mu held.
func (e *Engine) judgeQuestion(ctx context.Context, l *live, req EvaluateRequest, red *store.Decision, res *Result) (*JudgeQuestion, error) {
	m, err := e.effective(ctx, l, 0)
	if err != nil {
		return nil, err
	}
	if e.redactor != nil {
		c := &store.Change{Mandate: &store.MandateVersion{Mandate: m}}
		if err := e.redactor.Redact(c); err != nil {
			return nil, fmt.Errorf("redact the mandate: %w", err)
		}
		m = c.Mandate.Mandate
	}
	q := &JudgeQuestion{
		SessionID: l.sess.ID, Mandate: m, Tool: req.Tool, Args: red.Args, Action: red.Action,
		Rules: res.Verdict.Rules, Reasons: res.Verdict.Reasons,
	}
	for _, in := range m.Instructions {
		q.Words = append(q.Words, in.Text)
	}
	n := e.appr.opts.RecentCalls
	recent, err := e.store.ListDecisions(ctx, store.DecisionFilter{SessionID: l.sess.ID, AfterSeq: max(0, l.sess.State.Calls-n), Limit: n})
	if err != nil {
		return nil, fmt.Errorf("recent calls: %w", err)
	}
	for _, d := range recent {
		jc := JudgeCall{Seq: d.Seq, Tool: d.Tool, Effect: d.Effect, Args: d.Args}
		if d.Action != nil {
			jc.Kind = string(d.Action.Kind)
		}
		if len(jc.Args) > judgeArgsLimit {
			jc.Args, _ = json.Marshal(map[string]any{"truncated": true, "bytes": len(d.Args)})
		}
		q.Recent = append(q.Recent, jc)
	}
	return q, nil
}

// judgeAsk puts a new ask to the judge, releasing l.mu while it thinks,
// then decides the call again on the session as it is by then and applies
// the opinion only if it is still the same kind of ask with a new
// approval. The returned entry is held.
func (e *Engine) judgeAsk(ctx context.Context, l *live, req EvaluateRequest, res Result, version int, pol *policy.Policy, red *store.Decision, hash string, now time.Time) (*live, Result, int, *policy.Policy, time.Time, error) {
	j := e.appr.opts.Judge
	q, err := e.judgeQuestion(ctx, l, req, red, &res)
	if err != nil {
		e.log.Error("could not put the ask to the judge; leaving it to a person", "session", req.SessionID, "err", err)
		return l, res, version, pol, now, nil
	}
	l.mu.Unlock()
	op, ex := j.Judge(ctx, q)
	op.Mode = j.Mode()
	ex.SessionID = req.SessionID
	if ex.CreatedAt.IsZero() {
		ex.CreatedAt = e.now().UTC()
	}
	if ex.ID == "" {
		ex.ID = newID()
	}
	l, err = e.acquire(ctx, req.SessionID)
	if err != nil {
		return nil, Result{}, 0, nil, time.Time{}, err
	}
	now = e.now().UTC()
	res, version, pol = e.decideLocked(ctx, l, req, now)
	if res.Verdict.Effect != policy.Ask {
		// The session changed while the judge thought; its opinion
		// changes nothing, and is recorded with the decision.
		res.ask = &askOutcome{judge: op, exchange: ex}
		return l, res, version, pol, now, nil
	}
	fresh, err := e.matchAsk(ctx, l, req, &res, hash, pol, now)
	if err != nil {
		e.log.Error("approval queue failed; denying", "session", req.SessionID, "tool", req.Tool, "err", err)
		res.Verdict, res.ask = DenyInternal(), &askOutcome{judge: op, exchange: ex}
		return l, res, version, pol, now, nil
	}
	o := res.ask
	o.judge, o.exchange = op, ex
	ex.ApprovalID = o.approvalID
	if !fresh || o.create == nil {
		return l, res, version, pol, now, nil // someone answered meanwhile
	}
	ap := o.create
	ap.Judge = op
	if op.Mode != JudgeAuto || op.Error != "" || (op.Decision != "allow" && op.Decision != "deny") {
		return l, res, version, pol, now, nil // left to a person, with the opinion
	}
	op.Applied = true
	by := "judge:" + op.Model
	if op.Decision == "allow" {
		*ap = *approval.Resolve(ap, store.ApprovalApproved, store.ScopeOnce, by, "judge", approval.ViaJudge, "observed", op.Reason, now)
		ap.Rev = 1 // created answered
		o.useCreate = true
		res.Verdict = policy.Verdict{Effect: policy.Allow, Rules: append([]string{approval.RuleJudgeAllowed}, res.Verdict.Rules...),
			Reasons: []string{fmt.Sprintf("the judge (%s) allowed it: %s", op.Model, op.Reason)}}
	} else {
		*ap = *approval.Resolve(ap, store.ApprovalDenied, store.ScopeOnce, by, "judge", approval.ViaJudge, "observed", op.Reason, now)
		ap.Rev = 1
		res.Verdict = policy.Verdict{Effect: policy.Deny, Rules: append([]string{approval.RuleJudgeDenied}, res.Verdict.Rules...),
			Reasons: []string{fmt.Sprintf("the judge (%s) denied it: %s", op.Model, op.Reason)}}
	}
	o.status = statusOf(ap)
	return l, res, version, pol, now, nil
}
