package baseline

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
)

func cfg(t testing.TB) *Config {
	t.Helper()
	c, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var t0 = time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)

func ev(session, tool, kind, effect string, dests ...string) Event {
	return Event{Session: session, Tool: tool, Kind: kind, Kinds: []string{kind}, Effect: effect, Destinations: dests, Hour: 9}
}

// ordinary teaches p n sessions of an ordinary mail agent: read inbox,
// fetch one known site, send to one of two colleagues.
func ordinary(c *Config, p *Profile, prefix string, n int) {
	for i := range n {
		s := fmt.Sprintf("%s-%d", prefix, i)
		p.Learn(c, ev(s, "read_inbox", "read", "allow"), t0)
		p.Learn(c, ev(s, "fetch", "fetch", "allow", "host:docs.example"), t0)
		p.Learn(c, ev(s, "send_mail", "send", "allow", fmt.Sprintf("recipient:c%d@corp.example", i%2)), t0)
	}
}

func TestBuiltinConfig(t *testing.T) {
	c := cfg(t)
	if c.Lifecycle.MinSessions != 20 || c.Drift.MinSessions != 10 {
		t.Fatalf("interface defaults changed: monitoring after %d sessions, drift after %d", c.Lifecycle.MinSessions, c.Drift.MinSessions)
	}
}

func TestParseErrors(t *testing.T) {
	good := string(builtinData)
	for _, tc := range []struct{ name, data, want string }{
		{"unknown key", good + "\nsurprise: 1\n", "surprise"},
		{"out of range", strings.Replace(good, "unlike_self: 0.5", "unlike_self: 5", 1), "signals.unlike_self must be between 0 and 1"},
		{"bad pattern", strings.Replace(good, `pattern: '--no-verify\b'`, `pattern: '(['`, 1), "no-verify"},
		{"zero sessions", strings.Replace(good, "min_sessions: 20", "min_sessions: 0", 1), "lifecycle.min_sessions must be above 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "x.yaml") {
				t.Fatalf("err = %v, want one naming x.yaml and %q", err, tc.want)
			}
		})
	}
}

func TestDestinations(t *testing.T) {
	c := cfg(t)
	a := &action.Action{
		Hosts:      []string{"API.Example.com", "api.example.com"},
		Recipients: []action.Recipient{{Address: "Bob@X.example"}},
		Accounts:   []string{"de89 3704 0044 0532 0130 00"},
		Paths:      []action.PathRef{{Path: "/home/u/proj/src/main.go"}, {Path: "notes/a.txt"}},
		Commands:   []action.Command{{Name: "git", Argv: []string{"git", "-C", "x", "push", "origin"}}, {Name: "ls", Argv: []string{"ls", "/tmp"}}},
	}
	got := strings.Join(c.Destinations(a), " | ")
	want := "host:api.example.com | recipient:bob@x.example | account:DE89370400440532013000 | path:/home/u/proj | path:notes | program:git | subcommand:git x | program:ls"
	// "git -C x push": the first non-flag word after git is x (the -C
	// argument); a subcommand is a best effort, never a parse of every
	// program's flags.
	if got != want {
		t.Fatalf("destinations\n got %s\nwant %s", got, want)
	}
	many := &action.Action{}
	for i := range 1000 {
		many.Hosts = append(many.Hosts, fmt.Sprintf("h%d.example", i))
	}
	if n := len(c.Destinations(many)); n != maxDestsPerCall {
		t.Fatalf("a call naming 1000 hosts gives %d destinations, want the cap %d", n, maxDestsPerCall)
	}
}

func TestLifecycle(t *testing.T) {
	c := cfg(t)
	p := NewProfile("mailer", "")
	ordinary(c, p, "s", 19)
	if got := p.State(c); got != Learning {
		t.Fatalf("after 19 sessions: %s, want learning", got)
	}
	ordinary(c, p, "t", 1)
	if got := p.State(c); got != Monitoring {
		t.Fatalf("after 20 ordinary sessions and %d calls: %s, want monitoring", p.Calls, got)
	}
	p.Frozen = true
	calls := p.Calls
	p.Learn(c, ev("u", "read_inbox", "read", "allow"), t0)
	if p.State(c) != Frozen || p.Calls != calls {
		t.Fatalf("frozen profile: state %s, calls %d → %d", p.State(c), calls, p.Calls)
	}
}

