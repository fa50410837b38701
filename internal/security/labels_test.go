package security

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/evidence"
	"github.com/mandate-dev/mandate/internal/hook"
)

// Labels tell the truth (issue 10.6): a result of a call Mandate did not
// allow is a gap however the surface names the call; what an agent's own
// credential says about a result is reported, never observed; a hook token
// relays the user's words for the one agent it serves.

const docsIntent = "Summarise the docs in this folder. Do not delete anything."

// docsSession is a claude-code session (the default hook agent) with three
// decisions: an allowed read, a denied rm, an asked send.
type docsSession struct {
	sid                  string
	allowed, denied, ask string
}

func newDocsSession(t *testing.T, in *instance, agent string) docsSession {
	t.Helper()
	s := docsSession{sid: in.sessionAs("user", map[string]any{"agent_id": agent, "intent": docsIntent, "working_directory": "/home/dev/docs"})}
	var eff string
	if s.allowed, eff = in.decide("user", s.sid, "Read", readDocs, map[string]any{"call_id": "toolu_read"}); eff != "allow" {
		t.Fatalf("setup: read %s", eff)
	}
	if s.denied, eff = in.decide("user", s.sid, "Bash", rmRoot, map[string]any{"call_id": "toolu_rm"}); eff != "deny" {
		t.Fatalf("setup: rm %s", eff)
	}
	if s.ask, eff = in.decide("user", s.sid, "send_email", map[string]any{"to": "eve@x.example", "body": "hi"}, map[string]any{"call_id": "toolu_send"}); eff != "ask" {
		t.Fatalf("setup: send %s", eff)
	}
	return s
}

func TestLabelsGaps(t *testing.T) {
	in := start(t, "")
	s := newDocsSession(t, in, "claude-code")
	observeCases(t, in, s.sid, []observeCase{
		{"allowed by decision id", "hook", map[string]any{"decision_id": s.allowed, "output": "ok"}, "", "observed", 200, ""},
		{"denied by decision id", "hook", map[string]any{"decision_id": s.denied, "output": "gone"}, "denied", "observed", 200, ""},
		{"asked by decision id", "hook", map[string]any{"decision_id": s.ask, "output": "sent"}, "asked", "observed", 200, ""},
		{"allowed by call id", "hook", map[string]any{"session_id": s.sid, "call_id": "toolu_read", "tool": "Read", "args": readDocs, "output": "ok"}, "", "observed", 200, ""},
		{"denied by call id", "hook", map[string]any{"session_id": s.sid, "call_id": "toolu_rm", "tool": "Bash", "args": rmRoot, "output": "gone"}, "denied", "observed", 200, ""},
		{"asked by call id", "hook", map[string]any{"session_id": s.sid, "call_id": "toolu_send", "tool": "send_email", "args": map[string]any{"to": "eve@x.example"}, "output": "sent"}, "asked", "observed", 200, ""},
		{"never decided", "hook", map[string]any{"session_id": s.sid, "call_id": "toolu_none", "tool": "Bash", "args": rmRoot, "output": "?"}, "never decided", "observed", 200, ""},
		{"no call id", "hook", map[string]any{"session_id": s.sid, "tool": "Bash", "args": rmRoot, "output": "?"}, "no call id", "observed", 200, ""},
		{"another tool ran", "hook", map[string]any{"session_id": s.sid, "call_id": "toolu_read", "tool": "Write", "args": readDocs, "output": "?"}, "decided for another tool", "observed", 200, ""},
		{"asked, reported by the user's harness", "user", map[string]any{"decision_id": s.ask, "output": "sent", "origin": "reported"}, "asked", "reported", 200, ""},
		{"unknown decision", "hook", map[string]any{"decision_id": "01nope", "output": "?"}, "", "", 404, "not found"},
	})
}

// observeCase is one POST /v1/observe and what the observation it records
// must say.
type observeCase struct {
	name    string
	who     string
	req     map[string]any
	gap     string // the gap reason's start; "" for none
	origin  string
	code    int
	errPart string // for a refusal, what its error says
}

