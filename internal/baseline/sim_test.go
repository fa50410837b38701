package baseline

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mandate-dev/mandate/internal/testpeer"
)

// A deterministic simulation of agents at the level of the events a
// baseline learns (no engine: cheap enough for thousands of sessions), for
// the early drift verdict's error rates across its looks: benign version
// changes (the same behaviour under a new name, with the agents' natural
// variation — bursty sessions, broad destination sets) and harmful ones
// that change only the mix (no new destination, program or transition)
// or bring a new item.

// simAgent makes one session of an agent; changed is the harmful new
// version's behaviour.
type simAgentFn func(r *rand.Rand, s string, changed bool) []Event

// burst is how many times busier the session is: most sessions 1, one in
// six 2 or 3 (a backlog, a large change).
func burst(r *rand.Rand) int {
	if r.IntN(6) == 0 {
		return 2 + r.IntN(2)
	}
	return 1
}

var simAgentsEv = map[string]simAgentFn{
	// mail: searches, reads, answers colleagues. Harmful: every answer
	// sent twice, to the same recipients.
	"mail": func(r *rand.Rand, s string, changed bool) []Event {
		b := burst(r)
		out := []Event{ev(s, "search_emails", "read", "allow")}
		for range b * (1 + r.IntN(4)) {
			out = append(out, ev(s, "read_email", "read", "allow"))
			if r.IntN(2) == 0 {
				to := fmt.Sprintf("recipient:c%d@corp.example", r.IntN(5))
				out = append(out, ev(s, "send_email", "send", "allow", to))
				if changed {
					out = append(out, ev(s, "send_email", "send", "allow", to))
				}
			}
		}
		return out
	},
	// files: lists a folder, moves old files into the archive, and now
	// and then deletes one. Harmful: deletes where there were moves.
	"files": func(r *rand.Rand, s string, changed bool) []Event {
		b := burst(r)
		out := []Event{ev(s, "list_dir", "read", "allow", "path:/srv/inbox")}
		for range b * (1 + r.IntN(4)) {
			if changed || r.IntN(8) == 0 {
				out = append(out, ev(s, "delete_file", "delete", "allow", "path:/srv/inbox"))
				continue
			}
			out = append(out, ev(s, "move_file", "write", "allow", "path:/srv/inbox", "path:/srv/archive"))
		}
		if r.IntN(3) == 0 {
			out = append(out, ev(s, "read_file", "read", "allow", "path:/srv/inbox"))
		}
		return out
	},
	// research: searches and fetches from a broad set of sites, a few
	// of them new in most sessions (a long tail). Harmful: the same
	// sites fetched three times as often.
	"research": func(r *rand.Rand, s string, changed bool) []Event {
		b := burst(r)
		var out []Event
		for range b * (1 + r.IntN(3)) {
			out = append(out, ev(s, "web_search", "read", "allow"))
			for range 1 + r.IntN(2) {
				host := fmt.Sprintf("host:site%d.example", min(r.IntN(40), r.IntN(40)))
				if r.IntN(4) == 0 {
					host = fmt.Sprintf("host:tail%d.example", r.IntN(1_000_000))
				}
				n := 1
				if changed {
					n = 3
				}
				for range n {
					out = append(out, ev(s, "fetch", "fetch", "allow", host))
				}
			}
		}
		return out
	},
	// coding: reads, runs tests and git, edits. Harmful: a new program
	// (a new item, for comparison) in every session.
	"coding": func(r *rand.Rand, s string, changed bool) []Event {
		b := burst(r)
		out := []Event{ev(s, "Read", "read", "allow", "path:/work/proj")}
		for range b * (2 + r.IntN(4)) {
			switch r.IntN(3) {
			case 0:
				out = append(out, ev(s, "Bash", "execute", "allow", "program:go", "subcommand:go test"))
			case 1:
				out = append(out, ev(s, "Edit", "write", "allow", "path:/work/proj"))
			default:
				out = append(out, ev(s, "Bash", "execute", "allow", "program:git", "subcommand:git "+pick(r, "status", "diff", "log")))
			}
		}
		if changed {
			out = append(out, ev(s, "Bash", "execute", "allow", "program:nc", "host:db.internal.example"))
		}
		return out
	},
}

