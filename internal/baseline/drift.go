package baseline

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Drift verdicts.
const (
	VerdictDrift        = "drift"
	VerdictStable       = "stable"
	VerdictInsufficient = "insufficient"
)

// Drift compares a version of an agent with the version before it.
type Drift struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Sessions and Calls are the new version's.
	Sessions int `json:"sessions"`
	Calls    int `json:"calls"`
	// Divergence is the larger Jensen-Shannon divergence (base 2, 0-1) of
	// the kind and the tool distributions.
	Divergence float64 `json:"divergence"`
	// DivergenceNull is what two samples of one behaviour at these sizes
	// diverge by anyway: the mean divergence of the sessions of both
	// versions pooled and split at random (session by session, from the
	// kept session shapes); DivergencePValue the share of those splits
	// that diverged at least as much as the versions do. Both are given
	// only when the divergence reached the threshold (below it, no split
	// can make it count).
	DivergenceNull   float64         `json:"divergence_null,omitempty"`
	DivergencePValue float64         `json:"divergence_p,omitempty"`
	NewDestinations  []string        `json:"new_destinations"`
	NewTransitions   []string        `json:"new_transitions"`
	Rates            map[string]Rate `json:"rates"`
	Verdict          string          `json:"verdict"`
	// Reasons say what made the verdict.
	Reasons []string `json:"reasons"`
	// Reference lists the versions the new one was compared with when
	// the version before it was too short to stand alone and was pooled
	// with the ones before it (Config.Reference), newest first.
	Reference []string `json:"reference,omitempty"`
}

// Rate is a kind's mean count per session before and after.
type Rate struct {
	From    float64 `json:"from"`
	To      float64 `json:"to"`
	Changed bool    `json:"changed"`
}

// maxListed bounds the destinations and transitions a drift lists.
const maxListed = 50