func TestShortSessionsDoNotCount(t *testing.T) {
	c := cfg(t)
	p := NewProfile("a", "")
	for i := range 40 {
		p.Learn(c, ev(fmt.Sprint(i), "read_inbox", "read", "allow"), t0) // one call each
	}
	if p.Ordinary != 0 || p.State(c) != Learning {
		t.Fatalf("40 one-call sessions: ordinary %d, state %s", p.Ordinary, p.State(c))
	}
}

func TestDeniedAndAskedAreNotLearned(t *testing.T) {
	c := cfg(t)
	p := NewProfile("a", "")
	p.Learn(c, ev("s", "send_mail", "send", "deny", "recipient:evil@x.example"), t0)
	p.Learn(c, ev("s", "pay", "pay", "ask", "account:X"), t0)
	if p.Calls != 0 || len(p.Destinations) != 0 || len(p.Tools) != 0 {
		t.Fatalf("refused calls entered the baseline: %+v", p)
	}
	if p.Denied != 1 || p.Asked != 1 || p.Shapes[0].Denied != 1 || p.Shapes[0].Asked != 1 {
		t.Fatalf("refused calls not counted in the session shape: %+v", p.Shapes)
	}
}

func signal(r Result, name string) *Signal {
	for i := range r.Signals {
		if r.Signals[i].Name == name {
			return &r.Signals[i]
		}
	}
	return nil
}

func TestAssess(t *testing.T) {
	c := cfg(t)
	p := NewProfile("mailer", "")
	ordinary(c, p, "s", 30)
	for _, tc := range []struct {
		name       string
		cur        Current
		want       []string // signal names besides state and score
		unlikeSelf bool
	}{
		{"usual send", Current{Event: ev("n", "send_mail", "send", "allow", "recipient:c0@corp.example"), PrevTool: "fetch", PrevKind: "fetch"}, nil, false},
		{"new recipient", Current{Event: ev("n", "send_mail", "send", "allow", "recipient:drop@evil.example"), PrevTool: "fetch", PrevKind: "fetch"}, []string{SignalFirstSeen}, true},
		{"new tool", Current{Event: ev("n", "delete_all", "delete", "allow")}, []string{SignalRareTool}, false},
		{"rare transition", Current{Event: ev("n", "send_mail", "send", "allow", "recipient:c1@corp.example"), PrevTool: "read_inbox", PrevKind: "read"}, []string{SignalRareTransition}, false},
		{"rate", Current{Event: ev("n", "send_mail", "send", "allow", "recipient:c1@corp.example"), PrevTool: "send_mail", Counts: map[string]int{"send": 5}}, []string{SignalRate}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.Assess(p, tc.cur)
			var got []string
			for _, s := range r.Signals {
				if s.Name != SignalState && s.Name != SignalScore {
					got = append(got, s.Name)
				}
				if !json.Valid(s.Value) || s.Reason == "" {
					t.Errorf("signal %s: value %s, reason %q", s.Name, s.Value, s.Reason)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("signals %v, want %v", got, tc.want)
			}
			if r.State != Monitoring || signal(r, SignalState) == nil || signal(r, SignalScore) == nil {
				t.Errorf("state %s; state and score signals must always be there: %+v", r.State, r.Signals)
			}
			if r.UnlikeSelf != tc.unlikeSelf {
				t.Errorf("unlike self = %v (score %.2f), want %v", r.UnlikeSelf, r.Score, tc.unlikeSelf)
			}
		})
	}
}

func TestAssessLearningNeverUnlikeSelf(t *testing.T) {
	c := cfg(t)
	p := NewProfile("a", "")
	ordinary(c, p, "s", 5)
	r := c.Assess(p, Current{Event: ev("n", "send_mail", "send", "allow", "recipient:drop@evil.example")})
	if r.State != Learning || r.UnlikeSelf || len(r.FirstSeen) != 1 {
		t.Fatalf("learning baseline: %+v", r)
	}
	if s := signal(r, SignalScore); s == nil || !strings.Contains(s.Reason, "still learning") {
		t.Fatalf("score reason must say the baseline is learning: %+v", s)
	}
}

