package ui

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"

	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/policy"
)

type policyData struct {
	Hash     string
	Rules    []policy.RuleInfo
	Defaults []kindEffect
	// The console: a call decided offline against a session's mandate.
	Session, Tool, Args string
	Result              *engine.Result
	ActionJSON          string
	Error               string
	// Eval is the configured eval report (nil: none configured).
	Eval *evalReportData
}

type kindEffect struct {
	Kind, Effect string
}

// policyPage lists the loaded rules and decides a call in a session on the
// input the server would decide it on (engine.Input: the session's
// mandate, counters, flow and Mandate's own footprint; not the agent's
// baseline, which is assessed as a call is decided). Nothing is stored.
func (d *Dashboard) policyPage(w http.ResponseWriter, r *http.Request, v *viewer) {
	if !v.CanRead() {
		d.errorPage(w, r, v, http.StatusForbidden, "Your token may not read the policy (an approver token reads approvals only).")
		return
	}
	pol := d.eng.Policy()
	data := policyData{Hash: pol.Hash(), Rules: pol.Rules()}
	if d.evalReport != "" {
		data.Eval = readEvalReport(d.evalReport, data.Hash)
		if data.Eval.Problem != "" {
			d.log.Warn("dashboard: reading the eval report", "err", data.Eval.Problem)
		}
	}
	for k, e := range pol.Defaults() {
		data.Defaults = append(data.Defaults, kindEffect{string(k), string(e)})
	}
	slices.SortFunc(data.Defaults, func(a, b kindEffect) int {
		if a.Kind < b.Kind {
			return -1
		}
		return 1
	})
	q := r.URL.Query()
	data.Session, data.Tool, data.Args = q.Get("session"), q.Get("tool"), q.Get("args")
	if data.Session != "" || data.Tool != "" {
		data.Error = d.check(r, v, &data)
	}
	d.render(w, r, v, http.StatusOK, "policy", data)
}

// maxConsoleArgs bounds the console's arguments.
const maxConsoleArgs = 64 << 10

func (d *Dashboard) check(r *http.Request, v *viewer, data *policyData) string {
	if data.Session == "" || data.Tool == "" {
		return "Name a session and a tool."
	}
	if len(data.Args) > maxConsoleArgs {
		return "The arguments are over 64 KB."
	}
	args := map[string]any{}
	if data.Args != "" {
		dec := json.NewDecoder(bytes.NewReader([]byte(data.Args)))
		dec.UseNumber()
		if err := dec.Decode(&args); err != nil {
			return "The arguments are not a JSON object: " + err.Error()
		}
	}
	// The input the server would decide the call on (engine.Input: the
	// session's mandate, counters, flow and Mandate's own footprint), and
	// nothing is recorded.
	in, err := d.eng.Input(r.Context(), v.P, engine.EvaluateRequest{SessionID: data.Session, Tool: data.Tool, Args: args})
	if err != nil {
		return "Session " + trunc(80, strconv.Quote(data.Session)) + ": " + err.Error()
	}
	dc := &engine.Decider{Classifier: d.eng.Classifier(), Policy: d.eng.Policy()}
	res, err := dc.DecideContext(r.Context(), in)
	if err != nil {
		return "Mandate failed on this call (a live call would be denied): " + err.Error()
	}
	data.Result = &res
	b, _ := json.MarshalIndent(res.Action, "", "  ")
	data.ActionJSON = trunc(maxJSON, string(b))
	return ""
}
