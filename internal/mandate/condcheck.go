// Checking item conditions on a call: "only delete files older than a
// year" holds on `find ~/Downloads -mtime +365 -delete` — the call itself
// selects only such items — and on nothing Mandate cannot see that of.

package mandate

import (
	"slices"
	"strconv"
	"strings"

	"github.com/mandate-dev/mandate/internal/action"
)

// ConditionsMet returns the texts of the item conditions the action is
// shown to meet, when they cover every kind of it in Ask (and its other
// kinds are allowed); otherwise nil. CheckIn reports the same as
// Report.ConditionsMet.
func (m *Mandate) ConditionsMet(a *action.Action) []string {
	if m == nil || a == nil {
		return nil
	}
	return m.conditionsMet(a, actionKinds(a))
}

// conditionsMet returns the texts of the conditions the action is shown to
// meet, when every kind of it in Ask has a condition and the action meets
// them all, and every other kind is allowed; otherwise nil.
func (m *Mandate) conditionsMet(a *action.Action, kinds []action.Kind) []string {
	var met []string
	for _, k := range kinds {
		if !slices.Contains(m.Ask, k) {
			if !slices.Contains(m.Allow, k) {
				return nil
			}
			continue
		}
		found := false
		for _, c := range m.Conditions {
			if c.Kind != k {
				continue
			}
			found = true
			if c.PreparesPayment && !prepares(a) || !c.PreparesPayment && !meetsAge(a, k, c.OlderThanDays) {
				return nil
			}
			if !slices.Contains(met, c.Text) {
				met = append(met, c.Text)
			}
		}
		if !found {
			return nil
		}
	}
	return met
}

// meetsAge reports whether every command of the action that changes
// anything is a find that selects only items older than days and acts on
// them itself (-delete, -exec rm …): `find DIR -mtime +N -delete` with N at
// least days, or -mmin +M with M at least days×1440. A find whose
// expression has an alternative or a negation (-o, !, -not, a comma,
// parentheses) could select other items: not shown. A call without
// commands (an MCP tool) shows nothing about its items' age.
func meetsAge(a *action.Action, k action.Kind, days int) bool {
	if days <= 0 || len(a.Commands) == 0 {
		return false
	}
	acting := 0
	for _, c := range a.Commands {
		if c.ReadOnly {
			continue
		}
		if c.Name == "rm" && slices.Contains(c.Via, "find -exec") {
			continue // the find it stands in is checked itself
		}
		if c.Name != "find" || !findSelectsOlder(c.Argv, days) {
			return false
		}
		acting++
	}
	return acting > 0
}

// findSelectsOlder reports whether a find command line selects only items
// older than days and acts on what it selects.
func findSelectsOlder(argv []string, days int) bool {
	old, acts := false, false
	for i := 1; i < len(argv); i++ {
		switch arg := argv[i]; arg {
		case "-o", "-or", "!", "-not", ",", "(", ")", "\\(", "\\)":
			return false
		case "-delete":
			if !old {
				return false // find acts left to right: this deletes before the age is tested
			}
			acts = true
		case "-exec", "-execdir", "-ok", "-okdir":
			if !old {
				return false
			}
			acts = true
			for i+1 < len(argv) && argv[i+1] != ";" && argv[i+1] != "+" {
				i++
			}
		case "-mtime", "-mmin", "-ctime", "-cmin":
			if i+1 >= len(argv) {
				return false
			}
			i++
			v, ok := strings.CutPrefix(argv[i], "+")
			n, err := strconv.Atoi(v)
			if !ok || err != nil {
				return false // "-mtime -30", "-mtime 30": not older only
			}
			need := days
			if arg == "-mmin" || arg == "-cmin" {
				need = days * 1440
			}
			if n >= need {
				old = true
			}
		}
	}
	return old && acts
}

// prepares reports whether the action can only be preparing a payment: a
// tool call (a command line may change anything) that writes, deletes or
// runs no file and is not destructive — a cart, a form, a quote, a payee.
func prepares(a *action.Action) bool {
	if len(a.Commands) > 0 || a.Destructive {
		return false
	}
	for _, p := range a.Paths {
		if p.Access != action.Read {
			return false
		}
	}
	return true
}