func TestFloodIsBounded(t *testing.T) {
	c := cfg(t)
	p := NewProfile("crawler", "")
	for i := range 200_000 {
		p.Learn(c, ev(fmt.Sprint(i%1000), fmt.Sprintf("tool%d", i%3000), "fetch", "allow", fmt.Sprintf("host:h%d.example", i)), t0)
	}
	if len(p.Destinations) != c.Learning.MaxDestinations || len(p.Tools) != c.Learning.MaxTools ||
		len(p.ToolNext) > c.Learning.MaxTransitions || len(p.Shapes) > c.Learning.MaxShapes || p.Dropped == 0 {
		t.Fatalf("unbounded: %d destinations, %d tools, %d transitions, %d shapes, %d dropped",
			len(p.Destinations), len(p.Tools), len(p.ToolNext), len(p.Shapes), p.Dropped)
	}
}

func TestJensenShannon(t *testing.T) {
	for _, tc := range []struct {
		p, q map[string]int
		want float64
	}{
		{map[string]int{"a": 5}, map[string]int{"a": 9}, 0},
		{map[string]int{"a": 5}, map[string]int{"b": 9}, 1},
		{map[string]int{"a": 1, "b": 1}, map[string]int{"a": 1}, 0.3113},
		{nil, map[string]int{"a": 1}, 0},
	} {
		if got := round(JensenShannon(tc.p, tc.q)); got != tc.want {
			t.Errorf("JS(%v, %v) = %v, want %v", tc.p, tc.q, got, tc.want)
		}
	}
}

func TestCompare(t *testing.T) {
	c := cfg(t)
	old := NewProfile("mailer", "v1")
	ordinary(c, old, "a", 12)
	for _, tc := range []struct {
		name    string
		build   func(p *Profile)
		verdict string
		what    string
	}{
		{"too few sessions", func(p *Profile) { ordinary(c, p, "b", 9) }, VerdictInsufficient, ""},
		{"same behaviour", func(p *Profile) { ordinary(c, p, "b", 12) }, VerdictStable, ""},
		{"quiet new destination", func(p *Profile) {
			ordinary(c, p, "b", 12)
			p.Learn(c, ev("b-3", "send_mail", "send", "allow", "recipient:drop@evil.example"), t0)
			p.Learn(c, ev("b-7", "send_mail", "send", "allow", "recipient:drop@evil.example"), t0)
		}, VerdictDrift, "recipient:drop@evil.example"},
		{"sends doubled", func(p *Profile) {
			ordinary(c, p, "b", 12)
			for i := range 12 {
				s := fmt.Sprintf("b-%d", i)
				p.Learn(c, ev(s, "send_mail", "send", "allow", "recipient:c0@corp.example"), t0)
				p.Learn(c, ev(s, "send_mail", "send", "allow", "recipient:c1@corp.example"), t0)
			}
		}, VerdictDrift, "send per session"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewProfile("mailer", "v2")
			tc.build(p)
			d := c.Compare(old, p)
			if d.Verdict != tc.verdict || !strings.Contains(strings.Join(append(d.Reasons, d.NewDestinations...), " "), tc.what) {
				t.Fatalf("verdict %s (%v, divergence %.3f), want %s with %q", d.Verdict, d.Reasons, d.Divergence, tc.verdict, tc.what)
			}
			if d.From != "v1" || d.To != "v2" || d.Sessions != p.Sessions || d.Rates["send"].From == 0 {
				t.Fatalf("drift figures: %+v", d)
			}
		})
	}
}

