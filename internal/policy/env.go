package policy

import (
	"fmt"
	"reflect"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/ext"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/flow"
)

// Limits on what one rule may cost. CostLimit bounds evaluation (CEL's cost
// units are roughly one per operation or list element visited); the parser
// limits bound what a rule file can make the compiler do.
const (
	costLimit           = 100_000
	maxExpressionSize   = 8 << 10
	maxRecursionDepth   = 64
	maxInterpolations   = 16
	maxRangeSize        = 1_000
	maxStringPrecision  = 6
	maxRulesPerFile     = 10_000
	maxFileSize         = 4 << 20
	nativeStructTagName = "json"
)

// The CEL type names of the variables. ext.NativeTypes names a Go struct
// type "<package>.<Type>", so these follow from the Go types.
const (
	callType    = "policy.CallFacts"
	actionType  = "action.Action"
	mandateType = "mandate.Mandate"
	scopeType   = "mandate.Report"
	sessionType = "policy.SessionFacts"
	agentType   = "policy.AgentFacts"
	selfType    = "policy.SelfFacts"
	flowType    = "flow.Facts"
	baseType    = "policy.BaselineFacts"
)

// newEnv builds the CEL environment every rule is compiled in. Variables are
// declared with the Go types of Input's fields (for action and mandate, their
// views: the same fields with kinds as plain strings), exposed through
// ext.NativeTypes with their JSON field names, so a misspelt field
// (`action.kindz`) or a type mismatch (`action.kind == 1`) is a compile
// error at load time rather than a runtime error that silently never fires.
func newEnv() (*cel.Env, error) {
	env, err := cel.NewEnv(
		ext.NativeTypes(
			types.NativeTypeFor[callView](types.NativeTypeAlias(callType)),
			types.NativeTypeFor[actionView](types.NativeTypeAlias(actionType)),
			types.NativeTypeFor[mandateView](types.NativeTypeAlias(mandateType)),
			types.NativeTypeFor[limitsView](types.NativeTypeAlias("mandate.Limits")),
			types.NativeTypeFor[reportView](types.NativeTypeAlias(scopeType)),
			reflect.TypeFor[SessionFacts](),
			reflect.TypeFor[AgentFacts](),
			types.NativeTypeFor[selfView](types.NativeTypeAlias(selfType)),
			reflect.TypeFor[flow.Facts](),
			reflect.TypeFor[BaselineFacts](),
			reflect.TypeFor[StepCall](),
			reflect.TypeFor[StepTarget](),
			ext.ParseStructTag(nativeStructTagName),
		),
		cel.Variable("call", cel.ObjectType(callType)),
		cel.Variable("action", cel.ObjectType(actionType)),
		cel.Variable("mandate", cel.ObjectType(mandateType)),
		cel.Variable("scope", cel.ObjectType(scopeType)),
		cel.Variable("session", cel.ObjectType(sessionType)),
		cel.Variable("agent", cel.ObjectType(agentType)),
		cel.Variable("self", cel.ObjectType(selfType)),
		cel.Variable("flow", cel.ObjectType(flowType)),
		cel.Variable("baseline", cel.ObjectType(baseType)),
		cel.OptionalTypes(),
		cel.CrossTypeNumericComparisons(true),
		cel.ParserExpressionSizeLimit(maxExpressionSize),
		cel.ParserRecursionLimit(maxRecursionDepth),
		ext.Strings(ext.StringsMaxPrecision(maxStringPrecision)),
		ext.Lists(ext.ListsMaxRangeSize(maxRangeSize)),
		ext.Sets(),
		ext.Bindings(),
		ext.Math(),
		cel.Function("glob",
			cel.Overload("glob_string_string", []*cel.Type{cel.StringType, cel.StringType}, cel.BoolType,
				cel.BinaryBinding(celGlob))),
		cel.Function("host_matches",
			cel.Overload("host_matches_string_string", []*cel.Type{cel.StringType, cel.StringType}, cel.BoolType,
				cel.BinaryBinding(celHostMatches))),
		// flow.origin(v), flow.trust(v), flow.injected(v): the provenance
		// of any value, by a lookup in the session's value table.
		cel.Function("origin",
			cel.MemberOverload("flow_origin_string", []*cel.Type{cel.ObjectType(flowType), cel.StringType}, cel.StringType,
				cel.BinaryBinding(flowLookup(func(v flow.ValueFacts) ref.Val { return types.String(v.Origin) })))),
		cel.Function("trust",
			cel.MemberOverload("flow_trust_string", []*cel.Type{cel.ObjectType(flowType), cel.StringType}, cel.StringType,
				cel.BinaryBinding(flowLookup(func(v flow.ValueFacts) ref.Val { return types.String(v.Trust) })))),
		cel.Function("injected",
			cel.MemberOverload("flow_injected_string", []*cel.Type{cel.ObjectType(flowType), cel.StringType}, cel.BoolType,
				cel.BinaryBinding(flowLookup(func(v flow.ValueFacts) ref.Val { return types.Bool(v.Injected) })))),
		cel.Function("kind_rank",
			cel.Overload("kind_rank_string", []*cel.Type{cel.StringType}, cel.IntType,
				cel.UnaryBinding(celKindRank))),
	)
	if err != nil {
		return nil, fmt.Errorf("policy: building the CEL environment: %w", err)
	}
	vp, err := newViewProvider(env.CELTypeProvider(), map[string]reflect.Type{
		callType:    reflect.TypeFor[callView](),
		actionType:  reflect.TypeFor[actionView](),
		mandateType: reflect.TypeFor[mandateView](),
		scopeType:   reflect.TypeFor[reportView](),
		selfType:    reflect.TypeFor[selfView](),
	}, []reflect.Type{
		reflect.TypeFor[callView](), reflect.TypeFor[actionView](), reflect.TypeFor[mandateView](),
		reflect.TypeFor[reportView](), reflect.TypeFor[SessionFacts](), reflect.TypeFor[AgentFacts](),
		reflect.TypeFor[selfView](), reflect.TypeFor[flow.Facts](), reflect.TypeFor[BaselineFacts](),
		reflect.TypeFor[StepCall](), reflect.TypeFor[StepTarget](),
	})
	if err != nil {
		return nil, err
	}
	env, err = env.Extend(cel.CustomTypeProvider(vp))
	if err != nil {
		return nil, fmt.Errorf("policy: building the CEL environment: %w", err)
	}
	return env, nil
}

