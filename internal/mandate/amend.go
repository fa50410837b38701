package mandate

import (
	"slices"

	"github.com/mandate-dev/mandate/internal/action"
)

// Amend merges the user's further words (compiled into add) into the current
// mandate, for a conversation where each prompt adds to the task. The newer
// words win where they speak: a kind they grant is lifted from Deny and Ask
// (with the untargeted prohibitions of that kind — the user changed their
// mind), a kind they deny leaves Allow and Ask, a kind they leave to a person
// leaves Allow, and a limit or expiry they state replaces the old one. Scope grows by what they name. Instructions accumulate, so every
// version keeps all the user's words. Version and Parent stay for the caller.
//
// Only the user's own words may be amended in: callers must never pass text
// an agent wrote.
func Amend(prev, add *Mandate) *Mandate {
	out := prev.clone()
	if add == nil {
		return out
	}
	out.Instructions = append(out.Instructions, add.Instructions...)
	out.Notes = append(out.Notes, add.Notes...)
	for _, k := range add.Allow {
		if slices.Contains(add.Deny, k) {
			continue
		}
		out.Ask = slices.DeleteFunc(out.Ask, func(a action.Kind) bool { return a == k })
		if !slices.Contains(out.Allow, k) {
			out.Allow = append(out.Allow, k)
		}
		out.Deny = slices.DeleteFunc(out.Deny, func(d action.Kind) bool { return d == k })
		out.Prohibitions = slices.DeleteFunc(out.Prohibitions, func(p Prohibition) bool { return p.Kind == k && p.Target == "" })
	}
	for _, k := range add.Deny {
		if !slices.Contains(out.Deny, k) {
			out.Deny = append(out.Deny, k)
		}
		out.Allow = slices.DeleteFunc(out.Allow, func(a action.Kind) bool { return a == k })
		out.Ask = slices.DeleteFunc(out.Ask, func(a action.Kind) bool { return a == k })
	}
	for _, k := range add.Ask {
		if slices.Contains(out.Deny, k) || slices.Contains(add.Allow, k) {
			continue
		}
		if !slices.Contains(out.Ask, k) {
			out.Ask = append(out.Ask, k)
		}
		out.Allow = slices.DeleteFunc(out.Allow, func(a action.Kind) bool { return a == k })
	}
	// The new words' conditions replace the old ones of the kinds they
	// speak of; a condition holds only on a kind still asked.
	for _, k := range slices.Concat(add.Allow, add.Deny, add.Ask) {
		out.Conditions = slices.DeleteFunc(out.Conditions, func(c ItemCondition) bool { return c.Kind == k })
	}
	out.Conditions = append(out.Conditions, add.Conditions...)
	out.Conditions = slices.DeleteFunc(out.Conditions, func(c ItemCondition) bool { return !slices.Contains(out.Ask, c.Kind) })
	for _, p := range add.Prohibitions {
		if !slices.Contains(out.Prohibitions, p) {
			out.Prohibitions = append(out.Prohibitions, p)
		}
	}
	dims := []struct {
		name     string
		dst, src *[]string
	}{
		{"paths", &out.Scope.Paths, &add.Scope.Paths},
		{"hosts", &out.Scope.Hosts, &add.Scope.Hosts},
		{"recipients", &out.Scope.Recipients, &add.Scope.Recipients},
		{"accounts", &out.Scope.Accounts, &add.Scope.Accounts},
		{"names", &out.Scope.Names, &add.Scope.Names},
	}
	for _, d := range dims {
		for _, e := range *d.src {
			if !slices.Contains(*d.dst, e) {
				*d.dst = append(*d.dst, e)
			}
		}
		if len(*d.src) > 0 {
			// Named now, so no longer "matches nothing".
			out.Scope.None = slices.DeleteFunc(out.Scope.None, func(n string) bool { return n == d.name })
		}
	}
	if add.Limits.Spend != nil {
		out.Limits.Spend = new(*add.Limits.Spend)
	}
	for k, n := range add.Limits.Counts {
		if out.Limits.Counts == nil {
			out.Limits.Counts = map[action.Kind]int{}
		}
		out.Limits.Counts[k] = n
	}
	if add.ExpiresAt != nil {
		out.ExpiresAt = new(*add.ExpiresAt)
	}
	return out
}