// TestCompareBenignNoise: two versions drawing from the same behaviour at
// random stay stable.
func TestCompareBenignNoise(t *testing.T) {
	c := cfg(t)
	rng := rand.New(rand.NewPCG(1, 2))
	tools := []struct{ tool, kind, dest string }{
		{"read_inbox", "read", ""}, {"fetch", "fetch", "host:docs.example"}, {"fetch", "fetch", "host:wiki.example"},
		{"send_mail", "send", "recipient:c0@corp.example"}, {"send_mail", "send", "recipient:c1@corp.example"}, {"search", "read", ""},
	}
	gen := func(p *Profile, prefix string) {
		for i := range 12 {
			s := fmt.Sprintf("%s-%d", prefix, i)
			for range 3 + rng.IntN(4) {
				x := tools[rng.IntN(len(tools))]
				var dests []string
				if x.dest != "" {
					dests = []string{x.dest}
				}
				p.Learn(c, ev(s, x.tool, x.kind, "allow", dests...), t0)
			}
		}
	}
	false_ := 0
	for trial := range 50 {
		a, b := NewProfile("x", "v1"), NewProfile("x", "v2")
		gen(a, fmt.Sprint("a", trial))
		gen(b, fmt.Sprint("b", trial))
		if d := c.Compare(a, b); d.Verdict != VerdictStable {
			false_++
			t.Logf("trial %d: %s %v", trial, d.Verdict, d.Reasons)
		}
	}
	if false_ > 2 {
		t.Fatalf("%d of 50 benign version pairs called drift", false_)
	}
}

func TestVersion(t *testing.T) {
	a := Version("m-1", "p", "t", "r")
	if a != Version("m-1", "p", "t", "r") || a == Version("m-2", "p", "t", "r") || a == Version("m-1", "pt", "", "r") || !strings.HasPrefix(a, "v-") {
		t.Fatalf("fingerprint not stable or not distinct: %s", a)
	}
}

func BenchmarkAssess(b *testing.B) {
	c := cfg(b)
	p := NewProfile("crawler", "")
	for i := range 10_000 {
		p.Learn(c, ev(fmt.Sprint(i%300), "fetch", "fetch", "allow", fmt.Sprintf("host:h%d.example", i)), t0)
	}
	cur := Current{Event: ev("n", "fetch", "fetch", "allow", "host:h17.example", "host:new.example"), PrevTool: "fetch", Counts: map[string]int{"fetch": 3}}
	b.ReportAllocs()
	for b.Loop() {
		c.Assess(p, cur)
	}
}

// BenchmarkProfileMemory reports the heap one agent's profile takes with
// 10,000 distinct destinations (bytes/agent).
func BenchmarkProfileMemory(b *testing.B) {
	c := cfg(b)
	var before, after runtime.MemStats
	var keep []*Profile
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range b.N {
		p := NewProfile("crawler", "")
		for i := range 10_000 {
			p.Learn(c, ev(fmt.Sprint(i%300), "fetch", "fetch", "allow", fmt.Sprintf("host:h%d.example", i)), t0)
		}
		keep = append(keep, p)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keep)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(len(keep)), "bytes/agent")
}

func FuzzParse(f *testing.F) {
	f.Add(string(builtinData))
	f.Add("lifecycle: {min_sessions: 1}\n")
	f.Add("signals: {weights: {rate: 2}}\n")
	f.Fuzz(func(t *testing.T, data string) {
		c, err := Parse("f.yaml", []byte(data))
		if err == nil {
			// What parses is usable: assessing and comparing cannot fail.
			p := NewProfile("a", "")
			p.Learn(c, ev("s", "t", "send", "allow", "host:x"), t0)
			c.Assess(p, Current{Event: ev("s", "u", "send", "allow", "host:y"), PrevTool: "t"})
			c.Compare(p, p)
		}
	})
}

func TestToolsetHash(t *testing.T) {
	a := ToolsetHash([]string{"read", "send", "read"})
	if a != ToolsetHash([]string{"send", "read"}) || a == ToolsetHash([]string{"send"}) || !strings.HasPrefix(a, "sha256:") || ToolsetHash(nil) != "" || ToolsetHash([]string{""}) != "" {
		t.Fatalf("tool-set hash not order-free, distinct or empty for none: %s", a)
	}
}