// Compare compares version b of an agent with the version a before it.
//
// Once both have the configured minimum of sessions the verdict is drift
// or stable. Before that it is insufficient, unless an early test rejects
// (the old version must be well populated, drift.early_min_previous
// sessions): a new item the new version made a habit of so soon that
// Fisher's exact test rules out chance, a per-session rate, or a change of
// the kind/tool mix (a permutation test on the sessions). The early tests
// are a group-sequential design: a look is the new version's session count
// m (Compare is called as its sessions arrive, so each session of the new
// version is one look, whatever the number of calls in between), and look
// m spends only its increment of the early budget (EarlySpent), so
// testing again at every session cannot add up to more than the budget
// for a benign version. Stable always waits for the minimum.
func (c *Config) Compare(a, b *Profile) Drift {
	a.init()
	b.init()
	d := Drift{From: a.Version, To: b.Version, Sessions: b.Sessions, Calls: b.Calls, Rates: map[string]Rate{}}
	if len(a.Pooled) > 1 {
		d.Reference = a.Pooled
	}
	d.Divergence = round(max(JensenShannon(a.Kinds, b.Kinds), JensenShannon(a.Tools, b.Tools)))
	enough := a.Sessions >= c.Drift.MinSessions && b.Sessions >= c.Drift.MinSessions
	// Until both versions have drift.min_sessions the exact tests run at
	// the looks' levels (lookLevels) whatever the old version's size: a
	// share no test could reach against its n sessions carries to the next
	// look, so a short old version waits exactly as long as chance cannot
	// be ruled out, and no longer. Only a well-populated old version
	// (drift.early_min_previous) lets a new party count without a test.
	early := !enough
	populated := a.Sessions >= c.Drift.EarlyMinPrevious
	kindsInUse := c.rateKindsInUse(a, b)
	var look earlyLevels
	if early {
		look = c.lookLevels(b.Sessions, kindsInUse, a.Sessions)
	}
	// From drift.min_sessions on, each look spends its increment of the
	// full-size budget (FullSpent), not the whole level again.
	var full earlyLevels
	if enough {
		full = c.fullLook(b.Sessions, kindsInUse)
	}
	items := c.newItems(a, b)
	ps := attainable(a, b)
	if ps == nil {
		// Profiles from before sessions were counted per item: the new
		// items' own p-values, which are the least they could reach.
		for _, it := range items {
			ps = append(ps, it.p)
		}
	}
	level := taroneLevel(ps, full.items)
	// Early, the items are tested together (Tarone) at this look's share
	// of the budget, whatever their type: the spending bounds the error
	// of every item alike.
	itemLevel := taroneLevel(ps, look.items)
	var earlyWhy []string
	for _, it := range items {
		significant := it.p <= level
		switch {
		case early && look.items > 0 && it.p <= itemLevel:
			earlyWhy = append(earlyWhy, fmt.Sprintf("%s in %d of the new version's %d sessions and none of the old one's %d (p %.4f, at most %.4f counts at this look)",
				it.name, it.sessions, b.Sessions, a.Sessions, it.p, itemLevel))
		case early && populated && b.Sessions < c.Drift.MinSessions && it.always && !it.transition:
			// A new party (a recipient, an account) or a destination of a
			// consequential call counts at full size whatever its
			// p-value, and what made it new only grows: its calls and
			// sessions in the new version, none in the old. The verdict
			// at drift.min_sessions is already given, so saying it now
			// spends none of the early budget and raises no alarm the
			// full-size verdict would not. Transitions are not decided
			// this way: their habit is a share, which may fall.
			earlyWhy = append(earlyWhy, fmt.Sprintf("%s in %d of the new version's %d sessions and none of the old one's %d: a new party or consequential destination, which the verdict at %d sessions counts whatever its p",
				it.name, it.sessions, b.Sessions, a.Sessions, c.Drift.MinSessions))
		case !enough:
			continue
		case !it.always && !significant:
			continue // variety that chance explains at these sizes
		}
		if it.transition {
			d.NewTransitions = append(d.NewTransitions, it.name)
		} else {
			d.NewDestinations = append(d.NewDestinations, it.name)
		}
	}
	slices.Sort(d.NewDestinations)
	slices.Sort(d.NewTransitions)
	d.NewDestinations = d.NewDestinations[:min(maxListed, len(d.NewDestinations))]
	d.NewTransitions = d.NewTransitions[:min(maxListed, len(d.NewTransitions))]
	for _, k := range c.RateKinds {
		from, va, na := perSession(a, k)
		to, vb, nb := perSession(b, k)
		r := Rate{From: round(from), To: round(to)}
		se := math.Sqrt(va/float64(max(1, na)) + vb/float64(max(1, nb)))
		r.Changed = to >= from*c.Drift.RateFactor && to-from >= c.Drift.RateExcess && to-from >= c.Drift.RateZ*se
		if r.Changed && enough {
			// The normal approximation behind the standard error is poor
			// on ten sessions of small counts: the change must also hold
			// against the sessions regrouped at random, at this look's
			// share. A first pass with drift.permutations splits stops
			// the test when the change is plainly within chance.
			pv := c.ratePValue(a, b, k, to-from, c.Drift.Permutations)
			if pv <= c.Drift.Significance {
				pv = c.ratePValue(a, b, k, to-from, c.Drift.EarlyPermutations)
			}
			r.Changed = pv <= full.rate
		}
		if r.Changed && early {
			// Early, the permutation test is exact at any size; it is held
			// against this look's share for a rate, with enough splits to
			// resolve it.
			r.Changed = false
			if look.rate > 0 && nb >= c.Drift.EarlyMinSessions {
				pv := c.ratePValue(a, b, k, to-from, c.Drift.EarlyPermutations)
				r.Changed = pv <= look.rate
				if r.Changed {
					earlyWhy = append(earlyWhy, fmt.Sprintf("%s per session %.2f → %.2f in the new version's %d sessions against the old one's %d (permutation p %.4f, at most %.4f counts at this look)",
						k, r.From, r.To, nb, na, pv, look.rate))
				}
			}
		}
		d.Rates[k] = r
	}
	// The mix is tested on the new version's sessions that have run their
	// course: the newest may still be running, and a session's first
	// calls are not a sample of its mix (it reads before it runs, runs
	// before it sends), so an unfinished session is not exchangeable with
	// finished ones — the permutation test's premise — and testing it
	// after every call would repeat the look with a mix that drifts as it
	// fills. The newest counts once it is as long as the old version's
	// median session.
	done := b
	if n := len(b.Shapes); n > 0 && b.Shapes[n-1].Calls < medianCalls(a.Shapes) {
		cp := *b
		cp.Shapes = b.Shapes[:n-1]
		done = &cp
	}
	if early && populated && look.mix > 0 && len(done.Shapes) >= c.Drift.EarlyMinSessions {
		// The mix of kinds and tools: the divergence of the two versions'
		// calls, tested by regrouping their sessions at random. The
		// calls of one session are not independent (a session that
		// deletes deletes again), so the unit regrouped is the session,
		// never the call: the test is exact however the calls of a
		// session depend on each other.
		// A first pass with drift.permutations splits stops the test
		// when the mix is plainly within chance (its p-value already
		// above the whole level): it can only make drift rarer, and
		// spares the full set of splits at nearly every look.
		if obs := sessionDivergence(a.Shapes, done.Shapes); obs >= c.Drift.EarlyDivergence {
			null, pv := c.divergenceNullN(a, done, obs, c.Drift.Permutations)
			if obs-null >= c.Drift.EarlyDivergence && pv <= c.Drift.Significance {
				null, pv = c.divergenceNullN(a, done, obs, c.Drift.EarlyPermutations)
			}
			if obs-null >= c.Drift.EarlyDivergence && pv <= look.mix {
				d.DivergenceNull, d.DivergencePValue = round(null), round(pv)
				earlyWhy = append(earlyWhy, fmt.Sprintf("kind/tool divergence %.3f in the new version's %d sessions, %.3f above the %.3f two samples of one behaviour at these sizes show (permutation p %.4f, at most %.4f counts at this look)",
					obs, len(done.Shapes), obs-null, null, pv, look.mix))
			}
		}
	}
	if !enough {
		d.Verdict = VerdictInsufficient
		d.Reasons = []string{fmt.Sprintf("%d and %d sessions; a verdict needs %d of each", a.Sessions, b.Sessions, c.Drift.MinSessions)}
		switch {
		case len(earlyWhy) > 0:
			d.Verdict = VerdictDrift
			d.Reasons = append([]string{fmt.Sprintf("drift before %d sessions of each version:", c.Drift.MinSessions)}, earlyWhy...)
		case b.Sessions >= c.Drift.MinSessions && look != (earlyLevels{}):
			// The new version has its sample and the tests could reject
			// against the old version's few sessions at this look (its
			// levels are above their exact floors): none did.
			d.Verdict = VerdictStable
			d.Reasons = []string{fmt.Sprintf("no test rejects at this look against the old version's %d sessions (levels: new items %.4f, mix %.4f, rates %.4f)", a.Sessions, look.items, look.mix, look.rate)}
		case look == (earlyLevels{}) && b.Sessions > 1:
			d.Reasons = append(d.Reasons, fmt.Sprintf("no exact test can reach this look's level against the old version's %d sessions yet (least p %.4f)", a.Sessions, exactFloor(a.Sessions, b.Sessions)))
		}
		return d.sticky(b)
	}
	// At full size too the mix is tested on the sessions that have run
	// their course (above), at this look's share.
	if obs := sessionDivergence(a.Shapes, done.Shapes); obs >= c.Drift.Divergence {
		null, pv := c.divergenceNull(a, done, obs)
		if obs-null >= c.Drift.Divergence && pv <= c.Drift.Significance {
			null, pv = c.divergenceNullN(a, done, obs, c.Drift.EarlyPermutations)
		}
		d.DivergenceNull, d.DivergencePValue = round(null), round(pv)
		if obs-null >= c.Drift.Divergence && pv <= full.mix {
			d.Reasons = append(d.Reasons, fmt.Sprintf("kind/tool divergence %.3f, %.3f above the %.3f two samples of one behaviour at these sizes show (threshold %.3f; permutation p %.4f, at most %.4f counts at this look)",
				obs, obs-null, null, c.Drift.Divergence, pv, full.mix))
		}
	}
	if len(d.NewDestinations) > 0 {
		d.Reasons = append(d.Reasons, "new destinations: "+strings.Join(d.NewDestinations, ", "))
	}
	if len(d.NewTransitions) > 0 {
		d.Reasons = append(d.Reasons, "new transitions: "+strings.Join(d.NewTransitions, ", "))
	}
	for _, k := range c.RateKinds {
		if r := d.Rates[k]; r.Changed {
			d.Reasons = append(d.Reasons, fmt.Sprintf("%s per session %.2f → %.2f", k, r.From, r.To))
		}
	}
	d.Verdict = VerdictStable
	if len(d.Reasons) > 0 {
		d.Verdict = VerdictDrift
	} else {
		d.Reasons = []string{"same kinds, tools, destinations, transitions and rates"}
	}
	return d.sticky(b)
}

