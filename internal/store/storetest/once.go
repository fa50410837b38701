package storetest

import (
	"encoding/json"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/baseline"
	"github.com/mandate-dev/mandate/internal/store"
)

// OnceDecisions are three decisions of session s1, for the backends' tests
// of decisions stored once (in their evidence records): one with every
// field set and args as a caller may send them (not in canonical form), one
// with args as the engine marshals them (canonical already) and empty
// lists, one with no args.
func OnceDecisions() []*store.Decision {
	at := time.Unix(1700000100, 987654321).UTC()
	return []*store.Decision{
		{ID: "s1-d1", SessionID: "s1", Seq: 1, Surface: "mcp", Tool: "send_email",
			Args:           json.RawMessage(`{"to": "bob@example.com", "body": "a < b & c", "n": 1.50}`),
			Action:         &action.Action{Tool: "send_email", Kind: action.Send, Recipients: []action.Recipient{{Address: "bob@example.com"}}},
			MandateVersion: 1, PolicyHash: "ph", Effect: "ask", Rules: []string{"r1", "r2"}, Reasons: []string{"why <b>"},
			LatencyMicros: 42, CallID: "toolu_1", CreatedAt: at, ApprovalID: "a1",
			Judge:      &store.JudgeOpinion{Model: "m", Decision: "deny", Reason: "no", LatencyMS: 3, Mode: "advisory"},
			Signals:    []baseline.Signal{{Name: baseline.SignalRareTool, Value: json.RawMessage(`0.25`), Reason: "rare"}},
			Provenance: []store.Provenance{{Value: "bob@example.com", Field: "to", Origin: "user", Trust: "user"}},
		},
		{ID: "s1-d2", SessionID: "s1", Seq: 2, Surface: "api", Tool: "Read",
			Args: json.RawMessage(`{"file_path":"/x"}`), Action: &action.Action{Tool: "Read", Kind: action.Read},
			MandateVersion: 1, PolicyHash: "ph", Effect: "allow", Rules: []string{}, Reasons: []string{}, CreatedAt: at.Add(time.Second)},
		{ID: "s1-d3", SessionID: "s1", Seq: 3, Surface: "api", Tool: "Noop",
			MandateVersion: 1, PolicyHash: "ph", Effect: "deny", Rules: []string{"x"}, Reasons: []string{"y"}, CreatedAt: at.Add(2 * time.Second)},
	}
}

// AsReadBefore is d as a store returned it while every field of a decision
// had its own column: args as given ({} when empty), empty lists as [].
func AsReadBefore(d *store.Decision) *store.Decision {
	c := *d
	if len(c.Args) == 0 {
		c.Args = json.RawMessage(`{}`)
	}
	if c.Rules == nil {
		c.Rules = []string{}
	}
	if c.Reasons == nil {
		c.Reasons = []string{}
	}
	return &c
}

// LegacyDecisionColumns are a decisions row's columns, as the writer of a
// store that kept every field of a decision in its own column filled them
// (for the backends' upgrade tests): surface, tool, args, action,
// mandate_version, policy_hash, rules, reasons, latency_us, created_at,
// approval_id, judge, signals, provenance.
func LegacyDecisionColumns(d *store.Decision) []any {
	r := AsReadBefore(d)
	js := func(v any) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		return b
	}
	var judge, signals, prov []byte
	if d.Judge != nil {
		judge = js(d.Judge)
	}
	if len(d.Signals) > 0 {
		signals = js(d.Signals)
	}
	if len(d.Provenance) > 0 {
		prov = js(d.Provenance)
	}
	return []any{d.Surface, d.Tool, []byte(r.Args), js(d.Action), d.MandateVersion, d.PolicyHash, js(r.Rules), js(r.Reasons),
		d.LatencyMicros, d.CreatedAt.UnixNano(), d.ApprovalID, judge, signals, prov}
}