func TestDestinationsInWorkDir(t *testing.T) {
	c := cfg(t)
	a := &action.Action{Paths: []action.PathRef{{Path: "/work/proj/main.go"}, {Path: "/work/proj/pkg/x/y.go"}, {Path: "/work/projx/a"}, {Path: "/etc/passwd"}}}
	got := strings.Join(c.DestinationsIn(a, "/work/proj"), " | ")
	if want := "path:/work/proj | path:/work/projx/a | path:/etc/passwd"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// TestNoveltyDiscount: an agent that goes to a new host in most sessions is
// not unlike itself when it goes to another; a settled one is.
func TestNoveltyDiscount(t *testing.T) {
	c := cfg(t)
	settled, explorer := NewProfile("a", ""), NewProfile("b", "")
	for i := range 30 {
		s := fmt.Sprint(i)
		for _, p := range []*Profile{settled, explorer} {
			p.Learn(c, ev(s, "search", "read", "allow"), t0)
		}
		settled.Learn(c, ev(s, "fetch", "fetch", "allow", "host:docs.example"), t0)
		explorer.Learn(c, ev(s, "fetch", "fetch", "allow", fmt.Sprintf("host:site%d.example", i)), t0)
	}
	newHost := ev("n", "fetch", "fetch", "allow", "host:paste.example")
	newProgramToNewHost := ev("n", "fetch", "fetch", "allow", "host:paste.example", "program:nc")
	exposed := []string{"after reading a secret"}
	for _, tc := range []struct {
		name       string
		p          *Profile
		cur        Current
		unlikeSelf bool
	}{
		// Novelty alone is not unlike itself: agents try a new host once.
		{"settled agent, new host", settled, Current{Event: newHost, PrevTool: "search"}, false},
		{"settled agent, new host after reading a secret", settled, Current{Event: newHost, PrevTool: "search", Exposure: exposed}, true},
		// Two independent departures in one call (a new program talking
		// to a new host) are more than one exploration.
		{"settled agent, new program to a new host", settled, Current{Event: newProgramToNewHost, PrevTool: "search"}, true},
		{"settled agent, new send destination", settled, Current{Event: ev("n", "send", "send", "allow", "host:paste.example"), PrevTool: "search"}, true},
		// An agent that goes somewhere new every session is not unlike
		// itself when it does, exposed or not.
		{"exploring agent, new host", explorer, Current{Event: newHost, PrevTool: "search"}, false},
		{"exploring agent, new host after reading a secret", explorer, Current{Event: newHost, PrevTool: "search", Exposure: exposed}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.Assess(tc.p, tc.cur)
			if r.UnlikeSelf != tc.unlikeSelf || len(r.FirstSeen) == 0 {
				t.Fatalf("unlike self %v, want %v: score %.2f %v (first seen %v)", r.UnlikeSelf, tc.unlikeSelf, r.Score, r.Reasons, r.FirstSeen)
			}
		})
	}
}

// TestNewInVersion: a destination a new version brought stays unusual while
// the version is young, and only for that version.
func TestNewInVersion(t *testing.T) {
	c := cfg(t)
	p := NewProfile("mailer", "")
	p.AddVersion("v1")
	ordinary(c, p, "a", 24)
	p.AddVersion("v2")
	p.Learn(c, ev("b-0", "send_mail", "send", "allow", "recipient:drop@evil.example"), t0)
	ordinary(c, p, "b", 3)
	cur := Current{Event: ev("b-9", "send_mail", "send", "allow", "recipient:drop@evil.example"), PrevTool: "fetch", Version: "v2"}
	r := c.Assess(p, cur)
	if signal(r, SignalNewInVersion) == nil || !r.UnlikeSelf || len(r.FirstSeen) != 0 {
		t.Fatalf("young version reusing its new recipient: %+v", r)
	}
	cur.Version = "v1"
	if r := c.Assess(p, cur); signal(r, SignalNewInVersion) != nil {
		t.Fatalf("the old version: %+v", r.Signals)
	}
	ordinary(c, p, "c", c.Lifecycle.MinSessions)
	cur.Version = "v2"
	if r := c.Assess(p, cur); signal(r, SignalNewInVersion) != nil {
		t.Fatalf("a version past the monitoring minimum: %+v", r.Signals)
	}
}

