package policy

import (
	"time"

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
	Paths       []action.PathRef   `json:"paths"`
	URLs        []string           `json:"urls"`
	Hosts       []string           `json:"hosts"`
	Recipients  []action.Recipient `json:"recipients"`
	Accounts    []string           `json:"accounts"`
	Amounts     []action.Amount    `json:"amounts"`
	Commands    []action.Command   `json:"commands"`
	Effects     action.Effects     `json:"effects"`
	Sensitive   bool               `json:"sensitive"`
	Destructive bool               `json:"destructive"`
	Notes       []string           `json:"notes"`
}

// mandateView is mandate.Mandate as rules see it; see actionView.
type mandateView struct {
	Version      int                   `json:"version"`
	Instructions []mandate.Instruction `json:"instructions"`
	Allow        []string              `json:"allow"`
	Deny         []string              `json:"deny"`
	Prohibitions []mandate.Prohibition `json:"prohibitions"`
	Scope        mandate.Scope         `json:"scope"`
	Limits       limitsView            `json:"limits"`
	ExpiresAt    *time.Time            `json:"expires_at,omitempty"`
	Parent       string                `json:"parent,omitempty"`
	Notes        []string              `json:"notes,omitempty"`
}

// limitsView is mandate.Limits as rules see it; see actionView.
type limitsView struct {
	Spend  *mandate.Money `json:"spend,omitempty"`
	Counts map[string]int `json:"counts,omitempty"`
}

// viewAction fills an actionView from a normalised action (see normAction).
func viewAction(a *action.Action) *actionView {
	return &actionView{
		Tool:        a.Tool,
		Kind:        string(a.Kind),
		Kinds:       kindStrings(a.Kinds),
		Known:       a.Known,
		Source:      a.Source,
		Family:      a.Family,
		Paths:       a.Paths,
		URLs:        a.URLs,
		Hosts:       a.Hosts,
		Recipients:  a.Recipients,
		Accounts:    a.Accounts,
		Amounts:     a.Amounts,
		Commands:    a.Commands,
		Effects:     a.Effects,
		Sensitive:   a.Sensitive,
		Destructive: a.Destructive,
		Notes:       a.Notes,
	}
}

// viewMandate fills a mandateView; a nil mandate is an empty one, which
// grants nothing.
func viewMandate(m *mandate.Mandate) *mandateView {
	if m == nil {
		return &mandateView{}
	}
	v := &mandateView{
		Version:      m.Version,
		Instructions: m.Instructions,
		Allow:        kindStrings(m.Allow),
		Deny:         kindStrings(m.Deny),
		Prohibitions: m.Prohibitions,
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
	return v
}

func kindStrings(ks []action.Kind) []string {
	if ks == nil {
		return nil
	}
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return s
}