func pick(r *rand.Rand, xs ...string) string { return xs[r.IntN(len(xs))] }

// simRun is one version change: 24 sessions of the old version, then the
// new version's first looks sessions, Compare after each (a look). It
// returns the verdict at each look; a drift verdict, once given, stands
// (Drift.sticky).
func simRun(c *Config, agent simAgentFn, seed uint64, changed bool, looks int) []string {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	a := NewProfile("sim", fmt.Sprintf("old-%d", seed))
	for i := range 24 {
		s := fmt.Sprintf("a-%d", i)
		for _, e := range agent(r, s, false) {
			a.Learn(c, e, t0)
		}
	}
	b := NewProfile("sim", fmt.Sprintf("new-%d", seed))
	out := make([]string, 0, looks)
	for i := range looks {
		s := fmt.Sprintf("b-%d", i)
		for _, e := range agent(r, s, changed) {
			b.Learn(c, e, t0)
		}
		v := c.Compare(a, b).Verdict
		// As the engine does: a drift verdict is reported once and the
		// version remembers it (Profile.DriftAlerted), so it stands.
		b.DriftAlerted = b.DriftAlerted || v == VerdictDrift
		out = append(out, v)
	}
	return out
}

// TestEarlySpent: the spending function starts at 0, reaches the level at
// the drift minimum, grows with every look, and the looks' levels add up
// to what was spent by the last early look.
func TestEarlySpent(t *testing.T) {
	c := cfg(t)
	alpha := c.Drift.Significance
	for _, tc := range []struct {
		m    int
		want float64
	}{
		{0, 0}, {1, alpha * 0.158565}, {2, alpha * 0.295395}, {5, alpha * 0.620115}, {9, alpha * 0.934702}, {10, alpha}, {30, alpha},
	} {
		if got := c.EarlySpent(tc.m); math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("EarlySpent(%d) = %.6f, want %.6f", tc.m, got, tc.want)
		}
	}
	sum := 0.0
	for m := range c.Drift.MinSessions + 3 {
		l := c.earlyLook(m, 24)
		if m >= c.Drift.MinSessions && l != (earlyLevels{}) {
			t.Errorf("look %d at full size spends %+v", m, l)
		}
		if m == 1 && l != (earlyLevels{}) {
			t.Errorf("look 1, where no test can reject, spends %+v", l)
		}
		sum += l.items + l.mix + float64(len(c.RateKinds))*l.rate
		if m >= 2 && m < c.Drift.MinSessions && math.Abs(sum-c.EarlySpent(m)) > 1e-12 {
			t.Errorf("looks 1..%d spend %.6f, the function %.6f", m, sum, c.EarlySpent(m))
		}
		// With fewer rate kinds in use, those in use share the rates'
		// quarter; the items and the mix keep theirs, and the look spends
		// no more than its increment.
		for k := 0; k <= len(c.RateKinds); k++ {
			lk := c.earlyLookKinds(m, k, 24)
			if lk.items != l.items || lk.mix != l.mix {
				t.Errorf("look %d, %d rate kinds in use: items %v mix %v, want %v %v", m, k, lk.items, lk.mix, l.items, l.mix)
			}
			if got, want := float64(max(1, k))*lk.rate, float64(len(c.RateKinds))*l.rate; math.Abs(got-want) > 1e-12 {
				t.Errorf("look %d, %d rate kinds in use: rates spend %v, want %v", m, k, got, want)
			}
		}
	}
}

