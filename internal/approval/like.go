package approval

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/mandate"
	"github.com/mandate-dev/mandate/internal/store"
)

// "Calls like this one" is deliberately narrow: the same tool, no kind the
// approved call did not have, and nothing it touches that the approved call
// did not touch — the same recipients, hosts, accounts, paths and programs
// (with their first subcommand), and no larger amount in any currency. A
// different e-mail body to the same recipient is like it; the same tool
// sending to someone else is not.

// Like describes a call for a session-scoped answer.
func Like(tool string, a *action.Action) *store.Likeness {
	l := &store.Likeness{Tool: tool, Kinds: kinds(a), Resources: resources(a)}
	return l
}

// Matches reports whether a call is like the one l describes.
func Matches(l *store.Likeness, tool string, a *action.Action) bool {
	if l == nil || l.Tool != tool {
		return false
	}
	for _, k := range kinds(a) {
		if !slices.Contains(l.Kinds, k) {
			return false
		}
	}
	for _, r := range resources(a) {
		if !covered(l.Resources, r) {
			return false
		}
	}
	return true
}

func kinds(a *action.Action) []string {
	var out []string
	add := func(k action.Kind) {
		if k != "" && !slices.Contains(out, string(k)) {
			out = append(out, string(k))
		}
	}
	add(a.Kind)
	for _, k := range a.Kinds {
		add(k)
	}
	slices.Sort(out)
	return out
}

func resources(a *action.Action) []string {
	var out []string
	add := func(s string) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, p := range a.Paths {
		add("path:" + p.Path)
	}
	for _, h := range a.Hosts {
		add("host:" + strings.ToLower(h))
	}
	for _, r := range a.Recipients {
		add("recipient:" + strings.ToLower(r.Address))
	}
	for _, acct := range a.Accounts {
		add("account:" + acct)
	}
	for _, c := range a.Commands {
		add("command:" + program(c))
	}
	most := map[string]float64{}
	for _, m := range a.Amounts {
		most[m.Currency] = max(most[m.Currency], m.Value)
	}
	for cur, v := range most {
		add("amount:" + cur + ":" + strconv.FormatFloat(v, 'f', -1, 64))
	}
	slices.Sort(out)
	return out
}

// program is a command's program and first non-flag argument ("git push").
func program(c action.Command) string {
	name := c.Name
	if name == "" && len(c.Argv) > 0 {
		name = c.Argv[0]
	}
	for _, arg := range c.Argv[min(1, len(c.Argv)):] {
		if !strings.HasPrefix(arg, "-") {
			return name + " " + arg
		}
	}
	return name
}

// covered reports whether r is among have; an amount is covered by the same
// currency's amount at least as large.
func covered(have []string, r string) bool {
	if slices.Contains(have, r) {
		return true
	}
	rest, ok := strings.CutPrefix(r, "amount:")
	if !ok {
		return false
	}
	cur, val, _ := strings.Cut(rest, ":")
	v, err := strconv.ParseFloat(val, 64)
	if err != nil {
		return false
	}
	for _, h := range have {
		hrest, ok := strings.CutPrefix(h, "amount:")
		if !ok {
			continue
		}
		hcur, hval, _ := strings.Cut(hrest, ":")
		hv, err := strconv.ParseFloat(hval, 64)
		if err == nil && hcur == cur && v <= hv {
			return true
		}
	}
	return false
}

// Amendment is the mandate version a session-scoped approval makes: prev
// with the approved call's kinds granted and the resources it touched
// outside the scope named, the approver's note kept verbatim as their
// words, and a note saying which approval made the version. It never lifts
// what the user ruled out or left to a person: a kind in Deny or Ask, or
// under an untargeted prohibition, is not granted (such calls keep being
// decided call by call; the approval's likeness still answers calls like
// the approved one). Version and Parent are left for the caller.
func Amendment(prev *mandate.Mandate, a *action.Action, rep mandate.Report, approvalID, by, note string, at time.Time) *mandate.Mandate {
	add := &mandate.Mandate{
		Notes: []string{fmt.Sprintf("approval %s: %s allowed calls like %s for the rest of the session", approvalID, by, describe(a))},
		Scope: mandate.Scope{
			Paths:      uniq(append(append([]string(nil), rep.PathsOutside...), rep.SensitivePathsOutside...)),
			Hosts:      uniq(rep.HostsOutside),
			Recipients: uniq(rep.RecipientsOutside),
			Accounts:   uniq(rep.AccountsOutside),
		},
	}
	if note != "" {
		add.Instructions = []mandate.Instruction{{Text: note, Source: "approver", At: at.UTC()}}
	}
	out := mandate.Amend(prev, add)
	for _, k := range a.Kinds {
		grant(out, k)
	}
	grant(out, a.Kind)
	return out
}

func grant(m *mandate.Mandate, k action.Kind) {
	if k == "" || k == action.Unknown || slices.Contains(m.Allow, k) || slices.Contains(m.Deny, k) || slices.Contains(m.Ask, k) {
		return
	}
	for _, p := range m.Prohibitions {
		if p.Kind == k && p.Target == "" {
			return
		}
	}
	m.Allow = append(m.Allow, k)
}

func uniq(s []string) []string {
	var out []string
	for _, v := range s {
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// describe names a call for notes: its kind and what it touches.
func describe(a *action.Action) string {
	parts := []string{string(a.Kind)}
	for _, r := range resources(a) {
		parts = append(parts, r)
		if len(parts) == 5 {
			parts = append(parts, "…")
			break
		}
	}
	return strings.Join(parts, " ")
}
