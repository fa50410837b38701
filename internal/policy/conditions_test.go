package policy

import (
	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/mandate"
)

// conditionCases are built-in cases on the user's conditions on items
// (mandate.conditions, scope.conditions_met; policies/builtin/conditions.yaml).
func conditionCases() []builtinCase {
	cond := []mandate.ItemCondition{{Kind: del, OlderThanDays: 365, Text: "older than a year"}}
	return []builtinCase{
		{name: "a call that meets the user's condition is allowed", in: in(del, []action.Kind{read}, with(func(i *Input) {
			i.Mandate.Ask, i.Mandate.Conditions = []action.Kind{del}, cond
			i.Scope.ConditionsMet = []string{"older than a year"}
		})), want: Allow, fired: []string{"builtin.condition-met"}, notFired: []string{"builtin.ask-first"}, reason: "the call meets the user's condition: older than a year"},
		{name: "a call that does not show the condition is asked", in: in(del, []action.Kind{read}, with(func(i *Input) {
			i.Mandate.Ask, i.Mandate.Conditions = []action.Kind{del}, cond
			i.Scope.KindAsk = true
		})), want: Ask, fired: []string{"builtin.ask-first"}, notFired: []string{"builtin.condition-met"}},
		{name: "a condition met outside the scope is still asked", in: in(del, []action.Kind{read}, with(func(i *Input) {
			i.Mandate.Ask, i.Mandate.Conditions = []action.Kind{del}, cond
			i.Scope.ConditionsMet = []string{"older than a year"}
			i.Scope.PathsOutside = []string{"/etc/old"}
		})), want: Ask, fired: []string{"builtin.condition-met"}},
	}
}