// toolUse counts, per tool, the kept sessions of p that called it (a
// learned call), as DestUse counts a destination's sessions. nil when no
// kept session recorded its tools.
func toolUse(p *Profile) map[string]DestUse {
	var out map[string]DestUse
	for _, s := range p.Shapes {
		for tool := range s.Tools {
			if out == nil {
				out = map[string]DestUse{}
			}
			u := out[tool]
			u.Sessions++
			out[tool] = u
		}
	}
	return out
}

// rateKindsInUse is the number of rate kinds either version's kept
// sessions used, allowed or tried (earlyLookKinds).
func (c *Config) rateKindsInUse(a, b *Profile) int {
	n := 0
	for _, k := range c.RateKinds {
		used := func(p *Profile) bool {
			return slices.ContainsFunc(p.Shapes, func(s Shape) bool { return s.Kinds[k]+s.Tried[k] > 0 })
		}
		if used(a) || used(b) {
			n++
		}
	}
	return n
}

// sticky keeps a drift verdict once given: a sequential test that
// rejected at one look has stopped there (that is what its error budget
// paid for), and a later look that sees too little, or the full-size
// test that weighs the early habit against more sessions, does not undo
// it. It stands until the version's baseline is reset (which forgets
// that it was reported).
func (d Drift) sticky(b *Profile) Drift {
	if d.Verdict == VerdictDrift || !b.DriftAlerted {
		return d
	}
	was := d.Verdict
	d.Verdict = VerdictDrift
	d.Reasons = append([]string{"drift was declared for this version at an earlier look and stands until its baseline is reset (this look alone: " + was + ")"}, d.Reasons...)
	return d
}