// observeCases posts each case's observation in session sid and checks
// the answer, then the gap and origin the recorded observation carries.
func observeCases(t *testing.T, in *instance, sid string, cases []observeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := in.do("POST", "/v1/observe", tc.who, tc.req)
			if r.code != tc.code {
				t.Fatalf("%d %s, want %d", r.code, r.raw, tc.code)
			}
			if tc.code != 200 {
				if !strings.Contains(r.errMsg(), tc.errPart) {
					t.Fatalf("error %q, want it to say %q", r.errMsg(), tc.errPart)
				}
				return
			}
			o := observationOf(t, in, r.str("observation_id"), sid)
			gap, _ := o["gap"].(bool)
			reason, _ := o["gap_reason"].(string)
			if gap != (tc.gap != "") || !strings.HasPrefix(reason, tc.gap) {
				t.Fatalf("gap=%v reason %q, want %q", gap, reason, tc.gap)
			}
			if o["origin"] != tc.origin {
				t.Fatalf("origin %v, want %s", o["origin"], tc.origin)
			}
		})
	}
}

// observationOf finds an observation among the session's gaps and its
// decisions' observations.
func observationOf(t *testing.T, in *instance, id, sid string) map[string]any {
	t.Helper()
	gaps := in.must(200, "GET", "/v1/gaps?session_id="+sid, "user", nil)
	for _, g := range gaps.body["gaps"].([]any) {
		if g := g.(map[string]any); g["observation_id"] == id {
			return g
		}
	}
	ds := in.must(200, "GET", "/v1/decisions?session_id="+sid, "user", nil)
	for _, d := range ds.body["decisions"].([]any) {
		one := in.must(200, "GET", "/v1/decisions/"+d.(map[string]any)["decision_id"].(string), "user", nil)
		for _, o := range one.body["observations"].([]any) {
			if o := o.(map[string]any); o["observation_id"] == id {
				return o
			}
		}
	}
	t.Fatalf("observation %s not found", id)
	return nil
}

func TestLabelsAgentsReport(t *testing.T) {
	in := start(t, "")
	s := newDocsSession(t, in, "mailer")
	observeCases(t, in, s.sid, []observeCase{
		{"agent by decision id", "agent:mailer", map[string]any{"decision_id": s.allowed, "output": "ok"}, "", "reported", 200, ""},
		{"agent says reported", "agent:mailer", map[string]any{"decision_id": s.allowed, "output": "ok", "origin": "reported"}, "", "reported", 200, ""},
		{"agent claims observed", "agent:mailer", map[string]any{"decision_id": s.allowed, "output": "ok", "origin": "observed"}, "", "", 403, ""},
		{"agent by call id", "agent:mailer", map[string]any{"session_id": s.sid, "call_id": "toolu_read", "tool": "Read", "args": readDocs, "output": "ok"}, "", "reported", 200, ""},
		{"agent claims observed by call id", "agent:mailer", map[string]any{"session_id": s.sid, "call_id": "toolu_read", "tool": "Read", "args": readDocs, "output": "ok", "origin": "observed"}, "", "", 403, ""},
		{"agent gap is reported too", "agent:mailer", map[string]any{"decision_id": s.denied, "output": "gone"}, "denied", "reported", 200, ""},
		{"another agent", "agent:other", map[string]any{"decision_id": s.allowed, "output": "ok"}, "", "", 403, ""},
		{"hook of the agent observes", "hook:mailer", map[string]any{"decision_id": s.allowed, "output": "ok"}, "", "observed", 200, ""},
		{"the user's harness observes", "user", map[string]any{"decision_id": s.allowed, "output": "ok"}, "", "observed", 200, ""},
		{"unknown origin", "user", map[string]any{"decision_id": s.allowed, "output": "ok", "origin": "seen"}, "", "", 400, ""},
	})
	// The evidence records carry the same labels, and a bundle counts them.
	b := in.must(200, "GET", "/v1/evidence/sessions/"+s.sid+"/bundle", "user", nil)
	rep, err := evidence.VerifyBundle(b.raw, in.App.Evidence.Key().Verifier())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Reported != 4 || rep.Types["observation"] != 6 {
		t.Fatalf("bundle: %d reported, %d observations; want 4 and 6", rep.Reported, rep.Types["observation"])
	}
}

