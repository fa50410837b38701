package mandate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mandate-dev/mandate/internal/action"
)

// Intersect narrows a child's mandate by its parent's, for delegation. The
// result is never wider than the parent in any dimension:
//
//   - Allow is the kinds both grant (the parent's, when the child states
//     none), less every denied or asked kind; Deny and Prohibitions are the
//     union, and so is Ask (less the denied kinds).
//   - Each scope dimension: a parent that named nothing leaves the child's
//     entries; a child that named nothing inherits the parent's; otherwise
//     only child entries provably inside a parent entry survive, and if none
//     do the dimension matches nothing (Scope.None) — never "named none",
//     which is wider. Names count towards recipients and accounts, since
//     Check matches them there.
//   - The smaller spend cap (the parent's when the currencies differ, with a
//     note), the smaller count per kind, the earlier expiry.
//   - Instructions are the child's own; the parent's words stay with the
//     parent. Version and Parent are left for the caller to set.
//
// Relative path globs are compared as written, so both mandates should be
// relative to the same working directory; when they are not, call
// ResolvePaths on each first. A nil parent narrows nothing; a nil child asks
// for nothing of its own and gets the parent's grant.
func Intersect(parent, child *Mandate) *Mandate {
	if parent == nil && child == nil {
		return &Mandate{}
	}
	if parent == nil {
		out := child.clone()
		out.Version, out.Parent = 0, ""
		return out
	}
	if child == nil {
		child = &Mandate{}
	}
	out := &Mandate{
		Instructions: slices.Clone(child.Instructions),
		Notes:        slices.Clone(child.Notes),
	}

	out.Deny = unionKinds(parent.Deny, child.Deny)
	// What either side leaves to a person stays with a person.
	for _, k := range unionKinds(parent.Ask, child.Ask) {
		if !slices.Contains(out.Deny, k) {
			out.Ask = append(out.Ask, k)
		}
	}
	allow := parent.Allow
	if len(child.Allow) > 0 {
		allow = nil
		for _, k := range child.Allow {
			if slices.Contains(parent.Allow, k) {
				allow = append(allow, k)
			}
		}
	}
	for _, k := range allow {
		if !slices.Contains(out.Deny, k) && !slices.Contains(out.Ask, k) && !slices.Contains(out.Allow, k) {
			out.Allow = append(out.Allow, k)
		}
	}
	if out.Allow == nil {
		out.Allow = []action.Kind{}
	}
	out.Conditions = intersectConditions(parent, child, out.Ask)
	for _, p := range slices.Concat(parent.Prohibitions, child.Prohibitions) {
		if !slices.Contains(out.Prohibitions, p) {
			out.Prohibitions = append(out.Prohibitions, p)
		}
	}

	out.Scope = intersectScope(&parent.Scope, &child.Scope)
	out.Limits, out.Notes = intersectLimits(parent.Limits, child.Limits, out.Notes)

	switch {
	case parent.ExpiresAt == nil && child.ExpiresAt != nil:
		out.ExpiresAt = new(*child.ExpiresAt)
	case parent.ExpiresAt != nil && (child.ExpiresAt == nil || parent.ExpiresAt.Before(*child.ExpiresAt)):
		out.ExpiresAt = new(*parent.ExpiresAt)
	case child.ExpiresAt != nil:
		out.ExpiresAt = new(*child.ExpiresAt)
	}
	return out
}