// attainable is, for every destination, domain and kind transition either
// version used, the least p-value the new-item test could give it: the
// p-value had all the sessions that used it been the new version's
// (newItemP of its sessions in both). Tarone's correction counts in the
// family every item that could have been significant, not only the ones
// that turned out new: an agent with a broad set of destinations, each
// used in a session or two, has many that could land in the new version's
// first sessions by chance, and the level must allow for all of them. nil
// when the profiles count no sessions per item.
func attainable(a, b *Profile) []float64 {
	if b.DestUse == nil && b.TransUse == nil {
		return nil
	}
	var out []float64
	// Items used in every session of the new version and none of the
	// old are used in the same sessions: one test, however many (a new
	// host, its domain, the transitions into and out of the call that
	// reaches it). Under the null, sessions are exchangeable and only
	// the distinct sets of sessions items are used in make the family;
	// other items may share a set too, but that cannot be told from
	// session counts, so they count apart (conservative).
	whole := false
	for _, m := range [][2]map[string]DestUse{{a.DestUse, b.DestUse}, {a.TransUse, b.TransUse}, {a.DomainUse, b.DomainUse}, {toolUse(a), toolUse(b)}} {
		for key, u := range m[1] {
			old := m[0][key].Sessions
			if old == 0 && u.Sessions == b.Sessions {
				if whole {
					continue
				}
				whole = true
			}
			out = append(out, newItemP(u.Sessions+old, b.Sessions, a.Sessions))
		}
		for key, u := range m[0] {
			if _, ok := m[1][key]; !ok {
				out = append(out, newItemP(u.Sessions, b.Sessions, a.Sessions))
			}
		}
	}
	return out
}

// newItem is a destination or kind transition the new version made a
// habit of and the old one never showed.
type newItem struct {
	name       string
	transition bool
	sessions   int
	p          float64 // newItemP of its sessions
	// weighty: a new reach or a consequential use (see Compare), which
	// may make an early verdict. always: a new recipient or account, or a
	// destination of a consequential call (money, data or access to a new
	// party, or destruction), which counts at full size whatever its
	// p-value; anything else — a new host or program, a path, a
	// subcommand — counts at full size only when chance cannot explain
	// it.
	weighty, always bool
}

