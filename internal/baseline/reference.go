package baseline

// Pooled reference for drift: a version is compared with the version
// before it, but a previous version that ran only a few sessions (a
// prompt change followed soon by a model change) is too small a sample
// to test the new one against — every comparison would be insufficient,
// and an exact test against three sessions cannot rule chance out. The
// best estimate of "the agent's behaviour before this version" is then
// the previous version pooled with the versions before it, back until the
// pool holds drift.min_sessions sessions. Items the earlier versions
// used are then not new; that is the point: drift asks whether the new
// version does something its agent did not do before.

// Reference is the profile a version is compared with: prev alone when it
// has drift.min_sessions sessions or no earlier version is given, else
// prev pooled with earlier (the versions before it, newest first) until
// the pool has that many sessions. The pool keeps prev's version id (so
// a verdict names the version before and its permutations are seeded as
// before) and lists the versions pooled in Pooled; prev and earlier are
// not changed.
func (c *Config) Reference(prev *Profile, earlier ...*Profile) *Profile {
	prev.init()
	if prev.Sessions >= c.Drift.MinSessions || len(earlier) == 0 {
		return prev
	}
	ref := NewProfile(prev.Agent, prev.Version)
	ref.Previous = prev.Previous
	for _, p := range append([]*Profile{prev}, earlier...) {
		if ref.Sessions >= c.Drift.MinSessions {
			break
		}
		p.init()
		ref.pool(c, p)
	}
	return ref
}

// pool adds p's counts to ref. Shapes are kept oldest first, newest
// learning.max_shapes.
func (ref *Profile) pool(c *Config, p *Profile) {
	ref.Pooled = append(ref.Pooled, p.Version)
	ref.Sessions += p.Sessions
	ref.Ordinary += p.Ordinary
	ref.Calls += p.Calls
	ref.Decided += p.Decided
	ref.Denied += p.Denied
	ref.Asked += p.Asked
	for _, m := range [][2]map[string]int{
		{ref.Tools, p.Tools}, {ref.Kinds, p.Kinds}, {ref.Destinations, p.Destinations}, {ref.Attempted, p.Attempted},
		{ref.ToolNext, p.ToolNext}, {ref.KindNext, p.KindNext}, {ref.ToolFrom, p.ToolFrom}, {ref.KindFrom, p.KindFrom},
		{ref.Domains, p.Domains}, {ref.TriedNext, p.TriedNext}, {ref.TriedFrom, p.TriedFrom}, {ref.Families, p.Families},
	} {
		for k, n := range m[1] {
			m[0][k] += n
		}
	}
	for _, u := range []struct {
		to   *map[string]DestUse
		from map[string]DestUse
	}{{&ref.DestUse, p.DestUse}, {&ref.TransUse, p.TransUse}, {&ref.DomainUse, p.DomainUse}} {
		if u.from == nil {
			continue
		}
		if *u.to == nil {
			*u.to = map[string]DestUse{}
		}
		for k, v := range u.from {
			w, had := (*u.to)[k]
			w.Sessions += v.Sessions
			w.Consequential = w.Consequential || v.Consequential
			w.ReadOnly = v.ReadOnly && (w.ReadOnly || !had)
			(*u.to)[k] = w
		}
	}
	// p is older than what ref holds: its shapes go first.
	ref.Shapes = append(append([]Shape(nil), p.Shapes...), ref.Shapes...)
	if n := c.Learning.MaxShapes; len(ref.Shapes) > n {
		ref.Shapes = ref.Shapes[len(ref.Shapes)-n:]
	}
	for h := range ref.Hours {
		ref.Hours[h] += p.Hours[h]
	}
}