func unionKinds(a, b []action.Kind) []action.Kind {
	out := []action.Kind{}
	for _, k := range slices.Concat(a, b) {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

func intersectScope(p, c *Scope) Scope {
	out := Scope{PathsOnly: p.PathsOnly || c.PathsOnly}
	none := func(dim string) { out.None = append(out.None, dim) }
	pNone, cNone := p.matchesNothing, c.matchesNothing

	// dimension narrows one list. unconstrained says the parent places no
	// limit on what this dimension lets in; inside says a child entry is
	// provably within the parent's.
	dimension := func(dim string, pl, cl []string, unconstrained bool, inside func(string) bool) []string {
		switch {
		case pNone(dim) || cNone(dim):
			none(dim)
			return nil
		case unconstrained:
			return slices.Clone(cl)
		case len(cl) == 0:
			return slices.Clone(pl)
		}
		var kept []string
		for _, e := range cl {
			if inside(e) && !slices.Contains(kept, e) {
				kept = append(kept, e)
			}
		}
		if len(kept) == 0 {
			none(dim)
		}
		return kept
	}
	// A parent name admits a child entry that is itself a plain name:
	// both then match exactly the same recipients and accounts.
	inParentNames := func(e string) bool {
		if pNone(DimNames) || !isPlainName(e) {
			return false
		}
		return slices.ContainsFunc(p.Names, func(n string) bool {
			return strings.EqualFold(collapseSpace(n), collapseSpace(e))
		})
	}

	out.Paths = dimension(DimPaths, p.Paths, c.Paths, len(p.Paths) == 0, func(e string) bool {
		return slices.ContainsFunc(p.Paths, func(pe string) bool { return globSubsumes(cleanGlob(pe), cleanGlob(e)) })
	})
	out.Hosts = dimension(DimHosts, p.Hosts, c.Hosts, len(p.Hosts) == 0, func(e string) bool {
		return slices.ContainsFunc(p.Hosts, func(pe string) bool { return hostSubsumes(pe, e) })
	})
	namesFree := len(p.Names) == 0 && !pNone(DimNames)
	out.Recipients = dimension(DimRecipients, p.Recipients, c.Recipients, len(p.Recipients) == 0 && namesFree, func(e string) bool {
		return slices.ContainsFunc(p.Recipients, func(pe string) bool { return recipientSubsumes(pe, e) }) || inParentNames(e)
	})
	out.Accounts = dimension(DimAccounts, p.Accounts, c.Accounts, len(p.Accounts) == 0 && namesFree, func(e string) bool {
		return slices.ContainsFunc(p.Accounts, func(pe string) bool { return normAccount(pe) == normAccount(e) }) ||
			(!ibanShape(normAccount(e)) && inParentNames(e))
	})
	// Names widen both recipients and accounts, so the parent constrains
	// them whenever it constrains either.
	namesUnconstrained := namesFree && len(p.Recipients) == 0 && len(p.Accounts) == 0 &&
		!pNone(DimRecipients) && !pNone(DimAccounts)
	out.Names = dimension(DimNames, p.Names, c.Names, namesUnconstrained, func(e string) bool {
		return slices.ContainsFunc(p.Names, func(n string) bool { return strings.EqualFold(collapseSpace(n), collapseSpace(e)) })
	})
	return out
}

// isPlainName reports whether a recipient or account entry is a plain name
// (no address, channel, pattern or phone number), which Check matches the
// same way as a Names entry.
func isPlainName(e string) bool {
	return !strings.ContainsAny(e, "@#*") && !isPhone(e) && strings.TrimSpace(e) != ""
}

func cleanGlob(g string) string {
	if g == "" {
		return g
	}
	return resolvePath(g, "")
}

func intersectLimits(p, c Limits, notes []string) (Limits, []string) {
	var out Limits
	switch {
	case p.Spend == nil && c.Spend != nil:
		out.Spend = new(*c.Spend)
	case p.Spend != nil && c.Spend == nil:
		out.Spend = new(*p.Spend)
	case p.Spend != nil && c.Spend != nil:
		if p.Spend.Currency != c.Spend.Currency {
			out.Spend = new(*p.Spend)
			notes = append(notes, fmt.Sprintf("spend cap: the child asked for %s but the parent's cap is in another currency, so the parent's %s is kept", c.Spend, p.Spend))
		} else {
			out.Spend = new(Money{Amount: min(p.Spend.Amount, c.Spend.Amount), Currency: p.Spend.Currency})
		}
	}
	if len(p.Counts)+len(c.Counts) > 0 {
		out.Counts = make(map[action.Kind]int, len(p.Counts)+len(c.Counts))
		for k, n := range p.Counts {
			out.Counts[k] = n
		}
		for k, n := range c.Counts {
			if pn, ok := out.Counts[k]; !ok || n < pn {
				out.Counts[k] = n
			}
		}
	}
	return out, notes
}

// ResolvePaths returns a copy of the mandate whose relative path globs (in
// the scope and in prohibition targets) are made absolute against workDir,
// so that mandates from sessions with different working directories can be
// intersected. An empty workDir leaves them as they are.
func (m *Mandate) ResolvePaths(workDir string) *Mandate {
	out := m.clone()
	if workDir == "" {
		return out
	}
	for i, g := range out.Scope.Paths {
		out.Scope.Paths[i] = resolvePath(g, workDir)
	}
	for i, p := range out.Prohibitions {
		if strings.ContainsRune(p.Target, '/') && !strings.HasPrefix(p.Target, BranchTarget) {
			out.Prohibitions[i].Target = resolvePath(p.Target, workDir)
		}
	}
	return out
}

// intersectConditions keeps the item conditions of an asked kind only
// where each side lets a call that meets them through: it allows the kind
// outright, or asks it under conditions of its own (then a call must meet
// both sides' conditions). A side that asks the kind with no condition, or
// does not grant it at all, keeps every call of it asked.
func intersectConditions(parent, child *Mandate, asked []action.Kind) []ItemCondition {
	var out []ItemCondition
	inherits := len(child.Allow) == 0 && len(child.Ask) == 0
	lets := func(m *Mandate, k action.Kind) bool {
		if slices.Contains(m.Deny, k) {
			return false
		}
		if slices.Contains(m.Allow, k) {
			return true
		}
		return slices.Contains(m.Ask, k) && slices.ContainsFunc(m.Conditions, func(c ItemCondition) bool { return c.Kind == k })
	}
	for _, k := range asked {
		if !lets(parent, k) || (!inherits && !lets(child, k)) {
			continue
		}
		for _, c := range slices.Concat(parent.Conditions, child.Conditions) {
			if c.Kind == k && !slices.ContainsFunc(out, c.equal) {
				out = append(out, c)
			}
		}
	}
	return out
}

// clone deep-copies the mandate.
func (m *Mandate) clone() *Mandate {
	if m == nil {
		return &Mandate{}
	}
	out := *m
	out.Instructions = slices.Clone(m.Instructions)
	out.Allow = slices.Clone(m.Allow)
	out.Deny = slices.Clone(m.Deny)
	out.Ask = slices.Clone(m.Ask)
	out.Prohibitions = slices.Clone(m.Prohibitions)
	out.Conditions = slices.Clone(m.Conditions)
	for i := range out.Conditions {
		c := &out.Conditions[i]
		c.Names, c.NotNames = slices.Clone(c.Names), slices.Clone(c.NotNames)
		c.From, c.NotFrom = slices.Clone(c.From), slices.Clone(c.NotFrom)
		c.Labels, c.NotLabels = slices.Clone(c.Labels), slices.Clone(c.NotLabels)
	}
	out.Notes = slices.Clone(m.Notes)
	out.Scope = Scope{
		Paths:      slices.Clone(m.Scope.Paths),
		Hosts:      slices.Clone(m.Scope.Hosts),
		Recipients: slices.Clone(m.Scope.Recipients),
		Accounts:   slices.Clone(m.Scope.Accounts),
		Names:      slices.Clone(m.Scope.Names),
		None:       slices.Clone(m.Scope.None),
		PathsOnly:  m.Scope.PathsOnly,
	}
	if m.Limits.Spend != nil {
		out.Limits.Spend = new(*m.Limits.Spend)
	}
	if m.Limits.Counts != nil {
		out.Limits.Counts = make(map[action.Kind]int, len(m.Limits.Counts))
		for k, n := range m.Limits.Counts {
			out.Limits.Counts[k] = n
		}
	}
	if m.ExpiresAt != nil {
		out.ExpiresAt = new(*m.ExpiresAt)
	}
	return &out
}

// equal reports whether two conditions state the same.
func (c ItemCondition) equal(o ItemCondition) bool {
	return c.Kind == o.Kind && c.OlderThanDays == o.OlderThanDays && c.NewerThanDays == o.NewerThanDays &&
		c.LargerThanBytes == o.LargerThanBytes && c.SmallerThanBytes == o.SmallerThanBytes &&
		c.PreparesPayment == o.PreparesPayment && c.Text == o.Text &&
		slices.Equal(c.Names, o.Names) && slices.Equal(c.NotNames, o.NotNames) &&
		slices.Equal(c.From, o.From) && slices.Equal(c.NotFrom, o.NotFrom) &&
		slices.Equal(c.Labels, o.Labels) && slices.Equal(c.NotLabels, o.NotLabels)
}