func (c *Config) newItems(a, b *Profile) []newItem {
	var out []newItem
	// A destination of a family the old version used or tried (a pod, a
	// numbered host, an address in a subnet, a dated directory: family.go)
	// is another member of somewhere it went, not somewhere new.
	oldFamilies := map[string]bool{}
	for dest := range unionKeys(a.Destinations, a.Attempted) {
		if f := c.family(dest); f != "" {
			oldFamilies[f] = true
		}
	}
	// Destinations count whether the calls were allowed or refused: a
	// version that keeps trying somewhere new has changed either way.
	for dest := range unionKeys(b.Destinations, b.Attempted) {
		if f := c.family(dest); f != "" && oldFamilies[f] {
			continue
		}
		use, known := b.DestUse[dest]
		// A profile from before sessions were counted per destination
		// (no DestUse at all) is judged on calls alone.
		habit := b.DestUse == nil || use.Sessions >= c.Drift.MinNewDestinationSessions
		if b.Destinations[dest]+b.Attempted[dest] < c.Drift.MinNewDestinationCalls || !habit || a.Destinations[dest]+a.Attempted[dest] > 0 {
			continue
		}
		typ, _, _ := strings.Cut(dest, ":")
		if known && use.ReadOnly && c.readOnlyTypes[typ] {
			// A program, subcommand or path only read-only calls used
			// is a means, not a departure: it takes nothing out and
			// changes nothing, and the hosts it reached are items of
			// their own.
			continue
		}
		it := newItem{name: dest, sessions: use.Sessions, p: 1, always: c.strong[typ] || use.Consequential}
		it.weighty = it.always || c.reach[typ] && !c.familiar(a, dest)
		if known {
			it.p = newItemP(use.Sessions, b.Sessions, a.Sessions)
		} else if b.DestUse == nil {
			it.always = true // the old rule: judged on calls alone
		}
		out = append(out, it)
	}
	out = append(out, c.newDomains(a, b)...)
	// A tool the old version never called, called by the new one in more
	// than one session: the same work through a new tool (a browser where
	// it fetched, an exec tool where it ran kubectl) changes no kind and
	// may reach nowhere new, so only the mix would see it, and the mix
	// needs three sessions and a large shift. Tested by its sessions like
	// a destination; never counted whatever its p (a new tool set is
	// often benign).
	for tool, use := range toolUse(b) {
		if a.Tools[tool] > 0 || b.Tools[tool] < c.Drift.MinNewDestinationCalls || use.Sessions < c.Drift.MinNewDestinationSessions {
			continue
		}
		out = append(out, newItem{name: "tool:" + tool, sessions: use.Sessions, p: newItemP(use.Sessions, b.Sessions, a.Sessions)})
	}
	// Transitions count whether their calls were allowed or refused, as
	// destinations do (TriedNext).
	total := 0
	for _, n := range b.KindNext {
		total += n
	}
	for _, n := range b.TriedNext {
		total += n
	}
	for t := range unionKeys(b.KindNext, b.TriedNext) {
		n := b.KindNext[t] + b.TriedNext[t]
		src, dst, _ := strings.Cut(t, ">")
		// New, and a habit of the new version: a large enough share of
		// everything that followed src, unless the old version never
		// went on from src at all.
		habit := a.KindFrom[src]+a.TriedFrom[src] == 0 || float64(n) >= c.Drift.MinNewTransitionFromShare*float64(b.KindFrom[src]+b.TriedFrom[src])
		weighty := c.secret[src] || c.consequential[dst]
		// A weighty transition is tested by its sessions, as a
		// destination is (two calls in two sessions): the calls of one
		// session are not independent, and a third call adds nothing a
		// second session does not.
		minCalls := c.Drift.MinNewTransitionCalls
		if weighty {
			minCalls = min(minCalls, c.Drift.MinNewDestinationCalls)
		}
		// One read-only kind after another (a lookup, then a read) is
		// an order of work, not a departure.
		if n < minCalls || a.KindNext[t]+a.TriedNext[t] > 0 || !habit || float64(n) < c.Drift.MinNewTransitionShare*float64(total) || c.readOnly[src] && c.readOnly[dst] {
			continue
		}
		it := newItem{name: t, transition: true, p: 1, weighty: weighty}
		it.always = it.weighty
		if use, ok := b.TransUse[t]; ok {
			it.sessions, it.p = use.Sessions, newItemP(use.Sessions, b.Sessions, a.Sessions)
			it.weighty = it.weighty && use.Sessions >= c.Drift.MinNewDestinationSessions
		} else if b.TransUse == nil {
			it.always = true // a profile from before sessions were counted per transition
		}
		out = append(out, it)
	}
	slices.SortFunc(out, func(x, y newItem) int { return strings.Compare(x.name, y.name) })
	return out
}

