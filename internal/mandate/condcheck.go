// Checking item conditions on a call: "only delete files older than a
// year" holds on `find ~/Downloads -mtime +365 -delete` — the call itself
// selects only such items — and on nothing Mandate cannot see that of.

package mandate

import (
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/fold"
)

// Item is what the session's earlier outputs showed of an item a call
// names by its id (flow facts: a search listed the message with its
// sender). Senders are the item's sender, author or owner fields as
// listed; an item listed without them shows no sender.
type Item struct {
	ID      string
	Senders []string
	// Labels are the labels, folders or tags it was listed under.
	Labels []string
	// Name is the name it was listed with (a channel's "general"), and
	// Date the date its listing gave it (a message's date; zero when the
	// listing gave none).
	Name string
	Date time.Time
}

// ConditionsMet returns the texts of the item conditions the action is
// shown to meet, when they cover every kind of it in Ask (and its other
// kinds are allowed); otherwise nil. CheckIn reports the same as
// Report.ConditionsMet. A sender condition is never met here: the call
// alone does not show who sent its items (see ConditionsMetItems).
func (m *Mandate) ConditionsMet(a *action.Action) []string {
	if m == nil || a == nil {
		return nil
	}
	return m.conditionsMet(a, actionKinds(a), nil, time.Time{})
}

// ConditionsMetItems is ConditionsMet with what the session's earlier
// outputs showed of the items the call names by id: a sender condition
// ("but keep everything from my bank") holds when the call acts on as
// many items as it names listed ones, and every one was listed with a
// sender that meets it. A message's age is its listed date's at now, the
// decision's time.
func (m *Mandate) ConditionsMetItems(a *action.Action, items []Item, now time.Time) []string {
	if m == nil || a == nil {
		return nil
	}
	return m.conditionsMet(a, actionKinds(a), items, now)
}

// NeedsItems reports whether a condition of the mandate is on the items'
// senders, labels, channels or messages' dates, which the session's
// earlier outputs may show.
func (m *Mandate) NeedsItems() bool {
	return m != nil && slices.ContainsFunc(m.Conditions, func(c ItemCondition) bool { return c.listed() || c.channelled() || c.Messages })
}

// listed reports whether the condition states an attribute only a
// listing of the items shows: a sender or a label.
func (c ItemCondition) listed() bool {
	return len(c.From)+len(c.NotFrom)+len(c.Labels)+len(c.NotLabels) > 0
}

// MeetItems updates a report CheckIn made for the action with what the
// session's earlier outputs showed of its items: a call of an asked kind
// whose sender conditions the items meet is no longer asked. now is the
// decision's time, for the ages of listed messages.
func (m *Mandate) MeetItems(r *Report, a *action.Action, items []Item, now time.Time) {
	if r == nil || !r.KindAsk || r.KindDenied || len(items) == 0 || !m.NeedsItems() {
		return
	}
	if met := m.ConditionsMetItems(a, items, now); len(met) > 0 {
		r.KindAsk, r.ConditionsMet = false, met
	}
}

