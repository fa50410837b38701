package policy

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/mandate"
)

const retrySeq = `
rules:
  - name: allow-all
    when: "true"
    effect: allow
sequences:
  - name: retry
    by: session
    within: 5 calls
    steps:
      - name: denied
        when: this.targets.exists(t, t.role == "path" && t.access == "delete")
        decided: deny
      - name: again
        when: >-
          this.tool != steps.denied[0].tool
          && this.targets.exists(t, steps.denied[0].targets.exists(r, r.value == t.value))
    effect: deny
    reason: ${steps.denied[0].targets[0].value} again after decision ${steps.denied[0].decision_id} was denied
`

func TestSequenceLoadErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`sequences:
  - name: s
    effect: deny
    steps:
      - when: this.tool == "a"
      - name: two
        when: this.toool == "b"
`, `s.yaml:7:19: rule "s": step 2 (two): when: undefined field 'toool'`},
		{`sequences:
  - name: s
    effect: allow
    steps:
      - when: "true"
`, `effect "allow": a sequence denies or asks`},
		{`sequences:
  - name: s
    effect: ask
    within: soon
    steps:
      - when: "true"
`, `within: "soon": want "N calls" or a duration`},
		{`sequences:
  - name: s
    effect: ask
    steps:
      - when: "true"
        decided: deny
`, `the last step is evaluated before its call is decided`},
		{`sequences:
  - name: s
    effect: ask
    steps:
      - when: steps.x.size() > 0 && 1
`, `s.yaml:5:37: rule "s": step 1 (step1): when: expected type 'bool'`},
	} {
		_, err := compileSources([]source{{name: "s.yaml", data: []byte(tc.src)}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err = %v, want %q", err, tc.want)
		}
	}
}