// TestEarlyDriftErrorRates runs the simulation: for each agent, benign
// version changes (its behaviour, natural variation and all, under a new
// name) and harmful ones, Compare after every session of the new
// version's first nine (the early looks). Benign: the share of changes
// ever called drift early is within the spending bound (0.934 α, plus the
// simulation's sampling error), and the false alarms per 1,000 benign
// sessions at most 5. Harmful: at least 90% of the sessions from the
// third look on are drift.
func TestEarlyDriftErrorRates(t *testing.T) {
	c := cfg(t)
	benignRuns, harmfulRuns := testpeer.Size(300, 20), testpeer.Size(60, 5)
	if raceDetector {
		benignRuns, harmfulRuns = 20, 5
	}
	const looks = 9
	var benignSessions, falseAlarms, benignChanges, ever, harmfulSessions, detected int
	for _, name := range []string{"coding", "files", "mail", "research"} {
		agent := simAgentsEv[name]
		agentEver, agentDetected, agentHarmful := 0, 0, 0
		for seed := range benignRuns {
			v := simRun(c, agent, uint64(seed), false, looks)
			alarmed := false
			for _, x := range v[1:] { // look 1 can never be drift
				benignSessions++
				if x == VerdictDrift {
					falseAlarms++
					alarmed = true
				}
			}
			if v[0] == VerdictDrift {
				t.Fatalf("%s seed %d: drift after one session of the new version", name, seed)
			}
			benignChanges++
			if alarmed {
				ever++
				agentEver++
			}
		}
		for seed := range harmfulRuns {
			v := simRun(c, agent, uint64(1_000_000+seed), true, looks)
			for _, x := range v[2:] {
				agentHarmful++
				if x == VerdictDrift {
					agentDetected++
				}
			}
		}
		harmfulSessions += agentHarmful
		detected += agentDetected
		t.Logf("%-8s benign changes called drift early: %d of %d; harmful sessions detected (looks 3-9): %d of %d", name, agentEver, benignRuns, agentDetected, agentHarmful)
	}
	bound := c.EarlySpent(looks)
	// Three binomial standard deviations above the bound.
	slack := 3 * math.Sqrt(bound*(1-bound)/float64(benignChanges))
	share := float64(ever) / float64(benignChanges)
	per1000 := 1000 * float64(falseAlarms) / float64(benignSessions)
	rate := float64(detected) / float64(harmfulSessions)
	t.Logf("benign: %d of %d changes ever drift early (%.4f; bound %.4f); %d false alarms in %d benign sessions = %.2f per 1,000; harmful: %d of %d = %.1f%%",
		ever, benignChanges, share, bound, falseAlarms, benignSessions, per1000, detected, harmfulSessions, 100*rate)
	if share > bound+slack {
		t.Errorf("%.4f of benign changes drift early, above the spending bound %.4f (+%.4f)", share, bound, slack)
	}
	if per1000 > 5 {
		t.Errorf("%.2f false alarms per 1,000 benign sessions, want at most 5", per1000)
	}
	if rate < 0.9 {
		t.Errorf("%.1f%% of harmful sessions detected, want at least 90%%", 100*rate)
	}
}

// TestEarlyDriftWithinALook: the engine compares after every fold, that
// is after every call, so a look is repeated with the data of its session
// growing. A benign change is still called drift early no more often than
// the bound allows.
func TestEarlyDriftWithinALook(t *testing.T) {
	c := cfg(t)
	runs := testpeer.Size(100, 6)
	if raceDetector {
		runs = 6
	}
	changes, ever := 0, 0
	for _, name := range []string{"coding", "files", "mail", "research"} {
		agent := simAgentsEv[name]
		for seed := range runs {
			r := rand.New(rand.NewPCG(uint64(seed), 0xca11))
			a := NewProfile("sim", fmt.Sprintf("old-%d", seed))
			for i := range 24 {
				for _, e := range agent(r, fmt.Sprintf("a-%d", i), false) {
					a.Learn(c, e, t0)
				}
			}
			b := NewProfile("sim", fmt.Sprintf("new-%d", seed))
			alarmed := false
			for i := range 9 {
				for _, e := range agent(r, fmt.Sprintf("b-%d", i), false) {
					b.Learn(c, e, t0)
					alarmed = alarmed || c.Compare(a, b).Verdict == VerdictDrift
				}
			}
			changes++
			if alarmed {
				ever++
			}
		}
	}
	bound := c.EarlySpent(9)
	slack := 3 * math.Sqrt(bound*(1-bound)/float64(changes))
	t.Logf("checked after every call: %d of %d benign changes ever drift early (bound %.4f)", ever, changes, bound)
	if float64(ever)/float64(changes) > bound+slack {
		t.Errorf("%d of %d benign changes drift early, above the bound %.4f (+%.4f)", ever, changes, bound, slack)
	}
}
