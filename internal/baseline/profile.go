package baseline

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"
)

// Lifecycle states of a baseline.
const (
	Learning   = "learning"
	Monitoring = "monitoring"
	Frozen     = "frozen"
)

// Profile is what one agent (Version "": all its versions) or one version
// of it has done. It is bounded by the configuration's caps; Dropped counts
// what the caps kept out.
type Profile struct {
	Agent   string `json:"agent"`
	Version string `json:"version"`
	// Frozen stops learning (an operator's choice).
	Frozen bool `json:"frozen,omitempty"`
	// Sessions are the sessions seen; Ordinary those of ordinary length.
	Sessions int `json:"sessions"`
	Ordinary int `json:"ordinary"`
	// Calls are the learned (allowed) calls; Decided all decided ones.
	Calls   int `json:"calls"`
	Decided int `json:"decided"`
	Denied  int `json:"denied"`
	Asked   int `json:"asked"`

	Tools map[string]int `json:"tools"`
	Kinds map[string]int `json:"kinds"`
	// Destinations counts calls per "type:value" destination.
	Destinations map[string]int `json:"destinations"`
	// Attempted counts the destinations of asked and denied calls: not
	// learned as usual, but a version that keeps trying them has changed.
	Attempted map[string]int `json:"attempted,omitempty"`
	// DestUse counts, in a version's profile, the sessions that used each
	// destination (allowed or tried): drift calls a destination new only
	// when it became a habit of the version, in more than one session — an
	// agent trying somewhere once is exploring, not changed. Bounded like
	// Destinations; an agent's profile (Version "") keeps none.
	DestUse map[string]DestUse `json:"dest_use,omitempty"`
	// TransUse counts, in a version's profile, the sessions that made each
	// kind transition "a>b" (as DestUse does for destinations): drift
	// tests a new transition by the sessions that show it, not its calls,
	// since the calls of one session are not independent.
	TransUse map[string]DestUse `json:"trans_use,omitempty"`
	// Domains counts learned calls per registrable domain of the hosts
	// and recipients ("host:example.org", "recipient:corp.example"): a
	// first-seen host or recipient inside a domain the agent already uses
	// is a smaller step than one somewhere it never went.
	Domains map[string]int `json:"domains,omitempty"`
	// Families counts, per destination family (Config.family: a pod, a
	// numbered host, an address's subnet, a date-stamped directory
	// generalised), the distinct members learned: a new member of a
	// family the agent rotates through is not somewhere new.
	Families map[string]int `json:"families,omitempty"`
	// TriedUse counts, in an agent's profile (Version ""), the sessions
	// that tried each destination (its family, when it has one) in an
	// asked or denied call, with the first of them: an agent whose ssh
	// to the fleet is asked in every session never learns it, but trying
	// it again is like itself. Bounded like Destinations.
	TriedUse map[string]DestUse `json:"tried_use,omitempty"`
	// DomainUse counts, in a version's profile, the sessions that used
	// each registrable domain (allowed or tried; keys as Domains): a
	// version that goes to a new organisation under a new host or
	// recipient every session makes no one destination a habit, but the
	// organisation is one.
	DomainUse map[string]DestUse `json:"domain_use,omitempty"`
	// ToolNext and KindNext count transitions "a>b" within sessions;
	// ToolFrom and KindFrom how often a was followed by anything.
	ToolNext map[string]int `json:"tool_next"`
	KindNext map[string]int `json:"kind_next"`
	ToolFrom map[string]int `json:"tool_from"`
	KindFrom map[string]int `json:"kind_from"`
	// TriedNext counts kind transitions into and out of asked and denied
	// calls ("a>b", as KindNext; TriedFrom as KindFrom): never learned as
	// usual, but a version that keeps trying a new order of work — a
	// secret read, refused, then a fetch — has changed, as one that keeps
	// trying a new destination has (Attempted).
	TriedNext map[string]int `json:"tried_next,omitempty"`
	TriedFrom map[string]int `json:"tried_from,omitempty"`
	Hours     [24]int        `json:"hours"`
	// Shapes are the newest sessions' shapes, oldest first.
	Shapes  []Shape `json:"shapes"`
	Dropped int     `json:"dropped,omitempty"`

	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`

	// Of a version's profile: its fingerprint, the version before it and
	// whether its drift from that one was already reported.
	Fingerprint  *Fingerprint `json:"fingerprint,omitempty"`
	Previous     string       `json:"previous,omitempty"`
	DriftAlerted bool         `json:"drift_alerted,omitempty"`
	// Of an agent's profile (Version ""): its versions, oldest first; the
	// sessions since the latest appeared; and the destinations first used
	// since then (bounded like Destinations), which stay unusual while the
	// new version is young.
	Versions       []string       `json:"versions,omitempty"`
	SinceVersion   int            `json:"since_version,omitempty"`
	NewSinceChange map[string]int `json:"new_since_change,omitempty"`
	// NewSinceFirst is, for each of NewSinceChange, the ordinal (Shape.N)
	// of the session that used it first: going back to it in another
	// session is a habit of the new version, using it twice in one
	// session is not.
	NewSinceFirst map[string]int `json:"new_since_first,omitempty"`
	// Pooled is, of a drift reference (Config.Reference), the versions
	// whose sessions it holds, newest first; never stored.
	Pooled []string `json:"-"`
}

// DestUse is how many sessions used a destination, and the ordinal
// (Shape.N) of the latest, so a session counts once.
type DestUse struct {
	Sessions int `json:"s"`
	Last     int `json:"l"`
	// First is the ordinal of the first session (kept by TriedUse only).
	First int `json:"f,omitempty"`
	// Consequential is true once a call of a consequential kind used it.
	Consequential bool `json:"c,omitempty"`
	// ReadOnly is true while every call that used it was read-only
	// (Config.ReadOnly). A profile from before it was kept says false:
	// judged as before.
	ReadOnly bool `json:"r,omitempty"`
}

// Fingerprint is what a version is made of.
type Fingerprint struct {
	Model            string `json:"model,omitempty"`
	SystemPromptHash string `json:"system_prompt_hash,omitempty"`
	ToolsetHash      string `json:"toolset_hash,omitempty"`
	RetrievalSource  string `json:"retrieval_source,omitempty"`
}

// ID is the fingerprint's version id.
func (f Fingerprint) ID() string {
	return Version(f.Model, f.SystemPromptHash, f.ToolsetHash, f.RetrievalSource)
}

// MaxVersions bounds the versions an agent's profile lists.
const MaxVersions = 1000

// AddVersion records a new version of the agent and returns the one before
// it ("" for the first). A version already listed returns "" and changes
// nothing.
func (p *Profile) AddVersion(v string) (previous string, added bool) {
	for _, have := range p.Versions {
		if have == v {
			return "", false
		}
	}
	if n := len(p.Versions); n > 0 {
		previous = p.Versions[n-1]
	}
	if len(p.Versions) >= MaxVersions {
		p.Versions = append(p.Versions[:0], p.Versions[1:]...)
	}
	p.Versions = append(p.Versions, v)
	if previous != "" {
		p.SinceVersion, p.NewSinceChange, p.NewSinceFirst = 0, map[string]int{}, map[string]int{}
	}
	return previous, true
}

// Shape is one session as a whole: its length and per-kind counts.
type Shape struct {
	Session string `json:"session"`
	// N is the session's ordinal in the profile (1 for its first).
	N       int            `json:"n,omitempty"`
	Calls   int            `json:"calls"`
	Learned int            `json:"learned"`
	Denied  int            `json:"denied"`
	Asked   int            `json:"asked"`
	Kinds   map[string]int `json:"kinds,omitempty"`
	// Tried counts the kinds of asked and denied calls.
	Tried map[string]int `json:"tried,omitempty"`
	// Tools counts the session's learned calls per tool (drift's
	// permutation null compares versions session by session).
	Tools map[string]int `json:"tools,omitempty"`
	// Novel counts, per destination type, the destinations the session
	// used first (new to the profile when learned).
	Novel map[string]int `json:"novel,omitempty"`
	// LastTool and LastKind are the session's latest learned call, the
	// start of its next transition.
	LastTool string `json:"last_tool,omitempty"`
	LastKind string `json:"last_kind,omitempty"`
	// LastTried is the kind of the session's latest refused call since
	// its latest learned one, the start of a tried transition.
	LastTried string `json:"last_tried,omitempty"`
}

// NewProfile returns an empty profile.
func NewProfile(agent, version string) *Profile {
	p := &Profile{Agent: agent, Version: version}
	p.init()
	return p
}

// init makes the maps of a profile decoded from storage usable.
func (p *Profile) init() {
	for _, m := range []*map[string]int{&p.Tools, &p.Kinds, &p.Destinations, &p.Attempted, &p.ToolNext, &p.KindNext, &p.ToolFrom, &p.KindFrom, &p.Domains, &p.TriedNext, &p.TriedFrom, &p.Families} {
		if *m == nil {
			*m = map[string]int{}
		}
	}
}

// State is the profile's lifecycle state under c.
func (p *Profile) State(c *Config) string {
	switch {
	case p.Frozen:
		return Frozen
	case p.Ordinary >= c.Lifecycle.MinSessions && p.Calls >= c.Lifecycle.MinCalls:
		return Monitoring
	}
	return Learning
}

// shape returns the session's shape, adding it (and counting the session)
// when it is new. The ring keeps the newest MaxShapes sessions.
func (p *Profile) shape(c *Config, session string) *Shape {
	for i := len(p.Shapes) - 1; i >= 0; i-- {
		if p.Shapes[i].Session == session {
			return &p.Shapes[i]
		}
	}
	p.Sessions++
	if len(p.Versions) > 1 {
		p.SinceVersion++
	}
	if len(p.Shapes) >= c.Learning.MaxShapes {
		p.Shapes = append(p.Shapes[:0], p.Shapes[len(p.Shapes)-c.Learning.MaxShapes+1:]...)
	}
	p.Shapes = append(p.Shapes, Shape{Session: session, N: p.Sessions})
	return &p.Shapes[len(p.Shapes)-1]
}

// Learn folds one decided call into the profile. Denied and asked calls
// count in their session's shape only: what was refused never becomes
// part of what the agent usually does. A frozen profile learns nothing.
func (p *Profile) Learn(c *Config, ev Event, at time.Time) {
	if p.Frozen {
		return
	}
	p.init()
	if p.FirstSeen.IsZero() {
		p.FirstSeen = at
	}
	p.LastSeen = at
	s := p.shape(c, ev.Session)
	cons := slices.ContainsFunc(ev.Kinds, func(k string) bool { return c.consequential[k] })
	ro := c.readOnlyCall(ev.Kinds)
	s.Calls++
	p.Decided++
	if s.Calls == c.Lifecycle.MinSessionCalls {
		p.Ordinary++
	}
	switch ev.Effect {
	case "deny", "ask":
		if ev.Effect == "deny" {
			s.Denied++
			p.Denied++
		} else {
			s.Asked++
			p.Asked++
		}
		for _, k := range ev.Kinds {
			if s.Tried == nil {
				s.Tried = map[string]int{}
			}
			s.Tried[k]++
		}
		if ev.Kind != "" {
			if from := cmp.Or(s.LastTried, s.LastKind); from != "" {
				p.tried(c, s, from+">"+ev.Kind)
			}
			s.LastTried = ev.Kind
		}
		for _, d := range ev.Destinations {
			bump(p.Attempted, d, c.Learning.MaxDestinations, &p.Dropped)
			p.triedUse(c, s, d)
			p.use(c, &p.DestUse, s, d, cons, ro)
			if dom := c.domainKey(d); dom != "" {
				p.use(c, &p.DomainUse, s, dom, cons, ro)
			}
		}
		return
	case "allow":
	default:
		return
	}
	s.Learned++
	p.Calls++
	bump(p.Tools, ev.Tool, c.Learning.MaxTools, &p.Dropped)
	if s.Tools == nil {
		s.Tools = map[string]int{}
	}
	if _, ok := s.Tools[ev.Tool]; ok || len(s.Tools) < c.Learning.MaxTools {
		s.Tools[ev.Tool]++
	}
	if ev.Kind != "" {
		p.Kinds[ev.Kind]++
	}
	for _, k := range ev.Kinds {
		if s.Kinds == nil {
			s.Kinds = map[string]int{}
		}
		s.Kinds[k]++
	}
	for _, d := range ev.Destinations {
		if _, ok := p.Destinations[d]; !ok && c.knownFamily(p, d) {
			// A new member of a family the agent rotates through: counted
			// as a member, not as the session's novelty.
			p.noteSubnet(c, c.family(d))
			bump(p.Families, c.family(d), c.Learning.MaxDestinations, &p.Dropped)
		} else if !ok {
			if f := c.family(d); f != "" {
				p.noteSubnet(c, f)
				bump(p.Families, f, c.Learning.MaxDestinations, &p.Dropped)
			}
			typ, _, _ := strings.Cut(d, ":")
			if s.Novel == nil {
				s.Novel = map[string]int{}
			}
			s.Novel[typ]++
			if len(p.Versions) > 1 {
				if p.NewSinceChange == nil {
					p.NewSinceChange = map[string]int{}
				}
				if bump(p.NewSinceChange, d, c.Learning.MaxDestinations, &p.Dropped) {
					if p.NewSinceFirst == nil {
						p.NewSinceFirst = map[string]int{}
					}
					p.NewSinceFirst[d] = s.N
				}
			}
		}
		bump(p.Destinations, d, c.Learning.MaxDestinations, &p.Dropped)
		p.use(c, &p.DestUse, s, d, cons, ro)
		if dom := c.domainKey(d); dom != "" {
			if p.Domains[dom] == 0 && len(p.Versions) > 1 {
				// A domain first used since the version changed: its
				// next host or address, in another session, is a habit
				// of the new version, not a new page of a known site.
				if p.NewSinceChange == nil {
					p.NewSinceChange = map[string]int{}
				}
				if p.NewSinceFirst == nil {
					p.NewSinceFirst = map[string]int{}
				}
				if bump(p.NewSinceChange, youngDomainKey(dom), c.Learning.MaxDestinations, &p.Dropped) {
					p.NewSinceFirst[youngDomainKey(dom)] = s.N
				}
			}
			bump(p.Domains, dom, c.Learning.MaxDestinations, &p.Dropped)
			p.use(c, &p.DomainUse, s, dom, cons, ro)
		}
	}
	if ev.Hour >= 0 && ev.Hour < 24 {
		p.Hours[ev.Hour]++
	}
	if s.LastTool != "" {
		if bump(p.ToolNext, s.LastTool+">"+ev.Tool, c.Learning.MaxTransitions, &p.Dropped) {
			p.ToolFrom[s.LastTool]++
		}
		if bump(p.KindNext, s.LastKind+">"+ev.Kind, c.Learning.MaxTransitions, &p.Dropped) {
			p.KindFrom[s.LastKind]++
			p.use(c, &p.TransUse, s, s.LastKind+">"+ev.Kind, false, false)
		}
	}
	if s.LastTried != "" && ev.Kind != "" {
		p.tried(c, s, s.LastTried+">"+ev.Kind)
	}
	s.LastTool, s.LastKind, s.LastTried = ev.Tool, ev.Kind, ""
}

// triedUse counts, in an agent's profile, session s's refused use of
// destination d (its family when it has one), once per session.
func (p *Profile) triedUse(c *Config, s *Shape, d string) {
	if p.Version != "" {
		return
	}
	key := cmp.Or(c.family(d), d)
	if p.TriedUse == nil {
		p.TriedUse = map[string]DestUse{}
	}
	u, ok := p.TriedUse[key]
	if !ok && len(p.TriedUse) >= c.Learning.MaxDestinations {
		p.Dropped++
		return
	}
	if !ok {
		u.First = s.N
		p.noteSubnet(c, key)
	}
	if u.Last != s.N || !ok {
		u.Sessions++
		u.Last = s.N
	}
	p.TriedUse[key] = u
}

// triedHabit reports whether the agent tried destination d (or its
// family), refused, in at least learning.tried_sessions sessions before
// this one (ordinal this), the first of them before its latest version
// appeared: an agent that is asked every time it does its usual work is
// still doing its usual work. A refused habit the latest version brought
// is not one the agent had.
func (c *Config) triedHabit(p *Profile, d string, this int) bool {
	u, ok := p.TriedUse[cmp.Or(c.family(d), d)]
	if !ok {
		return false
	}
	earlier := u.Sessions
	if u.Last == this {
		earlier--
	}
	changed := 0 // the ordinal of the last session before the latest version
	if len(p.Versions) > 1 {
		changed = p.Sessions - p.SinceVersion
	}
	return earlier >= c.Learning.TriedSessions && (changed == 0 || u.First <= changed)
}

// tried counts a kind transition into or out of a refused call.
func (p *Profile) tried(c *Config, s *Shape, t string) {
	if bump(p.TriedNext, t, c.Learning.MaxTransitions, &p.Dropped) {
		src, _, _ := strings.Cut(t, ">")
		p.TriedFrom[src]++
		p.use(c, &p.TransUse, s, t, false, false)
	}
}

// use counts session s's use of key (a destination or a transition) in
// a version's profile, once per session; readOnly says whether this call
// was read-only.
func (p *Profile) use(c *Config, m *map[string]DestUse, s *Shape, key string, consequential, readOnly bool) {
	if p.Version == "" {
		return
	}
	if *m == nil {
		*m = map[string]DestUse{}
	}
	u, ok := (*m)[key]
	if !ok && len(*m) >= c.Learning.MaxDestinations {
		return // counted as dropped by the bump of the key's own count
	}
	if u.Last != s.N || !ok {
		u.Sessions++
		u.Last = s.N
	}
	u.Consequential = u.Consequential || consequential
	u.ReadOnly = readOnly && (u.ReadOnly || !ok)
	(*m)[key] = u
}

// youngDomainKey is the NewSinceChange key of a domain key (no
// destination has a space before its colon).
func youngDomainKey(dom string) string { return "domain " + dom }

// bump counts key in m unless m is full and key new; it reports whether it
// counted.
func bump(m map[string]int, key string, limit int, dropped *int) bool {
	if _, ok := m[key]; !ok && len(m) >= limit {
		*dropped++
		return false
	}
	m[key]++
	return true
}

// Clone returns a deep copy of p: nothing the copy learns changes p, so a
// profile others read can be learned on from its copy. (TestCloneShares
// Nothing fills every field and fails for one a new field left shared.)
func (p *Profile) Clone() *Profile {
	q := *p
	for _, m := range []*map[string]int{&q.Tools, &q.Kinds, &q.Destinations, &q.Attempted, &q.Domains, &q.Families,
		&q.ToolNext, &q.KindNext, &q.ToolFrom, &q.KindFrom, &q.TriedNext, &q.TriedFrom, &q.NewSinceChange, &q.NewSinceFirst} {
		*m = maps.Clone(*m)
	}
	for _, m := range []*map[string]DestUse{&q.DestUse, &q.TransUse, &q.TriedUse, &q.DomainUse} {
		*m = maps.Clone(*m)
	}
	q.Shapes = slices.Clone(p.Shapes)
	for i := range q.Shapes {
		s := &q.Shapes[i]
		s.Kinds, s.Tried, s.Tools, s.Novel = maps.Clone(s.Kinds), maps.Clone(s.Tried), maps.Clone(s.Tools), maps.Clone(s.Novel)
	}
	q.Versions, q.Pooled = slices.Clone(p.Versions), slices.Clone(p.Pooled)
	if p.Fingerprint != nil {
		f := *p.Fingerprint
		q.Fingerprint = &f
	}
	return &q
}

// NewProfileFrom makes a decoded profile usable (its maps allocated).
func NewProfileFrom(p *Profile) *Profile {
	p.init()
	return p
}