// TestNewInVersionHabit: a new version going back, in another session, to
// a host it first used since the change is a habit it brought; using it
// twice in one session is one exploration.
func TestNewInVersionHabit(t *testing.T) {
	c := cfg(t)
	p := NewProfile("researcher", "")
	p.AddVersion("v1")
	ordinary(c, p, "a", 24)
	p.AddVersion("v2")
	p.Learn(c, ev("b-0", "fetch", "fetch", "allow", "host:paste.example"), t0)
	ordinary(c, p, "b", 3)
	again := Current{Event: ev("b-0", "fetch", "fetch", "allow", "host:paste.example"), PrevTool: "fetch", Version: "v2"}
	if r := c.Assess(p, again); signal(r, SignalNewInVersion) != nil || r.UnlikeSelf {
		t.Fatalf("the same session going back: %+v", r.Signals)
	}
	again.Event.Session = "b-9"
	if r := c.Assess(p, again); signal(r, SignalNewInVersion) == nil || !r.UnlikeSelf {
		t.Fatalf("another session going back: %+v", r.Signals)
	}
}

// TestRareToolCountsOnce: a rarely used tool makes its transitions rare too;
// the call counts it once and is not unlike itself for it alone.
func TestRareToolCountsOnce(t *testing.T) {
	c := cfg(t)
	p := NewProfile("mailer", "")
	ordinary(c, p, "s", 40)
	r := c.Assess(p, Current{Event: ev("n", "archive", "write", "allow"), PrevTool: "fetch"})
	if signal(r, SignalRareTool) == nil || signal(r, SignalRareTransition) != nil || r.UnlikeSelf {
		t.Fatalf("a rare tool: %+v", r.Signals)
	}
}

// TestCompareClusteredSessions: an agent whose sessions come in types (a
// triage session mostly reads, a reply session mostly sends, a research
// one mostly fetches) shows a large plug-in divergence between two small
// samples of the very same behaviour — the mix of session types differs
// by chance. The permutation null must keep that stable, and a version
// that really changed its mix must still drift.
func TestCompareClusteredSessions(t *testing.T) {
	c := cfg(t)
	type call struct{ tool, kind, dest string }
	types := [][]call{
		{{"read_inbox", "read", ""}, {"read_mail", "read", ""}, {"read_mail", "read", ""}, {"label", "write", ""}},
		{{"read_inbox", "read", ""}, {"send_mail", "send", "recipient:c0@corp.example"}, {"send_mail", "send", "recipient:c1@corp.example"}},
		{{"search", "read", ""}, {"fetch", "fetch", "host:docs.example"}, {"fetch", "fetch", "host:wiki.example"}, {"fetch", "fetch", "host:docs.example"}},
	}
	gen := func(rng *rand.Rand, p *Profile, prefix string, n int, weights []int) {
		total := 0
		for _, w := range weights {
			total += w
		}
		for i := range n {
			s := fmt.Sprintf("%s-%d", prefix, i)
			x, ty := rng.IntN(total), 0
			for x >= weights[ty] {
				x -= weights[ty]
				ty++
			}
			for _, cl := range types[ty] {
				var dests []string
				if cl.dest != "" {
					dests = []string{cl.dest}
				}
				p.Learn(c, ev(s, cl.tool, cl.kind, "allow", dests...), t0)
			}
		}
	}
	for _, tc := range []struct {
		name       string
		to         []int
		maxVerdict int // at most this many of 40 trials drift (benign); at least, when changed
		drift      bool
	}{
		{"same mix", []int{1, 1, 1}, 2, false},
		{"sends became the habit", []int{1, 6, 0}, 30, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			drifts, raw := 0, 0
			defer func() { t.Logf("%d drift, %d by the plug-in divergence alone", drifts, raw) }()
			for trial := range 40 {
				a, b := NewProfile("x", fmt.Sprint("v1-", trial)), NewProfile("x", fmt.Sprint("v2-", trial))
				gen(rng, a, "a", 12, []int{1, 1, 1})
				gen(rng, b, "b", 10+trial%8, tc.to)
				d := c.Compare(a, b)
				if d.Verdict == VerdictDrift {
					drifts++
				}
				if d.Divergence >= c.Drift.Divergence {
					raw++
				}
				if trial < 3 {
					t.Logf("trial %d: %s divergence %.3f null %.3f p %.3f %v", trial, d.Verdict, d.Divergence, d.DivergenceNull, d.DivergencePValue, d.Reasons)
				}
			}
			if tc.drift && drifts < tc.maxVerdict || !tc.drift && drifts > tc.maxVerdict {
				t.Fatalf("%d of 40 version pairs called drift", drifts)
			}
		})
	}
}
