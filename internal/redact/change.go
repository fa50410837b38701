package redact

import (
	"fmt"
	"reflect"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/baseline"
	"github.com/mandate-dev/mandate/internal/store"
)

// Redact implements the engine's Redactor: it replaces the parts of c that
// hold secrets with redacted copies. Every field of store.Change is named
// here (TestEveryChangeFieldIsRedacted fails for one that is not): the
// decision and the observation, on every call's path, field by field; the
// rarer parts through the walk, whose plan for their types is made once.
func (r *Redactor) Redact(c *store.Change) error {
	if s := c.Session; s != nil {
		if c.NewSession {
			if err := walkField(r, &c.Session, "session"); err != nil {
				return err
			}
		} else if st, changed := r.Text(s.Status); changed {
			// An update stores only the status, mandate version and
			// counters (see store.Change); of those only the status is
			// text.
			cp := *s
			cp.Status = st
			c.Session = &cp
		}
	}
	// c.NewSession is a flag and c.Evidence the records made from the
	// rest after redaction: neither holds text of the change's own.
	if s, changed := r.Text(c.Actor); changed {
		c.Actor = s
	}
	if d := c.Decision; d != nil {
		nd, err := r.decision(d)
		if err != nil {
			return inField("Decision", err)
		}
		c.Decision = nd
	}
	if o := c.Observation; o != nil {
		no, err := r.observation(o)
		if err != nil {
			return inField("Observation", err)
		}
		c.Observation = no
	}
	for _, err := range [...]error{
		walkField(r, &c.Mandate, "Mandate"),
		walkField(r, &c.ToolPins, "ToolPins"),
		walkField(r, &c.ToolChanges, "ToolChanges"),
		walkField(r, &c.Reported, "Reported"),
		walkField(r, &c.Guard, "Guard"),
		walkField(r, &c.Approvals, "Approvals"),
		walkField(r, &c.ApprovalChanges, "ApprovalChanges"),
		walkField(r, &c.JudgeExchanges, "JudgeExchanges"),
		walkField(r, &c.Behaviour, "Behaviour"),
		walkField(r, &c.Draws, "Draws"),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// walkField redacts *p through the walk, replacing it with a redacted copy
// when anything changed. A nil pointer or an empty slice is passed over
// at once.
func walkField[T any](r *Redactor, p *T, name string) error {
	fv := reflect.ValueOf(p).Elem()
	if (fv.Kind() == reflect.Pointer && fv.IsNil()) || (fv.Kind() == reflect.Slice && fv.Len() == 0) {
		return nil
	}
	v, changed, err := r.walk(fv, false)
	if err != nil {
		return inField(name, err)
	}
	if changed {
		fv.Set(v)
	}
	return nil
}

// decisionTextNames are the JSON names of the texts decisionTexts returns,
// in its order, then of the two lists of texts.
var decisionTextNames = [...]string{"decision_id", "session_id", "surface", "tool", "policy_hash", "effect", "call_id", "approval_id", "rules", "reasons"}

func decisionTexts(d *store.Decision) [8]*string {
	return [...]*string{&d.ID, &d.SessionID, &d.Surface, &d.Tool, &d.PolicyHash, &d.Effect, &d.CallID, &d.ApprovalID}
}

// decision returns d, or a redacted copy of it. Its numbers and time hold
// no text; the action, the judge's opinion, the signals and the provenance
// are structs of their own, read through the walk.
func (r *Redactor) decision(d *store.Decision) (*store.Decision, error) {
	var cp *store.Decision
	own := func() {
		if cp == nil {
			c := *d
			cp = &c
		}
	}
	for i, p := range decisionTexts(d) {
		if s, changed := r.str(*p, r.decisionKeys[i]); changed {
			own()
			*decisionTexts(cp)[i] = s
		}
	}
	if b, changed, err := r.JSON(d.Args); err != nil {
		return nil, inField("Args", err)
	} else if changed {
		own()
		cp.Args = b
	}
	if l, changed := r.texts(d.Rules, r.decisionKeys[8]); changed {
		own()
		cp.Rules = l
	}
	if l, changed := r.texts(d.Reasons, r.decisionKeys[9]); changed {
		own()
		cp.Reasons = l
	}
	// The walk is handed the fields themselves (pointers, or the slices
	// inside *d): handing it a local copy would move that to the heap.
	if d.Action != nil {
		nv, changed, err := r.walk(reflect.ValueOf(d.Action), false)
		if err != nil {
			return nil, inField("Action", err)
		}
		if changed {
			own()
			cp.Action = nv.Interface().(*action.Action)
		}
	}
	if d.Judge != nil {
		nv, changed, err := r.walk(reflect.ValueOf(d.Judge), false)
		if err != nil {
			return nil, inField("Judge", err)
		}
		if changed {
			own()
			cp.Judge = nv.Interface().(*store.JudgeOpinion)
		}
	}
	if len(d.Signals) > 0 {
		nv, changed, err := r.walk(reflect.ValueOf(&d.Signals).Elem(), false)
		if err != nil {
			return nil, inField("Signals", err)
		}
		if changed {
			own()
			cp.Signals = nv.Interface().([]baseline.Signal)
		}
	}
	if len(d.Provenance) > 0 {
		nv, changed, err := r.walk(reflect.ValueOf(&d.Provenance).Elem(), false)
		if err != nil {
			return nil, inField("Provenance", err)
		}
		if changed {
			own()
			cp.Provenance = nv.Interface().([]store.Provenance)
		}
	}
	if cp == nil {
		return d, nil
	}
	return cp, nil
}

// observationTextNames are the JSON names of the texts observationTexts
// returns, in its order.
var observationTextNames = [...]string{"observation_id", "decision_id", "session_id", "origin", "call_id", "gap_reason", "tool"}

func observationTexts(o *store.Observation) [len(observationTextNames)]*string {
	return [...]*string{&o.ID, &o.DecisionID, &o.SessionID, &o.Origin, &o.CallID, &o.GapReason, &o.Tool}
}

// observation returns o, or a redacted copy of it.
func (r *Redactor) observation(o *store.Observation) (*store.Observation, error) {
	var cp *store.Observation
	own := func() {
		if cp == nil {
			c := *o
			cp = &c
		}
	}
	for i, p := range observationTexts(o) {
		if s, changed := r.str(*p, r.observationKeys[i]); changed {
			own()
			*observationTexts(cp)[i] = s
		}
	}
	if b, changed, err := r.JSON(o.Output); err != nil {
		return nil, inField("Output", err)
	} else if changed {
		own()
		cp.Output = b
	}
	if b, changed, err := r.JSON(o.Args); err != nil {
		return nil, inField("Args", err)
	} else if changed {
		own()
		cp.Args = b
	}
	if cp == nil {
		return o, nil
	}
	return cp, nil
}

// texts redacts a list of texts, copying it on the first change.
func (r *Redactor) texts(l []string, sensitive bool) ([]string, bool) {
	var out []string
	for i, s := range l {
		if ns, changed := r.str(s, sensitive); changed {
			if out == nil {
				out = append([]string(nil), l...)
			}
			out[i] = ns
		}
	}
	return out, out != nil
}

// inField says in which field (by its Go name, as the walk names them) an
// error arose.
func inField(name string, err error) error {
	return fmt.Errorf("%s: %w", name, err)
}
