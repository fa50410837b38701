// Package approval holds the mechanisms of Mandate's approval queue: every
// ask becomes an approval bound to the exact call (tool + canonical args
// hash), with who may answer and a deadline, and moves through one state
// machine:
//
//	pending ──► approved   (a person, or a judge in auto mode; usable once,
//	   │                    or for calls like it in the session)
//	   ├──────► denied
//	   ├──────► expired    (its deadline passed: a surface waiting on it
//	   │                    treats it as denied)
//	   └──────► withdrawn  (its session ended before anyone answered)
//
// The rows live in the store (store.Approvals) and change only through
// store.Change, conditional on their revision, so that of two answers at once
// exactly one wins and a restart loses nothing. The engine composes these
// mechanisms into the decision path; this package has no state of its own
// beyond the in-process waiters of Hub.
package approval

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mandate-dev/mandate/internal/evidence"
	"github.com/mandate-dev/mandate/internal/store"
)

// Rules a decision names when an approval decided it.
const (
	// RuleGranted allows a call a person approved (the exact call, once,
	// or calls like it for the session).
	RuleGranted = "approval.granted"
	// RuleDenied denies a call a person denied (the exact call, or calls
	// like it for the session).
	RuleDenied = "approval.denied"
	// RuleJudgeAllowed and RuleJudgeDenied resolve an eligible ask by a
	// judge's answer in auto mode.
	RuleJudgeAllowed = "judge.allowed"
	RuleJudgeDenied  = "judge.denied"
)

// DefaultTimeout is a pending approval's deadline when neither the rule,
// the session nor the configuration says (approvals.timeout).
const DefaultTimeout = 10 * time.Minute

// MaxTimeout bounds any configured deadline: an approval is a question for
// a person now, not a standing permission.
const MaxTimeout = 7 * 24 * time.Hour

// MaxNote bounds an answer's note (bytes).
const MaxNote = 4096

// Decisions an answer may give.
const (
	Approve = "approve"
	Deny    = "deny"
)

// Vias: how an answer reached Mandate.
const (
	ViaAPI         = "api"
	ViaCLI         = "cli"
	ViaClaudeCode  = "claude-code"
	ViaElicitation = "mcp-elicitation"
	ViaJudge       = "judge"
	ViaDeadline    = "deadline"
	ViaSession     = "session-ended"
	ViaEval        = "eval"
)

// Errors an answer can meet; surfaces map ErrNotFound to 404 and the rest
// to 409.
var (
	ErrAnswered  = errors.New("approval already answered")
	ErrExpired   = errors.New("approval expired")
	ErrWithdrawn = errors.New("approval withdrawn")
)

