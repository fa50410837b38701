package baseline

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
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

// mailer is the built-in configuration and a profile of version v that
// learned n ordinary sessions.
func mailer(t testing.TB, v string, n int) (*Config, *Profile) {
	c := cfg(t)
	p := NewProfile("mailer", v)
	ordinary(c, p, "a", n)
	return c, p
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
	c, p := mailer(t, "", 60)
	for _, tc := range []struct {
		name       string
		cur        Current
		want       []string // signal names besides state and score
		unlikeSelf bool
	}{
		{"usual send", Current{Event: ev("n", "send_mail", "send", "allow", "recipient:c0@corp.example"), PrevTool: "fetch", PrevKind: "fetch"}, nil, false},
		{"new recipient", Current{Event: ev("n", "send_mail", "send", "allow", "recipient:drop@evil.example"), PrevTool: "fetch", PrevKind: "fetch"}, []string{SignalFirstSeen, SignalUnlikeSelf}, true},
		{"new tool", Current{Event: ev("n", "delete_all", "delete", "allow")}, []string{SignalRareTool}, false},
		{"rare transition", Current{Event: ev("n", "send_mail", "send", "allow", "recipient:c1@corp.example"), PrevTool: "read_inbox", PrevKind: "read"}, []string{SignalRareTransition}, false},
		{"rate", Current{Event: ev("n", "send_mail", "send", "allow", "recipient:c1@corp.example"), PrevTool: "send_mail", Counts: map[string]int{"send": 5}}, []string{SignalRate, SignalUnlikeSelf}, true},
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
	c, old := mailer(t, "v1", 12)
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

// BenchmarkAssessLatency is the per-call cost of the assessment on the
// decision path, as percentiles (p50-ns, p99-ns) besides the mean, with a
// realistic history: a mail agent whose profile holds 10,000 distinct
// destinations (recipients and hosts) learned over 400 sessions (the
// newest 256 kept as shapes), assessed on a mix of calls — a send to a
// known colleague, a send to a first-seen recipient after open content,
// a fetch of a known and of a new host, a rare tool. Wall-clock
// percentiles on a loaded machine are noise; allocs/op is not.
func BenchmarkAssessLatency(b *testing.B) {
	c := cfg(b)
	p := NewProfile("mailer", "")
	for i := range 10_000 {
		s := fmt.Sprint(i % 400)
		p.Learn(c, ev(s, "read_email", "read", "allow"), t0)
		if i%2 == 0 {
			p.Learn(c, ev(s, "send_email", "send", "allow", fmt.Sprintf("recipient:p%d@corp%d.example", i, i%50)), t0)
		} else {
			p.Learn(c, ev(s, "fetch", "fetch", "allow", fmt.Sprintf("host:h%d.example", i)), t0)
		}
	}
	if n := len(p.Destinations); n != 10_000 {
		b.Fatalf("%d destinations, want 10,000", n)
	}
	calls := []Current{
		{Event: ev("n", "send_email", "send", "allow", "recipient:p4@corp4.example"), PrevTool: "read_email", Counts: map[string]int{"read": 2}},
		{Event: ev("n", "send_email", "send", "allow", "recipient:eve@drop.example"), PrevTool: "read_email", Counts: map[string]int{"read": 2, "send": 1},
			Exposure: []string{"named in the body of open content"}},
		{Event: ev("n", "fetch", "fetch", "allow", "host:h17.example"), PrevTool: "send_email", Counts: map[string]int{"send": 2}},
		{Event: ev("n", "fetch", "fetch", "allow", "host:new.example", "host:h19.example"), PrevTool: "fetch", Counts: map[string]int{"fetch": 1}},
		{Event: ev("n", "delete_email", "delete", "allow"), PrevTool: "read_email", Counts: map[string]int{"read": 3}},
	}
	lat := make([]time.Duration, 0, 1<<16)
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		start := time.Now()
		c.Assess(p, calls[i%len(calls)])
		if len(lat) < cap(lat) {
			lat = append(lat, time.Since(start))
		}
		i++
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
		b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
	}
}

// BenchmarkProfileMemory reports the heap one agent's profile takes with
// 10,000 distinct destinations (bytes/agent), measured on a fixed number
// of profiles whatever b.N is (keeping one per iteration ran the machine
// out of memory at the default -benchtime); the timed loop is learning
// one such profile.
func BenchmarkProfileMemory(b *testing.B) {
	c := cfg(b)
	learn := func() *Profile {
		p := NewProfile("crawler", "")
		for i := range 10_000 {
			p.Learn(c, ev(fmt.Sprint(i%300), "fetch", "fetch", "allow", fmt.Sprintf("host:h%d.example", i)), t0)
		}
		return p
	}
	const measured = 8
	var before, after runtime.MemStats
	keep := make([]*Profile, 0, measured)
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range measured {
		keep = append(keep, learn())
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keep)
	perAgent := float64(after.HeapAlloc-before.HeapAlloc) / measured
	b.ResetTimer()
	for b.Loop() {
		learn()
	}
	b.ReportMetric(perAgent, "bytes/agent")
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
	newProgramToNewHost := ev("n", "fetch", "execute", "allow", "host:paste.example", "program:nc")
	// A read-only program is a means: it and its host are one departure.
	readOnlyToNewHost := ev("n", "fetch", "fetch", "allow", "host:paste.example", "program:dig", "subcommand:dig +short")
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
		{"settled agent, new read-only program to a new host", settled, Current{Event: readOnlyToNewHost, PrevTool: "search"}, false},
		{"settled agent, new read-only program to a new host after reading a secret", settled, Current{Event: readOnlyToNewHost, PrevTool: "search", Exposure: exposed}, true},
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

// versionChanged is an agent's profile after 24 ordinary sessions of v1
// and then, in v2, the call first and 3 ordinary sessions.
func versionChanged(t *testing.T, first Event) (*Config, *Profile) {
	c := cfg(t)
	p := NewProfile("agent", "")
	p.AddVersion("v1")
	ordinary(c, p, "a", 24)
	p.AddVersion("v2")
	p.Learn(c, first, t0)
	ordinary(c, p, "b", 3)
	return c, p
}

// TestNewInVersion: a destination a new version brought stays unusual while
// the version is young, and only for that version.
func TestNewInVersion(t *testing.T) {
	c, p := versionChanged(t, ev("b-0", "send_mail", "send", "allow", "recipient:drop@evil.example"))
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
	c, p := versionChanged(t, ev("b-0", "fetch", "fetch", "allow", "host:paste.example"))
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
	ordinary(c, p, "s", 60)
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
		{"sends became the habit", []int{1, 6, 0}, 10, true}, // 30+ at 5 % a look; 11 at FullSpent's shares
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			drifts, raw := 0, 0
			defer func() { t.Logf("%d drift, %d by the plug-in divergence alone", drifts, raw) }()
			for trial := range 40 {
				a, b := NewProfile("x", fmt.Sprint("v1-", trial)), NewProfile("x", fmt.Sprint("v2-", trial))
				gen(rng, a, "a", 12, []int{1, 1, 1})
				gen(rng, b, "b", 9, tc.to)
				d, alarmed := Drift{}, false // after each session from the 10th, as the engine does
				for j := range 1 + trial%8 {
					gen(rng, b, fmt.Sprint("c", j), 1, tc.to)
					d = c.Compare(a, b)
					alarmed = alarmed || d.Verdict == VerdictDrift
				}
				if alarmed {
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

func TestNewItemP(t *testing.T) {
	for _, tc := range []struct {
		k, m, n int
		want    float64
	}{
		{2, 2, 24, 1.0 / 325},   // C(2,2)/C(26,2)
		{2, 3, 24, 3.0 / 351},   // C(3,2)/C(27,2)
		{1, 1, 24, 1.0 / 25},    // one session: 1/(n+1)
		{2, 10, 24, 45.0 / 561}, // C(10,2)/C(34,2): 2 of 10 is chance
		{0, 5, 24, 1},
		{6, 5, 24, 1},
	} {
		if got := newItemP(tc.k, tc.m, tc.n); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("newItemP(%d, %d, %d) = %v, want %v", tc.k, tc.m, tc.n, got, tc.want)
		}
	}
}

func TestTaroneLevel(t *testing.T) {
	for _, tc := range []struct {
		ps   []float64
		want float64
	}{
		{nil, 0.05},
		{[]float64{0.003}, 0.05},
		// Items that cannot reach 0.025 do not widen the family.
		{[]float64{0.003, 0.04, 0.3, 0.9}, 0.05 / 2},
		{[]float64{0.001, 0.002, 0.003}, 0.05 / 3},
	} {
		if got := taroneLevel(tc.ps, 0.05); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("taroneLevel(%v) = %v, want %v", tc.ps, got, tc.want)
		}
	}
}

// TestCompareEarly: before the new version has its 10 sessions, a new
// reach or consequential destination it keeps using is drift once chance
// is ruled out; variety or one session is not (thin old versions:
// TestCompareShortOld); and stable always waits.
func TestCompareEarly(t *testing.T) {
	c, old := mailer(t, "v1", 24)
	_, thin := mailer(t, "v0", 6)
	// An old version that also lists files with Bash: a new program, not
	// a new tool.
	_, shell := mailer(t, "v1", 24)
	for i := range 24 {
		shell.Learn(c, ev(fmt.Sprintf("a-%d", i), "Bash", "read", "allow", "program:ls"), t0)
	}
	for _, tc := range []struct {
		name     string
		old      *Profile
		sessions int      // ordinary sessions of the new version
		uses     []string // the sessions that call tool/kind with dest
		tool     string
		kind     string
		dest     string
		verdict  string
		what     string
	}{
		{"same behaviour, 3 sessions", old, 3, nil, "", "", "", VerdictInsufficient, ""},
		{"a new program in 2 of 2 sessions", old, 2, []string{"b-0", "b-1"}, "Bash", "execute", "program:nc", VerdictDrift, "program:nc in 2 of the new version's 2 sessions"},
		// Each look spends its increment of the budget (EarlySpent): at
		// the 3rd, half of 0.006 goes to the new items, so 2 of 3 (p
		// 0.0085) waits for more sessions and 3 of 3 (p 0.0003) is drift.
		{"a new program in 2 of 3 sessions", old, 3, []string{"b-0", "b-2"}, "Bash", "execute", "program:nc", VerdictInsufficient, ""},
		{"a new program in 3 of 3 sessions", old, 3, []string{"b-0", "b-1", "b-2"}, "Bash", "execute", "program:nc", VerdictDrift, "program:nc in 3 of"},
		// A new party counts at full size whatever its p, and its
		// evidence only grows: the full-size verdict is already given.
		{"a new recipient in 2 of 3 sessions", old, 3, []string{"b-0", "b-2"}, "send_mail", "send", "recipient:drop@evil.example", VerdictDrift, "recipient:drop@evil.example in 2 of the new version's 3 sessions and none of the old one's 24: a new party"},
		{"a new recipient in 1 session", old, 3, []string{"b-1", "b-1"}, "send_mail", "send", "recipient:drop@evil.example", VerdictInsufficient, ""},
		{"a new program in 1 session", old, 3, []string{"b-1", "b-1"}, "Bash", "execute", "program:nc", VerdictInsufficient, ""},
		// 2 of 5 sessions (p 0.025) is chance, every session of the
		// first three (p 0.0003) is not.
		{"a new path in 2 of 5 sessions is variety, not early evidence", old, 5, []string{"b-0", "b-3"}, "read_file", "read", "path:/srv/notes", VerdictInsufficient, ""},
		{"a new path in 3 of 3 sessions", old, 3, []string{"b-0", "b-1", "b-2"}, "read_file", "read", "path:/srv/notes", VerdictDrift, "path:/srv/notes in 3 of the new version's 3 sessions"},
		{"a host in a domain the old version uses, 2 of 5", old, 5, []string{"b-1", "b-4"}, "fetch", "fetch", "host:api.docs.example", VerdictInsufficient, ""},
		// The same work through a tool the old version never called
		// changes no kind and reaches nowhere new: the tool is the item.
		{"a new tool in 2 of 2 sessions", old, 2, []string{"b-0", "b-1"}, "browser_navigate", "fetch", "host:docs.example", VerdictDrift, "tool:browser_navigate in 2 of the new version's 2 sessions"},
		{"a new tool in 1 session", old, 3, []string{"b-1", "b-1"}, "browser_navigate", "fetch", "host:docs.example", VerdictInsufficient, ""},
		{"a thin old version", thin, 3, []string{"b-0", "b-1", "b-2"}, "Bash", "execute", "program:nc", VerdictDrift, "program:nc in 3 of the new version's 3 sessions and none of the old one's 6 (p 0.0119"},
		// A read-only program is a means, not a new item; the same
		// program run to do something is one.
		{"a read-only program in 2 of 2 sessions", shell, 2, []string{"b-0", "b-1"}, "Bash", "fetch", "program:dig", VerdictInsufficient, ""},
		{"a program run in 2 of 2 sessions", shell, 2, []string{"b-0", "b-1"}, "Bash", "execute", "program:dig", VerdictDrift, "program:dig in 2 of the new version's 2 sessions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewProfile("mailer", "v2")
			ordinary(c, p, "b", tc.sessions)
			for _, s := range tc.uses {
				p.Learn(c, ev(s, tc.tool, tc.kind, "allow", tc.dest), t0)
			}
			d := c.Compare(tc.old, p)
			if d.Verdict != tc.verdict || !strings.Contains(strings.Join(d.Reasons, " "), tc.what) {
				t.Fatalf("verdict %s %v, want %s with %q", d.Verdict, d.Reasons, tc.verdict, tc.what)
			}
		})
	}
}

// TestCompareVarietyNeedsSignificance: at full size, a new path the new
// version used in 2 of 10 sessions is chance (p 0.19), not drift; in 8 of
// 10 (p 0.0001) it is; a new recipient counts whatever its p-value.
func TestCompareVarietyNeedsSignificance(t *testing.T) {
	c, old := mailer(t, "v1", 12)
	for _, tc := range []struct {
		sessions int
		dest     string
		verdict  string
	}{
		{2, "path:/srv/notes", VerdictStable},
		{8, "path:/srv/notes", VerdictDrift},
		{2, "recipient:drop@evil.example", VerdictDrift},
	} {
		p := NewProfile("mailer", "v2")
		ordinary(c, p, "b", 10)
		for i := range tc.sessions {
			p.Learn(c, ev(fmt.Sprint("b-", i), "tool", "read", "allow", tc.dest), t0)
		}
		if d := c.Compare(old, p); d.Verdict != tc.verdict {
			t.Errorf("%s in %d of 10 sessions: %s %v, want %s", tc.dest, tc.sessions, d.Verdict, d.Reasons, tc.verdict)
		}
	}
}

// TestRatePermutation: one very busy session among ten lifts the mean past
// the factor and the excess, and the permutation test still calls it
// chance; sends doubled in every session are a rate.
func TestRatePermutation(t *testing.T) {
	c, old := mailer(t, "v1", 12)
	for _, tc := range []struct {
		name    string
		extra   func(i int) int
		changed bool
	}{
		{"one busy session", func(i int) int {
			if i == 4 {
				return 14
			}
			return 0
		}, false},
		{"every session sends more", func(int) int { return 2 }, true},
	} {
		p := NewProfile("mailer", "v2")
		ordinary(c, p, "b", 10)
		for i := range 10 {
			for range tc.extra(i) {
				p.Learn(c, ev(fmt.Sprint("b-", i), "send_mail", "send", "allow", "recipient:c0@corp.example"), t0)
			}
		}
		if r := c.Compare(old, p).Rates["send"]; r.Changed != tc.changed {
			t.Errorf("%s: %+v, want changed %v", tc.name, r, tc.changed)
		}
	}
}

func TestRegistrable(t *testing.T) {
	c := cfg(t)
	for host, want := range map[string]string{
		"docs.python.org":         "python.org",
		"python.org":              "python.org",
		"a.b.example.co.uk":       "example.co.uk",
		"alice.github.io":         "alice.github.io",
		"x.alice.github.io":       "alice.github.io",
		"10.0.0.7":                "10.0.0.7",
		"localhost":               "localhost",
		"API.Example.COM.":        "example.com",
		"bucket.s3.amazonaws.com": "bucket.s3.amazonaws.com",
	} {
		if got := c.registrable(host); got != want {
			t.Errorf("registrable(%q) = %q, want %q", host, got, want)
		}
	}
}

// TestFamiliarDomain: a first-seen host or recipient inside a domain the
// agent already uses weighs one step less; somewhere it never went does
// not.
func TestFamiliarDomain(t *testing.T) {
	c, p := mailer(t, "", 30)
	exposed := []string{"after reading a secret"}
	for _, tc := range []struct {
		name       string
		cur        Current
		unlikeSelf bool
	}{
		{"a new colleague", Current{Event: ev("n", "send_mail", "send", "allow", "recipient:dan@corp.example"), PrevTool: "fetch"}, false},
		{"a new outside recipient", Current{Event: ev("n", "send_mail", "send", "allow", "recipient:dan@drop.example"), PrevTool: "fetch"}, true},
		{"a new page of a known site, exposed", Current{Event: ev("n", "fetch", "fetch", "allow", "host:api.docs.example"), PrevTool: "read_inbox", Exposure: exposed}, false},
		{"a new site, exposed", Current{Event: ev("n", "fetch", "fetch", "allow", "host:paste.example"), PrevTool: "read_inbox", Exposure: exposed}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.Assess(p, tc.cur)
			if r.UnlikeSelf != tc.unlikeSelf || len(r.FirstSeen) == 0 {
				t.Fatalf("unlike self %v, want %v: score %.2f %v", r.UnlikeSelf, tc.unlikeSelf, r.Score, r.Reasons)
			}
		})
	}
}

// TestRatePValue: the permutation p-value of a rate is about the exact
// one. Three sessions of ten with four more sends, against twelve of one
// send each: all three busy sessions fall in the new group by chance with
// probability C(10,3)/C(22,3) = 0.078; four of ten, C(10,4)/C(22,4) = 0.029.
func TestRatePValue(t *testing.T) {
	c, old := mailer(t, "v1", 12)
	for _, tc := range []struct {
		busy   int
		lo, hi float64
	}{{3, 0.05, 0.12}, {4, 0.01, 0.05}} {
		p := NewProfile("mailer", fmt.Sprint("v2-", tc.busy))
		ordinary(c, p, "b", 10)
		for i := range tc.busy {
			for range 4 {
				p.Learn(c, ev(fmt.Sprint("b-", i), "send_mail", "send", "allow", "recipient:c0@corp.example"), t0)
			}
		}
		diff := 4 * float64(tc.busy) / 10
		if got := c.ratePValue(old, p, "send", diff, c.Drift.Permutations); got < tc.lo || got > tc.hi {
			t.Errorf("%d busy sessions: p %.3f, want within [%.2f, %.2f]", tc.busy, got, tc.lo, tc.hi)
		}
	}
}

// TestYoungFamiliarHost: a new version going back to a new host of a site
// the agent already reads is variety, not a new reach the version brought.
func TestYoungFamiliarHost(t *testing.T) {
	c, p := versionChanged(t, ev("b-0", "fetch", "fetch", "allow", "host:api.docs.example"))
	r := c.Assess(p, Current{Event: ev("b-9", "fetch", "fetch", "allow", "host:api.docs.example"), PrevTool: "fetch", Version: "v2"})
	if signal(r, SignalNewInVersion) == nil || r.UnlikeSelf {
		t.Fatalf("a young host in a familiar domain: score %.2f %+v", r.Score, r.Signals)
	}
}

// TestCompareEarlyRate: sends tripled in each of the new version's first
// four sessions are a rate before ten sessions (the permutation test
// against the level spent over the early looks); one busy session among
// four is not.
func TestCompareEarlyRate(t *testing.T) {
	c, old := mailer(t, "v1", 24)
	for _, tc := range []struct {
		name    string
		busy    []int
		verdict string
	}{
		{"every session", []int{0, 1, 2, 3}, VerdictDrift},
		{"one busy session", []int{2}, VerdictInsufficient},
	} {
		p := NewProfile("mailer", "v2")
		ordinary(c, p, "b", 4)
		for _, i := range tc.busy {
			for range 3 {
				p.Learn(c, ev(fmt.Sprint("b-", i), "send_mail", "send", "allow", "recipient:c0@corp.example"), t0)
			}
		}
		d := c.Compare(old, p)
		wantVerdict(t, tc.name, d, tc.verdict, "send per session 1.00 → 4.00")
	}
}

// wantVerdict fails t unless d's verdict is want and, when want is
// drift, one of its reasons says reason.
func wantVerdict(t *testing.T, name string, d Drift, want, reason string) {
	t.Helper()
	if d.Verdict != want || want == VerdictDrift && !strings.Contains(strings.Join(d.Reasons, " "), reason) {
		t.Errorf("%s: %s %v, want %s", name, d.Verdict, d.Reasons, want)
	}
}

// TestReference: a version that follows a 3-session one is tested against
// it pooled with the version before it; alone, 3 sessions are too few.
func TestReference(t *testing.T) {
	c, v0 := mailer(t, "v0", 24)
	v1 := NewProfile("mailer", "v1")
	ordinary(c, v1, "m", 3)
	v2 := NewProfile("mailer", "v2")
	ordinary(c, v2, "b", 3)
	for i := range 3 {
		v2.Learn(c, ev(fmt.Sprint("b-", i), "Bash", "execute", "allow", "program:nc"), t0)
	}
	if d := c.Compare(v1, v2); d.Verdict != VerdictInsufficient {
		t.Fatalf("against 3 sessions alone: %s %v", d.Verdict, d.Reasons)
	}
	ref := c.Reference(v1, v0)
	if ref.Sessions != 27 || ref.Version != "v1" || len(ref.Shapes) != 27 || v1.Sessions != 3 {
		t.Fatalf("pool: %d sessions, version %s, %d shapes; v1 changed to %d", ref.Sessions, ref.Version, len(ref.Shapes), v1.Sessions)
	}
	d := c.Compare(ref, v2)
	if d.Verdict != VerdictDrift || d.From != "v1" || !slices.Equal(d.Reference, []string{"v1", "v0"}) {
		t.Fatalf("against the pool: %s from %s %v %v", d.Verdict, d.From, d.Reference, d.Reasons)
	}
	// What the pool already did is not new.
	v0.Learn(c, ev("a-0", "Bash", "execute", "allow", "program:nc"), t0)
	if d := c.Compare(c.Reference(v1, v0), v2); d.Verdict == VerdictDrift {
		t.Fatalf("nc known to v0: %s %v", d.Verdict, d.Reasons)
	}
	if c.Reference(v0, v1) != v0 {
		t.Fatal("a version of 24 sessions is pooled")
	}
}

// TestNewDomain: a new organisation under a different host every session
// makes no host a habit, but the domain is one.
func TestNewDomain(t *testing.T) {
	c, old := mailer(t, "v1", 24)
	// Each session as the old version's, its fetch to a host of domain.
	sessions := func(v, domain string) *Profile {
		p := NewProfile("mailer", v)
		for i := range 3 {
			s := fmt.Sprint("b-", i)
			p.Learn(c, ev(s, "read_inbox", "read", "allow"), t0)
			p.Learn(c, ev(s, "fetch", "fetch", "allow", fmt.Sprintf("host:n%d.%s", i, domain)), t0)
			p.Learn(c, ev(s, "send_mail", "send", "allow", "recipient:c0@corp.example"), t0)
		}
		return p
	}
	d := c.Compare(old, sessions("v2", "relay.example"))
	if d.Verdict != VerdictDrift || !strings.Contains(strings.Join(d.Reasons, " "), "host:*.relay.example in 3 of") {
		t.Fatalf("%s %v", d.Verdict, d.Reasons)
	}
	// New hosts of a domain the old version uses are variety.
	if d := c.Compare(old, sessions("v3", "docs.example")); d.Verdict != VerdictInsufficient {
		t.Fatalf("new hosts of a known domain: %s %v", d.Verdict, d.Reasons)
	}
}

// TestNewToolAtNewHost: a tool's first use at a host the agent never
// reached is one departure, the tool's (its destinations are new because
// it is), not two; a new tool that sends to a new recipient, or a new
// host reached with a usual tool and a new program, still is unlike
// itself.
func TestNewToolAtNewHost(t *testing.T) {
	c, p := mailer(t, "", 60) // 180 calls: a new tool weighs 0.29
	for _, tc := range []struct {
		name       string
		cur        Current
		unlikeSelf bool
	}{
		{"new tool, new documentation host", Current{Event: ev("n", "WebFetch", "fetch", "allow", "host:pkg.go.dev"), PrevTool: "read_inbox"}, false},
		{"new tool, new recipient", Current{Event: ev("n", "forward_mail", "send", "allow", "recipient:drop@evil.example"), PrevTool: "read_inbox"}, true},
		{"usual tool, new program and host", Current{Event: ev("n", "fetch", "execute", "allow", "host:drop.example", "program:nc"), PrevTool: "read_inbox"}, true},
		{"usual tool, new read-only program and host", Current{Event: ev("n", "fetch", "fetch", "allow", "host:drop.example", "program:curl"), PrevTool: "read_inbox"}, false},
	} {
		r := c.Assess(p, tc.cur)
		if r.UnlikeSelf != tc.unlikeSelf {
			t.Errorf("%s: unlike self %v (score %.2f, %v), want %v", tc.name, r.UnlikeSelf, r.Score, r.Reasons, tc.unlikeSelf)
		}
	}
}

// TestNewInVersionDomain: a new version that reaches a new organisation
// under a different host each session goes back to the organisation: the
// next host is a habit it brought, not a new page of a known site; a
// read-only program it goes back to is a means, not a habit.
func TestNewInVersionDomain(t *testing.T) {
	c, p := versionChanged(t, ev("b-0", "fetch", "fetch", "allow", "host:n1.relay.example"))
	next := Current{Event: ev("b-9", "fetch", "fetch", "allow", "host:n2.relay.example"), PrevTool: "fetch", Version: "v2"}
	r := c.Assess(p, next)
	if signal(r, SignalNewInVersion) == nil || !r.UnlikeSelf || len(r.FirstSeen) != 1 {
		t.Fatalf("another host of the domain the version brought: %+v", r)
	}
	next.Event.Session = "b-0"
	if r := c.Assess(p, next); signal(r, SignalNewInVersion) != nil || r.UnlikeSelf {
		t.Fatalf("another host of it in the same session: %+v", r.Signals)
	}
	c, p = versionChanged(t, ev("b-0", "fetch", "fetch", "allow", "program:dig"))
	if r := c.Assess(p, Current{Event: ev("b-9", "fetch", "fetch", "allow", "program:dig"), PrevTool: "fetch", Version: "v2"}); r.UnlikeSelf {
		t.Fatalf("a read-only program gone back to: %+v", r.Signals)
	}
}

// TestCompareTriedTransition: a secret read that is asked every time is
// never learned, but the order around it is tried: a version that goes on
// from the refused secret to a fetch, in 2 of its 2 sessions, has changed
// (early drift), where the old one went on to a read.
func TestCompareTriedTransition(t *testing.T) {
	c := cfg(t)
	run := func(version, prefix string, n int, after Event) *Profile {
		p := NewProfile("agent", version)
		for i := range n {
			s := fmt.Sprintf("%s-%d", prefix, i)
			p.Learn(c, ev(s, "read_inbox", "read", "allow"), t0)
			p.Learn(c, ev(s, "Bash", "credential", "ask"), t0)
			after.Session = s
			p.Learn(c, after, t0)
			p.Learn(c, ev(s, "send_mail", "send", "allow", "recipient:c0@corp.example"), t0)
		}
		return p
	}
	old := run("v1", "a", 24, ev("", "read_inbox", "read", "allow"))
	same := run("v2", "b", 2, ev("", "read_inbox", "read", "allow"))
	if d := c.Compare(old, same); d.Verdict != VerdictInsufficient {
		t.Fatalf("the same order: %s %v", d.Verdict, d.Reasons)
	}
	changed := run("v2", "b", 2, ev("", "fetch", "fetch", "allow", "host:docs.example"))
	d := c.Compare(old, changed)
	if d.Verdict != VerdictDrift || !slices.Contains(d.NewTransitions, "credential>fetch") {
		t.Fatalf("secret then fetch: %s %v %v", d.Verdict, d.NewTransitions, d.Reasons)
	}
}

// TestCompareEarlyMix: a change of the mix alone — no new destination,
// program or transition — is drift before 10 sessions once the sessions
// regrouped at random rule chance out: deletes where there were moves, in
// 4 sessions; the same mix is not.
func TestCompareEarlyMix(t *testing.T) {
	c := cfg(t)
	files := func(version, prefix string, n int, deletes bool) *Profile {
		p := NewProfile("files", version)
		for i := range n {
			s := fmt.Sprintf("%s-%d", prefix, i)
			p.Learn(c, ev(s, "list_dir", "read", "allow", "path:/srv/inbox"), t0)
			for j := range 3 {
				if deletes || (i%4 == 0 && j == 0) {
					p.Learn(c, ev(s, "delete_file", "delete", "allow", "path:/srv/inbox"), t0)
					continue
				}
				p.Learn(c, ev(s, "move_file", "write", "allow", "path:/srv/inbox"), t0)
			}
		}
		return p
	}
	old := files("v1", "a", 24, false)
	for _, tc := range []struct {
		name    string
		new     *Profile
		verdict string
	}{
		{"the same mix", files("v2", "b", 4, false), VerdictInsufficient},
		{"deletes replace moves", files("v2", "b", 4, true), VerdictDrift},
	} {
		d := c.Compare(old, tc.new)
		wantVerdict(t, tc.name, d, tc.verdict, "kind/tool divergence")
	}
}

// TestDriftSticky: a version once reported drift stays drift at a later
// look that, alone, would see too little (and says so); one never reported
// is judged by its look alone.
func TestDriftSticky(t *testing.T) {
	c, old := mailer(t, "v1", 24)
	p := NewProfile("mailer", "v2")
	ordinary(c, p, "b", 3)
	if d := c.Compare(old, p); d.Verdict != VerdictInsufficient {
		t.Fatalf("never reported: verdict %s %v, want insufficient", d.Verdict, d.Reasons)
	}
	p.DriftAlerted = true
	d := c.Compare(old, p)
	if d.Verdict != VerdictDrift || !strings.Contains(d.Reasons[0], "this look alone: insufficient") {
		t.Fatalf("reported: verdict %s %v, want drift that names this look's own verdict", d.Verdict, d.Reasons)
	}
}

// TestEarlyMixWaitsForASession: the early mix test does not take the
// newest session while it is shorter than the old version's median (it may
// be running: its first calls are not a sample of its mix, here a triage
// that reads before it answers). Five finished sessions that read a little
// more than the old version are no drift; the sixth's first calls, all
// reads, must not make them one.
func TestEarlyMixWaitsForASession(t *testing.T) {
	c := cfg(t)
	session := func(p *Profile, s string, reads, sends int) {
		for range reads {
			p.Learn(c, ev(s, "read_inbox", "read", "allow"), t0)
		}
		for i := range sends {
			p.Learn(c, ev(s, "send_mail", "send", "allow", fmt.Sprintf("recipient:c%d@corp.example", i%2)), t0)
		}
	}
	old, p := NewProfile("mailer", "v1"), NewProfile("mailer", "v2")
	for i := range 24 {
		session(old, fmt.Sprintf("a-%d", i), 4+i%2, 8-i%2)
	}
	for i := range 5 {
		session(p, fmt.Sprintf("b-%d", i), 6, 6)
	}
	if d := c.Compare(old, p); d.Verdict != VerdictInsufficient {
		t.Fatalf("five finished sessions: verdict %s %v, want insufficient", d.Verdict, d.Reasons)
	}
	session(p, "b-5", 8, 0)
	if d := c.Compare(old, p); d.Verdict != VerdictInsufficient {
		t.Fatalf("a running session's first calls: verdict %s %v, want insufficient", d.Verdict, d.Reasons)
	}
}

// TestRareNeedsAHistory: rarity is judged by the most a probability could
// be given the history (the Wilson bound), so the same new tool and the
// same new order of familiar tools are rare for an agent of 180 calls and
// not for one of 90 — a small baseline's gaps are not evidence — and a
// rare order alone is never unlike itself.
func TestRareNeedsAHistory(t *testing.T) {
	newTool := Current{Event: ev("n", "delete_all", "delete", "allow")}
	newOrder := Current{Event: ev("n", "send_mail", "send", "allow", "recipient:c1@corp.example"), PrevTool: "read_inbox", PrevKind: "read"}
	for _, tc := range []struct {
		sessions int
		rare     bool
	}{{30, false}, {60, true}, {400, true}} {
		c, p := mailer(t, "", tc.sessions)
		r := c.Assess(p, newTool)
		if (signal(r, SignalRareTool) != nil) != tc.rare {
			t.Errorf("%d calls, a new tool: rare %v (bound %.4f), want %v", p.Calls, signal(r, SignalRareTool) != nil, r.RareTool, tc.rare)
		}
		r = c.Assess(p, newOrder)
		if (signal(r, SignalRareTransition) != nil) != tc.rare || r.UnlikeSelf {
			t.Errorf("%d calls, a new order: rare %v (bound %.4f), unlike itself %v; want rare %v, never unlike itself alone", p.Calls, signal(r, SignalRareTransition) != nil, r.RareTransition, r.UnlikeSelf, tc.rare)
		}
	}
	if got := wilsonUpper(0, 100, 1.645); math.Abs(got-0.0263) > 0.0005 {
		t.Errorf("wilsonUpper(0, 100) = %.4f, want about 0.0263 (z²/(n+z²))", got)
	}
}

// TestNewMeansToAKnownEnd: a send with a new program to a host the agent
// already sends to is a new reach (not unlike itself alone); the same
// program sending to a new host is a consequential first use (unlike
// itself).
func TestNewMeansToAKnownEnd(t *testing.T) {
	c := cfg(t)
	p := NewProfile("ci", "")
	for i := range 30 {
		s := fmt.Sprintf("s-%d", i)
		p.Learn(c, ev(s, "Read", "read", "allow", "path:/work/proj"), t0)
		p.Learn(c, ev(s, "Bash", "execute", "allow", "program:go", "subcommand:go test"), t0)
		p.Learn(c, ev(s, "Bash", "send", "allow", "program:wget", "host:api.github.com"), t0)
	}
	known := c.Assess(p, Current{Event: ev("n", "Bash", "send", "allow", "program:curl", "host:api.github.com"), PrevTool: "Bash"})
	if known.UnlikeSelf || known.Score < 0.3 {
		t.Errorf("a new program posting to a known host: score %.2f %v, want a new reach (about 0.35), not unlike itself", known.Score, known.Reasons)
	}
	fresh := c.Assess(p, Current{Event: ev("n", "Bash", "send", "allow", "program:curl", "host:hooks.relay.example"), PrevTool: "Bash"})
	if !fresh.UnlikeSelf {
		t.Errorf("a new program posting to a new host: score %.2f %v, want unlike itself", fresh.Score, fresh.Reasons)
	}
}

// TestRareHour: a call at an hour the agent never works near is recorded
// as baseline.rare_hour, once enough calls have an hour; the hours next to
// its usual ones are not rare, and the score does not move.
func TestRareHour(t *testing.T) {
	c := cfg(t)
	p := NewProfile("mailer", "")
	for i := range 200 {
		e := ev(fmt.Sprintf("a-%d", i/4), "read_inbox", "read", "allow")
		e.Hour = 9 + i%8 // 09:00-16:59
		p.Learn(c, e, t0)
	}
	for _, tc := range []struct {
		hour int
		rare bool
	}{{3, true}, {23, true}, {9, false}, {17, false}, {8, false}, {18, true}, {-1, false}} {
		e := ev("b-0", "read_inbox", "read", "allow")
		e.Hour = tc.hour
		r := c.Assess(p, Current{Event: e})
		got := slices.ContainsFunc(r.Signals, func(s Signal) bool { return s.Name == SignalRareHour })
		if got != tc.rare {
			t.Errorf("hour %d: rare_hour %v, want %v (%v)", tc.hour, got, tc.rare, r.Signals)
		}
		if r.Score != 0 {
			t.Errorf("hour %d: score %v, want 0 (the hour is not weighed)", tc.hour, r.Score)
		}
	}
	small := NewProfile("mailer", "")
	for range 40 {
		e := ev("a-0", "read_inbox", "read", "allow")
		e.Hour = 9
		small.Learn(c, e, t0)
	}
	e := ev("b-0", "read_inbox", "read", "allow")
	e.Hour = 3
	if r := c.Assess(small, Current{Event: e}); slices.ContainsFunc(r.Signals, func(s Signal) bool { return s.Name == SignalRareHour }) {
		t.Errorf("40 calls cannot make an hour rare: %v", r.Signals)
	}
}
