package policy

import (
	"time"

	"cel.dev/cel-go/common/types/ref"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/mandate"
)

// actionView is action.Action as rules see it: the same fields under the
// same JSON names, with kinds as plain strings. CEL reads []string and
// map[string]int through fast paths but named string types such as
// action.Kind through reflection, element by element, which made `"pay" in
// action.kinds` several times slower. The view is filled once per Evaluate.
//
// TestViewsMirrorCoreTypes keeps the views in step with the core types: a
// field added there and not here fails it.
type actionView struct {
	Tool        string             `json:"tool"`
	Kind        string             `json:"kind"`
	Kinds       []string           `json:"kinds"`
	Known       bool               `json:"known"`
	Source      string             `json:"source"`
	Family      string             `json:"family,omitempty"`
	Trust       string             `json:"trust,omitempty"`
	Paths       []action.PathRef   `json:"paths"`
	URLs        []string           `json:"urls"`
	Hosts       []string           `json:"hosts"`
	Recipients  []action.Recipient `json:"recipients"`
	Accounts    []string           `json:"accounts"`
	Amounts     []action.Amount    `json:"amounts"`
	Commands    []action.Command   `json:"commands"`
	Items       int                `json:"items"`
	Effects     action.Effects     `json:"effects"`
	Sensitive   bool               `json:"sensitive"`
	Destructive bool               `json:"destructive"`
	Notes       []string           `json:"notes"`
	Unexamined  []string           `json:"unexamined"`

	cache [16]ref.Val // the fields' CEL values, once read; see fieldcache.go
}

// mandateView is mandate.Mandate as rules see it; see actionView.
type mandateView struct {
	Version      int                   `json:"version"`
	Instructions []mandate.Instruction `json:"instructions"`
	Allow        []string              `json:"allow"`
	Deny         []string              `json:"deny"`
	Ask          []string              `json:"ask,omitempty"`
	Prohibitions []mandate.Prohibition `json:"prohibitions"`
	// Conditions are the user's conditions on the items of asked kinds.
	Conditions []mandate.ItemCondition `json:"conditions,omitempty"`
	Scope      mandate.Scope           `json:"scope"`
	Limits     limitsView              `json:"limits"`
	ExpiresAt  *time.Time              `json:"expires_at,omitempty"`
	Parent     string                  `json:"parent,omitempty"`
	Notes      []string                `json:"notes,omitempty"`

	cache [11]ref.Val // the fields' CEL values, once read; see fieldcache.go
}

// limitsView is mandate.Limits as rules see it; see actionView.
type limitsView struct {
	Spend  *mandate.Money `json:"spend,omitempty"`
	Counts map[string]int `json:"counts,omitempty"`
}

// viewAction returns the view of a normalised action (see normAction).
func viewAction(a *action.Action) *actionView {
	v := new(actionView)
	v.fill(a, new(kindBuf))
	return v
}

// viewMandate returns the view of a mandate; nil is an empty one.
func viewMandate(m *mandate.Mandate) *mandateView {
	v := new(mandateView)
	v.fill(m, new(kindBuf))
	return v
}

// fill sets v from a normalised action; buf backs the kind strings.
func (v *actionView) fill(a *action.Action, buf *kindBuf) {
	*v = actionView{
		Tool:        a.Tool,
		Kind:        string(a.Kind),
		Kinds:       buf.strings(a.Kinds),
		Known:       a.Known,
		Source:      a.Source,
		Family:      a.Family,
		Trust:       a.Trust,
		Paths:       a.Paths,
		URLs:        a.URLs,
		Hosts:       a.Hosts,
		Recipients:  a.Recipients,
		Accounts:    a.Accounts,
		Amounts:     a.Amounts,
		Commands:    a.Commands,
		Items:       a.Items,
		Effects:     a.Effects,
		Sensitive:   a.Sensitive,
		Destructive: a.Destructive,
		Notes:       a.Notes,
		Unexamined:  a.Unexamined,
	}
}

// fill sets v from a mandate; a nil mandate is an empty one, which grants
// nothing. buf backs the kind strings.
func (v *mandateView) fill(m *mandate.Mandate, buf *kindBuf) {
	if m == nil {
		*v = mandateView{}
		return
	}
	*v = mandateView{
		Version:      m.Version,
		Instructions: m.Instructions,
		Allow:        buf.strings(m.Allow),
		Deny:         buf.strings(m.Deny),
		Ask:          buf.strings(m.Ask),
		Prohibitions: m.Prohibitions,
		Conditions:   m.Conditions,
		Scope:        m.Scope,
		Limits:       limitsView{Spend: m.Limits.Spend},
		ExpiresAt:    m.ExpiresAt,
		Parent:       m.Parent,
		Notes:        m.Notes,
	}
	if len(m.Limits.Counts) > 0 {
		v.Limits.Counts = make(map[string]int, len(m.Limits.Counts))
		for k, n := range m.Limits.Counts {
			v.Limits.Counts[string(k)] = n
		}
	}
}

// kindBuf holds the kind strings of one decision's views, so that the
// usual handful of kinds costs no allocation of its own.
type kindBuf struct {
	s [24]string
	n int
}

// strings converts ks, in buf's space while it lasts.
func (b *kindBuf) strings(ks []action.Kind) []string {
	if ks == nil {
		return nil
	}
	var out []string
	if b.n+len(ks) <= len(b.s) {
		out = b.s[b.n : b.n+len(ks) : b.n+len(ks)]
		b.n += len(ks)
	} else {
		out = make([]string, len(ks))
	}
	for i, k := range ks {
		out[i] = string(k)
	}
	return out
}
