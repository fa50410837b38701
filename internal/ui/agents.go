package ui

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/mandate-dev/mandate/api"
	"github.com/mandate-dev/mandate/internal/store"
)

// agentScan bounds how many sessions the agents pages read.
const agentScan = 1000

// agentSummary is one agent as its sessions show it.
type agentSummary struct {
	ID                    string
	Sessions              int
	Calls, Denied, Asked  int
	Versions              int
	FirstSeen, LastSeen   time.Time
	Active                int
	SuspendedOrTerminated int
}

// agentsPage lists the agents seen in the latest sessions.
func (d *Dashboard) agentsPage(w http.ResponseWriter, r *http.Request, v *viewer) {
	list, err := d.eng.ListSessions(r.Context(), v.P, store.SessionFilter{Limit: agentScan})
	if err != nil {
		d.fail(w, r, v, "session list", err)
		return
	}
	by := map[string]*agentSummary{}
	versions := map[string]map[string]bool{}
	var order []string
	for _, s := range list {
		a, ok := by[s.Agent.ID]
		if !ok {
			a = &agentSummary{ID: s.Agent.ID, FirstSeen: s.CreatedAt, LastSeen: s.CreatedAt}
			by[s.Agent.ID], versions[s.Agent.ID] = a, map[string]bool{}
			order = append(order, s.Agent.ID)
		}
		a.add(s)
		versions[s.Agent.ID][fingerprint(s.Agent)] = true
	}
	out := make([]*agentSummary, 0, len(order))
	for _, id := range order {
		by[id].Versions = len(versions[id])
		out = append(out, by[id])
	}
	learned, err := d.eng.Agents(r.Context(), v.P)
	if err != nil {
		d.fail(w, r, v, "agent list", err)
		return
	}
	d.render(w, r, v, http.StatusOK, "agents", agentsData{Learned: learned, Agents: out, Scanned: len(list), Capped: len(list) == agentScan})
}

type agentsData struct {
	// Learned are the agents with a baseline (GET /v1/agents).
	Learned []api.AgentBaseline
	Agents  []*agentSummary
	Scanned int
	Capped  bool
}

func (a *agentSummary) add(s *store.Session) {
	a.Sessions++
	a.Calls += s.State.Calls
	a.Denied += s.State.Denied
	a.Asked += s.State.Asked
	if s.CreatedAt.Before(a.FirstSeen) {
		a.FirstSeen = s.CreatedAt
	}
	if s.CreatedAt.After(a.LastSeen) {
		a.LastSeen = s.CreatedAt
	}
	switch s.Status {
	case store.StatusActive:
		a.Active++
	case store.StatusSuspended, store.StatusTerminated:
		a.SuspendedOrTerminated++
	}
}

// fingerprint names an agent version: what it runs on, as the sessions
// reported it.
func fingerprint(a store.Agent) string {
	return fmt.Sprintf("model=%s prompt=%s tools=%s retrieval=%s", orDash(a.Model), orDash(short(a.SystemPromptHash)), orDash(short(a.ToolsetHash)), orDash(a.RetrievalSource))
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// agentVersion is one fingerprint of an agent and what its sessions did.
type agentVersion struct {
	Fingerprint string
	Agent       store.Agent
	agentSummary
	// Kinds are allowed calls per kind, summed over the version's
	// sessions' counters.
	Kinds map[string]int
}

type agentData struct {
	ID string
	// Behaviour is the learned baselines and drift, when the server keeps
	// them.
	Behaviour *behaviour
	Versions  []*agentVersion
	Sessions  []*store.Session
	Chart     *barChart
	Capped    bool
}

// agentPage shows one agent: its versions (fingerprints) with their
// sessions' counters, the kinds of call each version was allowed, side by
// side as a chart, and its latest sessions.
func (d *Dashboard) agentPage(w http.ResponseWriter, r *http.Request, v *viewer) {
	id := r.PathValue("id")
	list, err := d.eng.ListSessions(r.Context(), v.P, store.SessionFilter{AgentID: id, Limit: agentScan})
	if err != nil {
		d.fail(w, r, v, "agent", err)
		return
	}
	if len(list) == 0 {
		d.notFound(w, r, v, "No session of an agent "+trunc(80, strconv.Quote(id))+" is stored here.")
		return
	}
	data := agentData{ID: id, Capped: len(list) == agentScan}
	by := map[string]*agentVersion{}
	for i := len(list) - 1; i >= 0; i-- { // oldest first: versions in the order they appeared
		s := list[i]
		fp := fingerprint(s.Agent)
		av, ok := by[fp]
		if !ok {
			av = &agentVersion{Fingerprint: fp, Agent: s.Agent, agentSummary: agentSummary{FirstSeen: s.CreatedAt, LastSeen: s.CreatedAt}, Kinds: map[string]int{}}
			by[fp] = av
			data.Versions = append(data.Versions, av)
		}
		av.add(s)
		for k, n := range s.State.Counts {
			av.Kinds[k] += n
		}
	}
	data.Sessions = list[:min(len(list), 50)]
	data.Chart = kindChart(data.Versions)
	if data.Behaviour, err = d.agentBehaviour(r.Context(), v.P, id); err != nil {
		d.fail(w, r, v, "agent", err)
		return
	}
	d.render(w, r, v, http.StatusOK, "agent", data)
}

// kindChart compares the versions' distributions of allowed calls by kind
// (shares, so versions with different volumes compare).
func kindChart(versions []*agentVersion) *barChart {
	kinds := map[string]bool{}
	for _, v := range versions {
		for k := range v.Kinds {
			kinds[k] = true
		}
	}
	if len(kinds) == 0 {
		return nil
	}
	c := &barChart{}
	for k := range kinds {
		c.Categories = append(c.Categories, k)
	}
	slices.Sort(c.Categories)
	for i, v := range versions {
		total := 0
		for _, n := range v.Kinds {
			total += n
		}
		s := chartSeries{Name: "v" + strconv.Itoa(i+1), Class: "series" + strconv.Itoa(i%4)}
		for _, k := range c.Categories {
			share := 0.0
			if total > 0 {
				share = float64(v.Kinds[k]) / float64(total)
			}
			s.Values = append(s.Values, share)
		}
		c.Series = append(c.Series, s)
	}
	return c
}
