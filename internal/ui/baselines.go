package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/mandate-dev/mandate/api"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/baseline"
	"github.com/mandate-dev/mandate/internal/store"
)

// Baselines reads the agents' learned profiles (store.Baselines provides
// it).
type Baselines interface {
	ListBaselines(ctx context.Context, agent string) ([]*store.Baseline, error)
}

// versionBaseline is one version's learned profile and its drift from the
// version before it.
type versionBaseline struct {
	N       int
	P       *baseline.Profile
	State   string
	Drift   *baseline.Drift
	Firsts  []string
	MoreDst int
}

// behaviour is the agent page's baseline section.
type behaviour struct {
	// Agent is the agent's baseline as GET /v1/agents/{id} gives it;
	// Review its cross-session review (/v1/agents/{id}/review).
	Agent      *api.AgentBaseline
	Review     *api.AgentReview
	Scope      *barChart
	Versions   []*versionBaseline
	Kinds      *barChart
	Tools      *barChart
	Divergence *barChart
}

// maxFirsts bounds the destinations listed per version.
const maxFirsts = 40

// agentBehaviour reads an agent's baselines: its versions in the order
// they appeared, each compared with the one before (drift), and the kind
// and tool distributions side by side. Nil when none are stored.
func (d *Dashboard) agentBehaviour(ctx context.Context, p auth.Principal, agent string) (*behaviour, error) {
	if d.baselines == nil || d.baselineCfg == nil {
		return nil, nil
	}
	b := &behaviour{}
	var err error
	if b.Agent, err = d.eng.Agent(ctx, p, agent); errors.Is(err, store.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	drift, err := d.eng.Drift(ctx, p, agent)
	if err != nil {
		return nil, err
	}
	if b.Review, err = d.eng.AgentReview(ctx, p, agent); err != nil {
		return nil, err
	}
	if sc := b.Review.Scope; len(sc) > 0 {
		c := &barChart{Raw: true, Series: []chartSeries{{Name: "destinations", Class: "series1"}}}
		top := 1
		for _, n := range sc {
			top = max(top, n)
		}
		for i, n := range sc {
			c.Categories = append(c.Categories, "s"+strconv.Itoa(i+1))
			c.Series[0].Values = append(c.Series[0].Values, float64(n)/float64(top))
		}
		b.Scope = c
	}
	rows, err := d.baselines.ListBaselines(ctx, agent)
	if err != nil {
		return nil, fmt.Errorf("baselines of %s: %w", agent, err)
	}
	byVersion := map[string]*baseline.Profile{}
	var order []string
	for _, r := range rows {
		p := &baseline.Profile{}
		if err := json.Unmarshal(r.Profile, p); err != nil {
			return nil, fmt.Errorf("baseline %s/%s: %w", r.Agent, r.Version, err)
		}
		if r.Version == "" {
			order = p.Versions
			continue
		}
		byVersion[r.Version] = p
	}
	// Versions the agent's own row does not list (yet) go last.
	for _, r := range rows {
		if r.Version != "" && !slices.Contains(order, r.Version) {
			order = append(order, r.Version)
		}
	}
	for _, v := range order {
		p, ok := byVersion[v]
		if !ok {
			continue
		}
		vb := &versionBaseline{N: len(b.Versions) + 1, P: p, State: p.State(d.baselineCfg)}
		for i := range drift.Pairs {
			if drift.Pairs[i].To == v {
				vb.Drift = &drift.Pairs[i]
			}
		}
		for dst := range p.Destinations {
			vb.Firsts = append(vb.Firsts, dst)
		}
		slices.Sort(vb.Firsts)
		if len(vb.Firsts) > maxFirsts {
			vb.MoreDst = len(vb.Firsts) - maxFirsts
			vb.Firsts = vb.Firsts[:maxFirsts]
		}
		for i, s := range vb.Firsts {
			vb.Firsts[i] = trunc(maxText, s)
		}
		b.Versions = append(b.Versions, vb)
	}
	if len(b.Versions) == 0 {
		return nil, nil
	}
	b.Kinds = shareChart(b.Versions, func(p *baseline.Profile) map[string]int { return p.Kinds })
	b.Tools = shareChart(b.Versions, func(p *baseline.Profile) map[string]int { return p.Tools })
	if len(b.Versions) > 1 {
		c := &barChart{Raw: true, Series: []chartSeries{{Name: "divergence", Class: "series0"}}}
		for _, v := range b.Versions[1:] {
			if v.Drift != nil {
				c.Categories = append(c.Categories, "v"+strconv.Itoa(v.N-1)+"→v"+strconv.Itoa(v.N))
				c.Series[0].Values = append(c.Series[0].Values, v.Drift.Divergence)
			}
		}
		if len(c.Categories) > 0 {
			b.Divergence = c
		}
	}
	return b, nil
}

// maxCategories bounds a chart's groups: the most frequent are kept.
const maxCategories = 20

// shareChart compares the versions' distributions (shares of each
// version's total, so versions of different volume compare).
func shareChart(versions []*versionBaseline, of func(*baseline.Profile) map[string]int) *barChart {
	total := map[string]int{}
	for _, v := range versions {
		for k, n := range of(v.P) {
			total[k] += n
		}
	}
	if len(total) == 0 {
		return nil
	}
	c := &barChart{}
	for k := range total {
		c.Categories = append(c.Categories, k)
	}
	slices.SortFunc(c.Categories, func(a, b string) int {
		if total[a] != total[b] {
			return total[b] - total[a]
		}
		if a < b {
			return -1
		}
		return 1
	})
	if len(c.Categories) > maxCategories {
		c.Categories = c.Categories[:maxCategories]
	}
	for i, v := range versions {
		m := of(v.P)
		sum := 0
		for _, n := range m {
			sum += n
		}
		s := chartSeries{Name: "v" + strconv.Itoa(v.N), Class: "series" + strconv.Itoa(i%4)}
		for _, k := range c.Categories {
			share := 0.0
			if sum > 0 {
				share = float64(m[k]) / float64(sum)
			}
			s.Values = append(s.Values, share)
		}
		c.Series = append(c.Series, s)
	}
	return c
}
