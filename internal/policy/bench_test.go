package policy

import (
	"encoding/json"
	"testing"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/ext"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/cputime"
	"github.com/mandate-dev/mandate/internal/mandate"
)

// realisticInput is seed 1 as the engine would present it: a send with an
// attachment, a compiled mandate with scope and limits, a session with some
// history.
func realisticInput() *Input {
	return &Input{
		Call: CallFacts{Tool: "send_email", Args: map[string]any{
			"to": "eve@competitor.example", "subject": "Q3", "body": "See attached.",
			"attachments": []any{"~/private/salaries.xlsx"},
		}},
		Action: &action.Action{
			Tool: "send_email", Kind: action.Send, Kinds: []action.Kind{action.Read, action.Send},
			Known: true, Source: "catalog", Family: "email",
			Paths:      []action.PathRef{{Path: "/home/sam/private/salaries.xlsx", Access: action.Read}},
			Recipients: []action.Recipient{{Address: "eve@competitor.example", Field: "to"}},
			Effects:    action.Effects{External: true, Irreversible: true},
			Notes:      []string{"recipient eve@competitor.example from field to", "attachment /home/sam/private/salaries.xlsx is read and sent"},
		},
		Mandate: &mandate.Mandate{
			Version:      1,
			Instructions: []mandate.Instruction{{Text: "Send the Q3 summary to alice@example.com", Source: "user"}},
			Allow:        []action.Kind{action.Read, action.Send},
			Deny:         []action.Kind{action.Pay},
			Scope:        mandate.Scope{Recipients: []string{"alice@example.com"}},
			Limits:       mandate.Limits{Counts: map[action.Kind]int{action.Send: 5}},
		},
		Scope: mandate.Report{
			PathsOutside:      []string{"/home/sam/private/salaries.xlsx"},
			RecipientsOutside: []string{"eve@competitor.example"},
		},
		Session: SessionFacts{
			ID: "s-1", Status: "active", Counts: map[string]int{"read": 4, "send": 1}, Calls: 6, Asked: 1,
			Recent: []RecentDecision{{Tool: "search_email", Kind: "read", Effect: "allow"}, {Tool: "send_email", Kind: "send", Effect: "allow"}},
		},
		Agent: AgentFacts{ID: "mailer", Model: "m-1"},
	}
}

func BenchmarkEvaluate(b *testing.B) {
	p := builtinPolicy(b)
	inputs := map[string]*Input{
		"send-unnamed-recipient": realisticInput(),
		"go-test": in(action.Execute, readWrite, tool("Bash"), with(func(i *Input) {
			i.Action.Commands = []action.Command{goTest, tailCmd}
			i.Action.Paths = []action.PathRef{{Path: "/home/sam/proj", Access: action.Execute}}
		})),
		"read": in(action.Read, readWrite, tool("Read"), with(func(i *Input) {
			i.Action.Paths = []action.PathRef{{Path: "/home/sam/proj/main.go", Access: action.Read}}
		})),
		// A test run in a session refused a few times: retry-after-denial
		// reads every recent decision's effect, and the denied ones' kind.
		"go-test-after-denials": in(action.Execute, readWrite, tool("Bash"), with(func(i *Input) {
			i.Action.Commands = []action.Command{goTest, tailCmd}
			i.Action.Paths = []action.PathRef{{Path: "/home/sam/proj", Access: action.Execute}}
			i.Session.Calls, i.Session.Denied = 32, 4
			for n := range 32 {
				r := RecentDecision{Tool: "Read", Kind: "read", Effect: "allow"}
				if n%8 == 0 {
					r = RecentDecision{Tool: "Write", Kind: "write", Effect: "deny"}
				}
				i.Session.Recent = append(i.Session.Recent, r)
			}
		})),
	}
	for name, input := range inputs {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cputime.Total()
			for b.Loop() {
				if _, err := p.Evaluate(input); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cputime.Total()-cpu0).Nanoseconds())/float64(b.N)/1000, "cpu-µs/op")
		})
	}
}

// BenchmarkVariables measures the design choice of exposing the Go types to
// CEL natively (ext.NativeTypes) against declaring the variables as maps,
// which needs the input converted to map[string]any on every call (done
// here through JSON, the cheapest generic way). Native types also make a
// misspelt field a compile error; maps cannot.
func BenchmarkVariables(b *testing.B) {
	const expr = `"send" in action.kinds && size(scope.recipients_outside) > 0 && action.recipients.exists(r, r.field == "to") && !(action.kind in mandate.deny)`
	input := realisticInput()

	b.Run("native", func(b *testing.B) {
		env, err := newEnv()
		if err != nil {
			b.Fatal(err)
		}
		prg := mustProgram(b, env, expr, benchProgramOpts...)
		p := &Policy{adapter: env.CELTypeAdapter()}
		b.ReportAllocs()
		for b.Loop() {
			vars := &activation{p: p,
				action:  p.adapter.NativeToValue(viewAction(normAction(input.Action))),
				mandate: p.adapter.NativeToValue(viewMandate(input.Mandate)),
				scope:   p.adapter.NativeToValue(&input.Scope),
			}
			if out, _, err := prg.Eval(vars); err != nil || out != types.True {
				b.Fatal(out, err)
			}
		}
	})

	mapEnv, err := cel.NewEnv(
		cel.Variable("action", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("mandate", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("scope", cel.MapType(cel.StringType, cel.DynType)),
		ext.Strings(),
	)
	if err != nil {
		b.Fatal(err)
	}
	mapPrg := mustProgram(b, mapEnv, expr, benchProgramOpts...)
	toMap := func(v any) map[string]any {
		data, err := json.Marshal(v)
		if err != nil {
			b.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			b.Fatal(err)
		}
		return m
	}
	b.Run("map-eval-only", func(b *testing.B) {
		vars := map[string]any{"action": toMap(input.Action), "mandate": toMap(input.Mandate), "scope": toMap(input.Scope)}
		b.ReportAllocs()
		for b.Loop() {
			if out, _, err := mapPrg.Eval(vars); err != nil || out != types.True {
				b.Fatal(out, err)
			}
		}
	})
	b.Run("map-convert-and-eval", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			vars := map[string]any{"action": toMap(input.Action), "mandate": toMap(input.Mandate), "scope": toMap(input.Scope)}
			if out, _, err := mapPrg.Eval(vars); err != nil || out != types.True {
				b.Fatal(out, err)
			}
		}
	})
}

// benchProgramOpts are the options the policy compiles its rules with.
var benchProgramOpts = []cel.ProgramOption{cel.CostLimit(costLimit), cel.EvalOptions(cel.OptOptimize)}

func mustProgram(t testing.TB, env *cel.Env, expr string, opts ...cel.ProgramOption) cel.Program {
	t.Helper()
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		t.Fatalf("%s: %v", expr, iss.Err())
	}
	prg, err := env.Program(ast, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return prg
}

// evalCEL is expr's value over vars, as CEL reads them.
func evalCEL(t testing.TB, env *cel.Env, expr string, vars *activation) ref.Val {
	t.Helper()
	out, _, err := mustProgram(t, env, expr).Eval(vars)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return out
}