// conditionsMet returns the texts of the conditions the action is shown to
// meet, when every kind of it in Ask has a condition and the action meets
// them all, and every other kind is allowed; otherwise nil.
func (m *Mandate) conditionsMet(a *action.Action, kinds []action.Kind, items []Item, now time.Time) []string {
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
			if c.PreparesPayment && !prepares(a) || !c.PreparesPayment && !meets(a, c, items, now) {
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

// attributes counts the attributes of the items a condition states.
func (c ItemCondition) attributes() int {
	n := 0
	for _, set := range []bool{c.OlderThanDays > 0, c.NewerThanDays > 0, c.LargerThanBytes > 0, c.SmallerThanBytes > 0,
		len(c.Names) > 0, len(c.NotNames) > 0, len(c.From) > 0, len(c.NotFrom) > 0, len(c.Labels) > 0, len(c.NotLabels) > 0,
		len(c.Channels) > 0, len(c.NotChannels) > 0} {
		if set {
			n++
		}
	}
	return n
}

// fileAttributes reports whether the condition states an attribute only a
// file has (age, size): a name or a sender alone can be shown otherwise.
func (c ItemCondition) fileAttributes() bool {
	return c.OlderThanDays > 0 || c.NewerThanDays > 0 || c.LargerThanBytes > 0 || c.SmallerThanBytes > 0
}

// meets reports whether the action shows that every item it acts on
// meets the condition. Sender conditions are met by listed items only
// (meetsSenders); the others by the call's own commands or paths
// (meetsFiles). A condition on both is met by neither: no call shows a
// file's sender. A channel condition is met by a post's channels alone
// (meetsChannels); a condition on messages by listed items only, their
// age by their listed dates at now.
func meets(a *action.Action, c ItemCondition, items []Item, now time.Time) bool {
	if c.attributes() == 0 {
		return false
	}
	if c.channelled() {
		return c.attributes() == channelAttributes(c) && meetsChannels(a, c, items)
	}
	if c.Messages {
		if c.LargerThanBytes > 0 || c.SmallerThanBytes > 0 || len(c.Names)+len(c.NotNames) > 0 {
			return false // no listing shows a message's size or file name
		}
		return meetsListed(a, c, items, now)
	}
	listed := c.listed()
	files := c.fileAttributes() || len(c.Names)+len(c.NotNames) > 0
	switch {
	case listed && files:
		return false
	case listed:
		return meetsListed(a, c, items, now)
	}
	return meetsFiles(a, c)
}

// meetsFiles: every command of the action that changes anything is a
// find that tests the condition's attributes before it acts (-delete,
// -exec rm …), with no alternative or negation in its expression but a
// negated -iname of a not_names glob; or, for a condition on names alone,
// an rm or mv of literal paths (no glob, no recursion) whose file names
// meet it; or a tool call without a command line whose every path it
// changes has such a name. A call without commands shows nothing of its
// items' age or size.
func meetsFiles(a *action.Action, c ItemCondition) bool {
	namesOnly := !c.fileAttributes()
	if len(a.Commands) == 0 {
		if !namesOnly {
			return false
		}
		changed := 0
		for _, p := range a.Paths {
			if p.Access == action.Read {
				continue
			}
			if !nameMeets(p.Path, c) {
				return false
			}
			changed++
		}
		return changed > 0
	}
	acting := 0
	for _, cmd := range a.Commands {
		if cmd.ReadOnly {
			continue
		}
		if cmd.Name == "rm" && slices.Contains(cmd.Via, "find -exec") {
			continue // the find it stands in is checked itself
		}
		switch {
		case cmd.Name == "find" && findSelects(cmd.Argv, c):
		case namesOnly && (cmd.Name == "rm" || cmd.Name == "mv") && operandsMeet(cmd, c):
		default:
			return false
		}
		acting++
	}
	return acting > 0
}

// operandsMeet reports whether an rm or mv names its items literally —
// no glob, no recursive flag — and each (for mv, each source) has a name
// that meets the condition.
func operandsMeet(cmd action.Command, c ItemCondition) bool {
	var ops []string
	opts := true
	for _, arg := range cmd.Argv[1:] {
		if opts && arg == "--" {
			opts = false
			continue
		}
		if opts && strings.HasPrefix(arg, "-") && arg != "-" {
			if cmd.Name == "rm" && (strings.ContainsAny(strings.TrimPrefix(arg, "-"), "rR") && !strings.HasPrefix(arg, "--") || arg == "--recursive") {
				return false // a folder's contents have names of their own
			}
			if cmd.Name == "mv" && (arg == "-t" || strings.HasPrefix(arg, "--target-directory")) {
				return false // the sources are not where this reads them
			}
			continue
		}
		ops = append(ops, arg)
	}
	if cmd.Name == "mv" {
		if len(ops) < 2 {
			return false
		}
		ops = ops[:len(ops)-1] // the destination is where they go, not an item
	}
	if len(ops) == 0 {
		return false
	}
	for _, o := range ops {
		if strings.ContainsAny(o, "*?[]{}$`") || strings.HasSuffix(o, "/") || !nameMeets(o, c) {
			return false
		}
	}
	return true
}

// nameMeets reports whether a path's last segment meets the condition's
// names and not_names.
func nameMeets(p string, c ItemCondition) bool {
	base := path.Base(path.Clean(p))
	if base == "." || base == "/" || base == ".." {
		return false
	}
	if len(c.Names) > 0 && !slices.ContainsFunc(c.Names, func(g string) bool { ok, _ := path.Match(g, base); return ok }) {
		return false
	}
	low := strings.ToLower(base)
	return !slices.ContainsFunc(c.NotNames, func(g string) bool { ok, _ := path.Match(strings.ToLower(g), low); return ok })
}

// findSelects reports whether a find command line selects only items that
// meet the condition and acts on what it selects: every attribute the
// condition states is tested before the first action (find evaluates left
// to right), with no alternative, comma or parentheses, and no negation
// but "! -iname G" for a not_names glob G. A test of an attribute the
// condition does not state only narrows the items further.
func findSelects(argv []string, c ItemCondition) bool {
	older, newer := c.OlderThanDays == 0, c.NewerThanDays == 0
	larger, smaller := c.LargerThanBytes == 0, c.SmallerThanBytes == 0
	named := len(c.Names) == 0
	spared := map[string]bool{}
	all := func() bool {
		return older && newer && larger && smaller && named && len(spared) == len(c.NotNames)
	}
	acts := false
	for i := 1; i < len(argv); i++ {
		switch arg := argv[i]; arg {
		case "-o", "-or", ",", "(", ")", "\\(", "\\)":
			return false
		case "!", "-not":
			// "! -iname '*.pdf'" spares what not_names names; any other
			// negation could select items the condition excludes.
			if i+2 >= len(argv) || argv[i+1] != "-iname" {
				return false
			}
			g := argv[i+2]
			if !slices.ContainsFunc(c.NotNames, func(n string) bool { return strings.EqualFold(n, g) }) {
				return false
			}
			spared[strings.ToLower(g)] = true
			i += 2
		case "-delete":
			if !all() {
				return false // this deletes before every attribute is tested
			}
			acts = true
		case "-exec", "-execdir", "-ok", "-okdir":
			if !all() {
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
			unit := 1
			if arg == "-mmin" || arg == "-cmin" {
				unit = 1440
			}
			sign, n, ok := signed(argv[i])
			switch {
			case !ok:
				return false
			case sign > 0 && c.OlderThanDays > 0 && n >= c.OlderThanDays*unit:
				older = true // -mtime +N: more than N days
			case sign < 0 && c.NewerThanDays > 0 && n <= c.NewerThanDays*unit:
				newer = true // -mtime -N: less than N days
			}
		case "-size":
			if i+1 >= len(argv) {
				return false
			}
			i++
			sign, n, u, ok := findSize(argv[i])
			switch {
			case !ok:
				return false
			case sign > 0 && c.LargerThanBytes > 0 && int64(n)*u >= c.LargerThanBytes:
				larger = true // -size +N: more than N units
			case sign < 0 && c.SmallerThanBytes > 0 && int64(n-1)*u < c.SmallerThanBytes:
				smaller = true // -size -N: at most N-1 units, rounded up
			}
		case "-name":
			if i+1 >= len(argv) {
				return false
			}
			i++
			if slices.Contains(c.Names, argv[i]) {
				named = true
			}
		}
	}
	return all() && acts
}

// signed reads find's "+N", "-N" or "N"; sign is 0 for an exact N.
func signed(v string) (sign, n int, ok bool) {
	switch {
	case strings.HasPrefix(v, "+"):
		sign, v = 1, v[1:]
	case strings.HasPrefix(v, "-"):
		sign, v = -1, v[1:]
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, 0, false
	}
	return sign, n, true
}

// findSize reads find's -size argument ("+10M", "-1k", "+2048c"): its
// sign, count and unit in bytes (512-byte blocks without a suffix).
func findSize(v string) (sign, n int, unit int64, ok bool) {
	unit = 512
	if v != "" {
		switch v[len(v)-1] {
		case 'c':
			unit = 1
		case 'w':
			unit = 2
		case 'b':
			unit = 512
		case 'k':
			unit = 1 << 10
		case 'M':
			unit = 1 << 20
		case 'G':
			unit = 1 << 30
		}
		if v[len(v)-1] < '0' || v[len(v)-1] > '9' {
			v = v[:len(v)-1]
		}
	}
	sign, n, ok = signed(v)
	if !ok || n > 1<<30 {
		return 0, 0, 0, false
	}
	return sign, n, unit, true
}

// meetsListed: the action is a tool call (a command line shows no
// sender) that acts on as many items as the listed items it names, each
// listed with a sender that has one of From's words and none of
// NotFrom's, where the condition states a sender, and with labels that
// have one of Labels' words and none of NotLabels', where it states a
// label, and with a date that is old (new) enough at now, where it
// states a messages' age.
func meetsListed(a *action.Action, c ItemCondition, items []Item, now time.Time) bool {
	if len(a.Commands) > 0 || a.Items <= 0 {
		return false
	}
	senders, labels := len(c.From)+len(c.NotFrom) > 0, len(c.Labels)+len(c.NotLabels) > 0
	dated := c.Messages && (c.OlderThanDays > 0 || c.NewerThanDays > 0)
	seen := map[string]bool{}
	for _, it := range items {
		if seen[it.ID] {
			continue
		}
		if len(it.Senders) == 0 && len(it.Labels) == 0 && it.Date.IsZero() {
			continue // not a message (a label, a folder): it shows none
		}
		if dated && !dateMeets(it.Date, c, now) {
			return false
		}
		if senders && (len(it.Senders) == 0 || !senderMeets(it.Senders, c)) {
			return false
		}
		if labels && (len(it.Labels) == 0 || !wordsMeet(it.Labels, c.Labels, c.NotLabels)) {
			return false
		}
		seen[it.ID] = true
	}
	return len(seen) >= a.Items
}

// senderMeets reports whether an item's sender fields have a word of
// From (when it states any) and no word of NotFrom.
func senderMeets(senders []string, c ItemCondition) bool {
	return wordsMeet(senders, c.From, c.NotFrom)
}

// wordsMeet reports whether fields (a sender's, labels) have, as whole
// words in order, one of want (when it holds any) and none of avoid.
func wordsMeet(fields, want, avoid []string) bool {
	var words []string
	for _, s := range fields {
		words = append(words, senderWords(s)...)
	}
	has := func(list []string) bool {
		return slices.ContainsFunc(list, func(w string) bool {
			fw := senderWords(w)
			if len(fw) == 0 {
				return false
			}
			for i := 0; i+len(fw) <= len(words); i++ {
				if slices.Equal(words[i:i+len(fw)], fw) {
					return true
				}
			}
			return false
		})
	}
	return (len(want) == 0 || has(want)) && !has(avoid)
}

// senderWords splits a sender's display name and address into folded
// words: "ING Bank <info@ing-bank.example>" is ing, bank, info, ing, bank,
// example.
func senderWords(s string) []string {
	return strings.FieldsFunc(fold.String(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
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