// TestSequenceRetry: a delete denied, then the same path moved by another
// tool, completes the sequence before the move runs; the reason names the
// denied decision. Outside the window, or through the same tool, it does
// not fire.
func TestSequenceRetry(t *testing.T) {
	p, err := compileSources([]source{{name: "s.yaml", data: []byte(retrySeq)}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_700_000_000, 0)
	st := NewSequenceState()
	call := func(tool, path string, access action.Kind, effect Effect) Verdict {
		t.Helper()
		a := &action.Action{Tool: tool, Kind: access, Kinds: []action.Kind{access}, Paths: []action.PathRef{{Path: path, Access: access}}}
		sc := &SequenceCall{Groups: SequenceGroups{Session: st}, This: NewStepCall(a, "s1", now)}
		v, err := p.Evaluate(&Input{Action: a, Sequences: sc})
		if err != nil {
			t.Fatal(err)
		}
		if effect == "" {
			effect = v.Effect
		}
		sc.Commit("d-"+tool+"-"+path, effect, now)
		return v
	}
	call("Bash", "/w/build", action.Delete, Deny)
	if v := call("Bash", "/w/build", action.Delete, ""); v.Effect != Allow {
		t.Errorf("same tool: %+v", v)
	}
	v := call("move_file", "/w/build", action.Delete, "")
	if v.Effect != Deny || !strings.Contains(v.Reasons[0], "/w/build again after decision d-Bash-/w/build was denied") ||
		!strings.Contains(v.Reasons[0], "steps denied: d-Bash-/w/build; again: this call") {
		t.Errorf("retry: %+v", v)
	}
	for range 6 {
		call("Read", "/w/other", action.Read, "")
	}
	if v := call("unlink", "/w/build", action.Delete, ""); v.Effect != Allow {
		t.Errorf("outside the window: %+v", v)
	}
}

// TestSequenceByTreeAndCount: a counted step collects across the sessions
// of one delegation tree, and the sessions' own states do not see it.
func TestSequenceByTreeAndCount(t *testing.T) {
	src := `
rules:
  - name: allow-all
    when: "true"
    effect: allow
sequences:
  - name: many-payments
    by: tree
    within: 30m
    steps:
      - name: paid
        count: 2
        when: '"pay" in action.kinds'
      - name: third
        when: '"pay" in action.kinds'
    effect: ask
    reason: a third payment after ${steps.paid.map(s, s.session_id).join(", ")}
`
	p, err := compileSources([]source{{name: "s.yaml", data: []byte(src)}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_700_000_000, 0)
	tree := NewSequenceState()
	pay := func(session string, g SequenceGroups, at time.Time) Verdict {
		t.Helper()
		a := &action.Action{Tool: "pay_invoice", Kind: action.Pay, Kinds: []action.Kind{action.Pay}}
		sc := &SequenceCall{Groups: g, This: NewStepCall(a, session, at)}
		v, err := p.Evaluate(&Input{Action: a, Sequences: sc})
		if err != nil {
			t.Fatal(err)
		}
		sc.Commit("d-"+session+"-"+at.Format("150405"), v.Effect, at)
		return v
	}
	parent, child := NewSequenceState(), NewSequenceState()
	if v := pay("parent", SequenceGroups{Session: parent, Tree: tree}, now); v.Effect != Allow {
		t.Fatalf("first: %+v", v)
	}
	if v := pay("child", SequenceGroups{Session: child, Tree: tree}, now.Add(time.Minute)); v.Effect != Allow {
		t.Fatalf("second: %+v", v)
	}
	v := pay("child", SequenceGroups{Session: child, Tree: tree}, now.Add(2*time.Minute))
	if v.Effect != Ask || !strings.Contains(v.Reasons[0], "a third payment after parent, child") {
		t.Errorf("third in the tree: %+v", v)
	}
	// Another tree, or the same tree past the window, starts again.
	if v := pay("other", SequenceGroups{Session: NewSequenceState(), Tree: NewSequenceState()}, now.Add(3*time.Minute)); v.Effect != Allow {
		t.Errorf("another tree: %+v", v)
	}
	if v := pay("child", SequenceGroups{Session: child, Tree: tree}, now.Add(time.Hour)); v.Effect != Allow {
		t.Errorf("past the window: %+v", v)
	}
}

// TestScopeCreepPaths: reads in a sixteenth directory outside the task's
// paths are asked about; more reads in directories already seen, and reads
// inside the task's paths, do not count.
func TestScopeCreepPaths(t *testing.T) {
	p := builtinPolicy(t)
	st := NewSequenceState()
	now := time.Unix(1_700_000_000, 0)
	n := 0
	read := func(path string, outside bool) Verdict {
		t.Helper()
		a := &action.Action{Tool: "read_file", Kind: action.Read, Kinds: []action.Kind{action.Read}, Paths: []action.PathRef{{Path: path, Access: action.Read}}}
		in := &Input{Action: a, Call: CallFacts{Tool: a.Tool}, Mandate: &mandate.Mandate{}, Scope: mandate.Report{PathsOutside: []string{}}}
		if outside {
			in.Scope.PathsOutside = []string{path}
		}
		in.Sequences = &SequenceCall{Groups: SequenceGroups{Session: st}, This: NewStepCall(a, "s", now)}
		v, err := p.Evaluate(in)
		if err != nil {
			t.Fatal(err)
		}
		n++
		in.Sequences.Commit(fmt.Sprintf("d%d", n), v.Effect, now)
		return v
	}
	for i := range 15 {
		for _, f := range []string{"a.txt", "b.txt"} {
			if v := read(fmt.Sprintf("/home/u/dir%d/%s", i, f), true); slices.Contains(v.Rules, "builtin.scope-creep-paths") {
				t.Fatalf("directory %d: %v", i, v.Rules)
			}
		}
		read(fmt.Sprintf("/w/proj/pkg%d/x.go", i), false)
	}
	if v := read("/home/u/dir3/c.txt", true); slices.Contains(v.Rules, "builtin.scope-creep-paths") {
		t.Errorf("a directory already seen: %v", v.Rules)
	}
	v := read("/home/u/dir15/a.txt", true)
	if !slices.Contains(v.Rules, "builtin.scope-creep-paths") || v.Effect == Allow ||
		!strings.Contains(strings.Join(v.Reasons, " "), "read in 16 directories outside the task's paths") {
		t.Errorf("the sixteenth directory: %s %v %q", v.Effect, v.Rules, v.Reasons)
	}
}