func celGlob(pattern, name ref.Val) ref.Val {
	p, ok1 := pattern.(types.String)
	n, ok2 := name.(types.String)
	if !ok1 || !ok2 {
		return types.NewErr("glob: want (string, string), got (%s, %s)", pattern.Type(), name.Type())
	}
	ok, err := globMatch(string(p), string(n))
	if err != nil {
		return types.WrapErr(err)
	}
	return types.Bool(ok)
}

func celHostMatches(pattern, host ref.Val) ref.Val {
	p, ok1 := pattern.(types.String)
	h, ok2 := host.(types.String)
	if !ok1 || !ok2 {
		return types.NewErr("host_matches: want (string, string), got (%s, %s)", pattern.Type(), host.Type())
	}
	return types.Bool(hostMatch(string(p), string(h)))
}

func celKindRank(kind ref.Val) ref.Val {
	k, ok := kind.(types.String)
	if !ok {
		return types.NewErr("kind_rank: want string, got %s", kind.Type())
	}
	return types.Int(action.Kind(k).Rank())
}

// flowLookup binds a flow member function: the value's facts, then pick.
func flowLookup(pick func(flow.ValueFacts) ref.Val) func(ref.Val, ref.Val) ref.Val {
	return func(recv, value ref.Val) ref.Val {
		f, ok := recv.Value().(*flow.Facts)
		v, ok2 := value.(types.String)
		if !ok || !ok2 {
			return types.NewErr("flow lookup: want (flow.Facts, string), got (%s, %s)", recv.Type(), value.Type())
		}
		return pick(f.Lookup(string(v)))
	}
}