// ArgsHash is the hex SHA-256 of the canonical JSON of a call's arguments
// (as stored: redacted, so a secret is hashed only inside its salted
// marker). Two calls are the same call when their tool and ArgsHash agree.
func ArgsHash(args []byte) (string, error) {
	if len(args) == 0 {
		args = []byte("{}")
	}
	canon, err := evidence.Canonical(args)
	if err != nil {
		return "", fmt.Errorf("canonical args: %w", err)
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}

// Answer is a person's answer to an approval, as the API takes it.
type Answer struct {
	Decision string
	Note     string
	Scope    string
}

// Check validates an answer and fills its defaults (scope once).
func (a *Answer) Check() error {
	switch a.Decision {
	case Approve, Deny:
	case "":
		return errors.New(`decision is required: "approve" or "deny"`)
	default:
		return fmt.Errorf(`decision %q: want "approve" or "deny"`, a.Decision)
	}
	switch a.Scope {
	case "":
		a.Scope = store.ScopeOnce
	case store.ScopeOnce, store.ScopeSession:
	default:
		return fmt.Errorf(`scope %q: want "once" (this exact call) or "session" (calls like it, for the rest of the session)`, a.Scope)
	}
	if len(a.Note) > MaxNote {
		return fmt.Errorf("note is %d bytes, over the %d-byte limit", len(a.Note), MaxNote)
	}
	if !utf8.ValidString(a.Note) {
		return errors.New("note is not valid UTF-8")
	}
	a.Note = strings.TrimSpace(a.Note)
	return nil
}

// State is the answer's target state.
func (a *Answer) State() string {
	if a.Decision == Approve {
		return store.ApprovalApproved
	}
	return store.ApprovalDenied
}

// Answerable says why an approval cannot take an answer at now: already
// answered, expired (its deadline passed, whether or not the sweeper has
// recorded it yet) or withdrawn. nil means it can.
func Answerable(a *store.Approval, now time.Time) error {
	switch a.State {
	case store.ApprovalPending:
		if !now.Before(a.Deadline) {
			return fmt.Errorf("%w: approval %s expired at %s; the call was not run (expired is denied)", ErrExpired, a.ID, a.Deadline.Format(time.RFC3339))
		}
		return nil
	case store.ApprovalExpired:
		return fmt.Errorf("%w: approval %s expired at %s; the call was not run (expired is denied)", ErrExpired, a.ID, a.Deadline.Format(time.RFC3339))
	case store.ApprovalWithdrawn:
		return fmt.Errorf("%w: approval %s was withdrawn (%s)", ErrWithdrawn, a.ID, orDefault(a.Note, "its session ended"))
	}
	return fmt.Errorf("%w: approval %s was %s by %s at %s", ErrAnswered, a.ID, a.State, orDefault(a.AnsweredBy, "someone"), stamp(a.AnsweredAt))
}

// Resolve returns the approval answered: a copy in its new state, with the
// revision advanced. The caller commits it as a store.ApprovalChange.
func Resolve(a *store.Approval, state, scope, by, role, via, origin, note string, at time.Time) *store.Approval {
	cp := Clone(a)
	cp.State, cp.Rev = state, a.Rev+1
	if scope != "" {
		cp.Scope = scope
	}
	t := at.UTC()
	cp.AnsweredAt, cp.AnsweredBy, cp.AnswererRole, cp.Via, cp.Origin, cp.Note = &t, by, role, via, origin, note
	return cp
}

// Clone copies an approval deeply enough to change its state, scope, answer
// and use without touching the original.
func Clone(a *store.Approval) *store.Approval {
	cp := *a
	cp.Rules = append([]string(nil), a.Rules...)
	cp.Reasons = append([]string(nil), a.Reasons...)
	cp.AnswerableBy = append([]string(nil), a.AnswerableBy...)
	if a.Judge != nil {
		j := *a.Judge
		cp.Judge = &j
	}
	if a.AnsweredAt != nil {
		t := *a.AnsweredAt
		cp.AnsweredAt = &t
	}
	return &cp
}

// Deadline is when an approval made at now expires: the shortest of the
// rules' own timeouts if any set one, else the session's, else the
// default.
func Deadline(now time.Time, ruleTimeouts []time.Duration, session, def time.Duration) time.Time {
	d := def
	if d <= 0 {
		d = DefaultTimeout
	}
	if session > 0 {
		d = session
	}
	var shortest time.Duration
	for _, t := range ruleTimeouts {
		if t > 0 && (shortest == 0 || t < shortest) {
			shortest = t
		}
	}
	if shortest > 0 {
		d = shortest
	}
	return now.Add(min(d, MaxTimeout)).UTC()
}

// ParseTimeout reads a configured deadline: a positive Go duration of at
// most MaxTimeout.
func ParseTimeout(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("timeout %q: %v (write e.g. 10m, 90s, 2h)", s, err)
	}
	if d <= 0 || d > MaxTimeout {
		return 0, fmt.Errorf("timeout %q: want more than 0 and at most %s", s, MaxTimeout)
	}
	return d, nil
}

// Roles returns the roles that may answer approvals: a person's
// credentials. An agent's or a hook's never can.
func Roles() []string { return []string{"user", "approver", "admin"} }

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func stamp(t *time.Time) string {
	if t == nil {
		return "an unknown time"
	}
	return t.UTC().Format(time.RFC3339)
}