// newDomains are the registrable domains (of hosts and recipients) the
// new version made a habit of and the old one never used, when the new
// version went there under more than one host or recipient: one new
// destination is tested as itself, but a version that reaches a new
// organisation under a different host or address each session (a.x.example,
// b.x.example) makes none of them a habit, and the organisation is one.
func (c *Config) newDomains(a, b *Profile) []newItem {
	if len(b.DomainUse) == 0 {
		return nil
	}
	members := map[string]int{}
	calls := map[string]int{}
	for dest := range unionKeys(b.Destinations, b.Attempted) {
		if dom := c.domainKey(dest); dom != "" {
			members[dom]++
			calls[dom] += b.Destinations[dest] + b.Attempted[dest]
		}
	}
	var out []newItem
	for dom, use := range b.DomainUse {
		if members[dom] < 2 || use.Sessions < c.Drift.MinNewDestinationSessions || calls[dom] < c.Drift.MinNewDestinationCalls || a.Domains[dom] > 0 || a.DomainUse[dom].Sessions > 0 {
			continue
		}
		typ, v, _ := strings.Cut(dom, ":")
		name := typ + ":*." + v
		if typ == DestRecipient {
			name = typ + ":*@" + v
		}
		it := newItem{name: name, sessions: use.Sessions, p: newItemP(use.Sessions, b.Sessions, a.Sessions), always: c.strong[typ] || use.Consequential}
		it.weighty = it.always || c.reach[typ]
		out = append(out, it)
	}
	return out
}

func unionKeys(a, b map[string]int) map[string]bool {
	out := make(map[string]bool, len(a)+len(b))
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// perSession is the mean count of kind per kept session, allowed or not,
// its sample variance and the number of sessions.
func perSession(p *Profile, kind string) (mean, variance float64, n int) {
	n = len(p.Shapes)
	if p.Sessions == 0 || n == 0 {
		return 0, 0, 0
	}
	sum := 0.0
	for _, s := range p.Shapes {
		sum += float64(s.Kinds[kind] + s.Tried[kind])
	}
	mean = sum / float64(n)
	if n > 1 {
		for _, s := range p.Shapes {
			x := float64(s.Kinds[kind]+s.Tried[kind]) - mean
			variance += x * x
		}
		variance /= float64(n - 1)
	}
	return mean, variance, n
}

// sessions is the kept sessions of two versions as sparse count vectors
// over their kinds and tools (indices in key order, so sums and the
// floating-point order are the same on every run), for the observed
// divergence and its permutation null alike.
type sessions struct {
	kinds, tools [][][2]int // per session: (index, count)
	nk, nt       int
	buf          []int // scratch: both groups' kind and tool counts
}

func sessionVectors(a, b []Shape) *sessions {
	kindIx, toolIx := map[string]int{}, map[string]int{}
	all := append(append(make([]Shape, 0, len(a)+len(b)), a...), b...)
	for _, s := range all {
		for k := range s.Kinds {
			kindIx[k] = 0
		}
		for t := range s.Tools {
			toolIx[t] = 0
		}
	}
	order := func(m map[string]int) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			m[k] = i
		}
	}
	order(kindIx)
	order(toolIx)
	sv := &sessions{nk: len(kindIx), nt: len(toolIx)}
	vec := func(m map[string]int, ix map[string]int) [][2]int {
		v := make([][2]int, 0, len(m))
		for k, n := range m {
			v = append(v, [2]int{ix[k], n})
		}
		slices.SortFunc(v, func(x, y [2]int) int { return x[0] - y[0] })
		return v
	}
	for _, s := range all {
		sv.kinds = append(sv.kinds, vec(s.Kinds, kindIx))
		sv.tools = append(sv.tools, vec(s.Tools, toolIx))
	}
	return sv
}

// divergence is the larger Jensen-Shannon divergence of the kind and the
// tool distributions of two groups of the sessions: inFirst(i) says
// whether session i goes to the first.
func (sv *sessions) divergence(inFirst func(int) bool) float64 {
	if len(sv.buf) != 2*(sv.nk+sv.nt) {
		sv.buf = make([]int, 2*(sv.nk+sv.nt))
	}
	buf := sv.buf
	clear(buf)
	kp, kq := buf[:sv.nk], buf[sv.nk:2*sv.nk]
	tp, tq := buf[2*sv.nk:2*sv.nk+sv.nt], buf[2*sv.nk+sv.nt:]
	for i := range sv.kinds {
		k, t := kq, tq
		if inFirst(i) {
			k, t = kp, tp
		}
		for _, x := range sv.kinds[i] {
			k[x[0]] += x[1]
		}
		for _, x := range sv.tools[i] {
			t[x[0]] += x[1]
		}
	}
	return max(jsDense(kp, kq), jsDense(tp, tq))
}