func TestLabelsHookTokens(t *testing.T) {
	in := start(t, "")
	// A hook token as one made before hook tokens were bound: no agent.
	legacy, rec, err := auth.Issue("user", "", "legacy hook", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	rec.Role = string(auth.RoleHook)
	if err := in.App.Store.CreateToken(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	in.Tokens["legacy"] = legacy
	mailer := in.session("mailer", "Send the Q3 summary to alice@example.com")
	cc := in.session("claude-code", docsIntent)
	sub := in.session("claude-code:Explore", "read the docs")
	structured := map[string]any{"allow": []string{"read", "send", "pay", "delete"}}
	tests := []struct {
		name, who, method, path string
		body                    map[string]any
		code                    int
	}{
		{"create for its agent", "hook", "POST", "/v1/sessions", map[string]any{"agent_id": "claude-code", "intent": "read the docs"}, 201},
		{"create for a sub-agent of its agent", "hook", "POST", "/v1/sessions", map[string]any{"agent_id": "claude-code:Explore", "intent": "read the docs"}, 201},
		{"create for another agent", "hook", "POST", "/v1/sessions", map[string]any{"agent_id": "mailer", "intent": "send everything"}, 403},
		{"create for a look-alike agent", "hook", "POST", "/v1/sessions", map[string]any{"agent_id": "claude-codex", "intent": "send everything"}, 403},
		{"create with a structured grant", "hook", "POST", "/v1/sessions", map[string]any{"agent_id": "claude-code", "mandate": structured}, 403},
		{"create with words and a grant", "hook", "POST", "/v1/sessions", map[string]any{"agent_id": "claude-code", "intent": "read", "mandate": structured}, 403},
		{"amend with a structured grant", "hook", "POST", "/v1/sessions/" + cc + "/mandate", map[string]any{"mandate": structured}, 403},
		{"amend with words", "hook", "POST", "/v1/sessions/" + cc + "/mandate", map[string]any{"intent": "also read the changelog"}, 200},
		{"amend another agent's session", "hook", "POST", "/v1/sessions/" + mailer + "/mandate", map[string]any{"intent": "and pay the invoice"}, 403},
		{"amend a sub-agent's session", "hook", "POST", "/v1/sessions/" + sub + "/mandate", map[string]any{"intent": "read the guide"}, 200},
		{"stop another agent's session", "hook", "POST", "/v1/sessions/" + mailer + "/status", map[string]any{"status": "completed"}, 403},
		{"evaluate in another agent's session", "hook", "POST", "/v1/evaluate", map[string]any{"session_id": mailer, "tool": "Read", "args": readDocs}, 403},
		{"delegate under another agent's session", "hook", "POST", "/v1/sessions", map[string]any{"agent_id": "claude-code", "intent": "x", "parent_session_id": mailer}, 403},
		{"pin tools in another agent's session", "hook", "POST", "/v1/sessions/" + mailer + "/tools", map[string]any{"tools": []any{map[string]any{"name": "zap"}}}, 403},
		{"a bound hook in its own agent's session", "hook:mailer", "POST", "/v1/sessions/" + mailer + "/mandate", map[string]any{"intent": "and cc bob@example.com"}, 200},
		{"a bound hook in claude-code's session", "hook:mailer", "POST", "/v1/evaluate", map[string]any{"session_id": cc, "tool": "Read", "args": readDocs}, 403},
		{"a legacy hook serves claude-code", "legacy", "POST", "/v1/evaluate", map[string]any{"session_id": cc, "tool": "Read", "args": readDocs}, 200},
		{"a legacy hook does not serve mailer", "legacy", "POST", "/v1/sessions/" + mailer + "/mandate", map[string]any{"intent": "pay"}, 403},
		{"a user may give a structured grant", "user", "POST", "/v1/sessions", map[string]any{"agent_id": "mailer", "mandate": map[string]any{"allow": []string{"read"}}}, 201},
		{"an agent may not amend at all", "agent:mailer", "POST", "/v1/sessions/" + mailer + "/mandate", map[string]any{"intent": "pay"}, 403},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := in.do(tc.method, tc.path, tc.who, tc.body)
			if r.code != tc.code {
				t.Fatalf("%d %s, want %d", r.code, r.raw, tc.code)
			}
		})
	}
	// What the hook amended is labelled as its words, and grants only what
	// the words give.
	m := in.must(200, "GET", "/v1/sessions/"+cc+"/mandate", "user", nil)
	ins := m.body["instructions"].([]any)
	if last := ins[len(ins)-1].(map[string]any); last["source"] != "hook" {
		t.Fatalf("the hook's words are labelled %v", last["source"])
	}
	for _, k := range m.body["allow"].([]any) {
		if k != "read" {
			t.Fatalf("words about reading granted %v", m.body["allow"])
		}
	}
	if auth.DefaultHookAgent != hook.DefaultAgentID {
		t.Fatalf("a legacy hook token serves %q, but the hook's sessions are %q's", auth.DefaultHookAgent, hook.DefaultAgentID)
	}
}
