package api

import (
	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/baseline"
	"github.com/mandate-dev/mandate/internal/mandate"
	"github.com/mandate-dev/mandate/internal/store"
)

// Records served as they are made or stored. Each is declared once, in the
// package that makes it; the aliases let a client name them.
type (
	// Agent is an agent's identity and version fingerprint.
	Agent = store.Agent
	// Session is a session as stored: agent, status, counters, tools.
	Session = store.Session
	// Counters are a session's running totals.
	Counters = store.Counters
	// MandateVersion is one stored version of a session's mandate.
	MandateVersion = store.MandateVersion
	// DecisionRecord is a decided call as stored: the call, its action and
	// the verdict.
	DecisionRecord = store.Decision
	// Provenance is one of a decided call's values and where it first
	// came from: origin user, mandate, output, call or unknown; trust user,
	// own or open; injected; the observation and decision of the output.
	Provenance = store.Provenance
	// Observation is a tool's result as recorded; a gap when the call ran
	// without Mandate's allow.
	Observation = store.Observation
	// Token is an API credential as listed (never its secret or hash).
	Token = store.Token
	// ToolPin is a tool's definition as first listed in a session.
	ToolPin = store.ToolPin
	// ToolChange is a listing of a pinned tool whose definition differed.
	ToolChange = store.ToolChange

	// Mandate is one version of a session's grant: the user's words and
	// what they allow, deny and scope.
	Mandate = mandate.Mandate
	// Recognition is one thing the compiler understood in the user's words.
	Recognition = mandate.Recognition
	// Unrecognised is a phrase of the user's words the compiler did not
	// use, its clause, and what the draft did without it.
	Unrecognised = mandate.Unrecognised

	// Action is what a call really does, as classified.
	Action = action.Action
	// Kind is a kind of action: read, fetch, write, execute, delegate,
	// credential, delete, send, pay or unknown.
	Kind = action.Kind
	// ToolDef is a tool definition as MCP tools/list returns it.
	ToolDef = action.ToolDef
	// ToolAnnotations are a tool's MCP annotations (hints, not facts).
	ToolAnnotations = action.Annotations

	// Signal is one comparison of a call with its agent's baseline:
	// baseline.state, baseline.first_seen, baseline.rare_tool,
	// baseline.rare_transition, baseline.rate or baseline.score.
	Signal = baseline.Signal
)

// Session lifecycle states.
const (
	StatusActive     = store.StatusActive
	StatusIdle       = store.StatusIdle
	StatusCompleted  = store.StatusCompleted
	StatusSuspended  = store.StatusSuspended
	StatusTerminated = store.StatusTerminated
)