// medianCalls is the median number of calls of the sessions (0 for none).
func medianCalls(ss []Shape) int {
	if len(ss) == 0 {
		return 0
	}
	n := make([]int, len(ss))
	for i := range ss {
		n[i] = ss[i].Calls
	}
	slices.Sort(n)
	return n[len(n)/2]
}

// sessionDivergence is the divergence of two versions' kept sessions.
func sessionDivergence(a, b []Shape) float64 {
	return sessionVectors(a, b).divergence(func(i int) bool { return i < len(a) })
}

// jsDense is JensenShannon over two count vectors of one key order.
func jsDense(p, q []int) float64 {
	tp, tq := 0, 0
	for i := range p {
		tp += p[i]
		tq += q[i]
	}
	if tp == 0 || tq == 0 {
		return 0
	}
	js := 0.0
	for i := range p {
		a, b := float64(p[i])/float64(tp), float64(q[i])/float64(tq)
		m := (a + b) / 2
		if a > 0 {
			js += a / 2 * math.Log2(a/m)
		}
		if b > 0 {
			js += b / 2 * math.Log2(b/m)
		}
	}
	return math.Max(0, math.Min(1, js))
}

// divergenceNull is the mean divergence of random regroupings of the two
// versions' kept sessions into groups of their sizes, and the share (with
// the observed grouping counted, so never 0) that diverge at least as much
// as obs. Deterministic: the permutations are seeded by the version ids.
func (c *Config) divergenceNull(a, b *Profile, obs float64) (mean, p float64) {
	return c.divergenceNullN(a, b, obs, c.Drift.Permutations)
}

// divergenceNullN is divergenceNull with the given number of splits.
func (c *Config) divergenceNullN(a, b *Profile, obs float64, permutations int) (mean, p float64) {
	na, n := len(a.Shapes), len(a.Shapes)+len(b.Shapes)
	if na == 0 || na == n {
		return 0, 1
	}
	sv := sessionVectors(a.Shapes, b.Shapes)
	perm := newPermuter(a.Version, b.Version, na, n)
	sum, atLeast := 0.0, 1
	for range permutations {
		perm.next()
		v := sv.divergence(perm.inFirst)
		sum += v
		if v >= obs-1e-12 {
			atLeast++
		}
	}
	return sum / float64(permutations), float64(atLeast) / float64(permutations+1)
}

// ratePValue is the share of random regroupings of the two versions' kept
// sessions (the observed one counted) whose difference of the mean
// per-session count of kind is at least diff: a permutation test, exact
// in its small-sample behaviour where the standard error is not.
func (c *Config) ratePValue(a, b *Profile, kind string, diff float64, permutations int) float64 {
	na, n := len(a.Shapes), len(a.Shapes)+len(b.Shapes)
	if na == 0 || na == n {
		return 1
	}
	counts := make([]float64, 0, n)
	for _, s := range append(a.Shapes[:na:na], b.Shapes...) {
		counts = append(counts, float64(s.Kinds[kind]+s.Tried[kind]))
	}
	perm := newPermuter(a.Version+"\x00rate", b.Version+"\x00"+kind, na, n)
	atLeast := 1
	for range permutations {
		perm.next()
		var sa, sb float64
		for i, x := range counts {
			if perm.first[i] {
				sa += x
			} else {
				sb += x
			}
		}
		if sb/float64(n-na)-sa/float64(na) >= diff-1e-9 {
			atLeast++
		}
	}
	return float64(atLeast) / float64(permutations+1)
}

// JensenShannon is the Jensen-Shannon divergence (base 2, 0-1) of two count
// distributions; 0 when either is empty.
func JensenShannon(p, q map[string]int) float64 {
	// Summed in key order: floating-point addition is not associative, and
	// map order would make the last digits (and a verdict on the
	// threshold) differ between runs.
	keys := make([]string, 0, len(p)+len(q))
	for k := range unionKeys(p, q) {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dp, dq := make([]int, len(keys)), make([]int, len(keys))
	for i, k := range keys {
		dp[i], dq[i] = p[k], q[k]
	}
	return jsDense(dp, dq)
}
