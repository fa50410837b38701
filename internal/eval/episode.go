package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/mandate"
	"github.com/mandate-dev/mandate/internal/store"
)

// Label is the grader's verdict on a call: what a careful human assistant
// would do. The engine never sees it.
type Label string

// The labels. Unscored is JSON null: the call is context only.
const (
	LabelAllow Label = "allow"
	LabelBlock Label = "block"
	Unscored   Label = ""
)

// String returns the label as it is written in a scenario file.
func (l Label) String() string {
	if l == Unscored {
		return "null"
	}
	return string(l)
}

// Episode is one scenario line: a user's task, the agent and its tools, and
// the calls the agent made, each labelled by a person.
//
// Only ID, Category, the grader's labels and Source are the harness's own;
// everything else is what a live surface would hand the engine.
type Episode struct {
	ID string
	// Category is "<area>/benign" or "<area>/harmful".
	Category string
	// Intent is the user's words, verbatim.
	Intent string
	// Mandate is a structured grant given instead of, or beside, Intent.
	Mandate    *mandate.Mandate
	Agent      Agent
	Tools      []action.ToolDef
	WorkingDir string
	Subagents  []Subagent
	Calls      []Call
	// Source is where the episode was read from.
	Source Position
}

// Area is the category's first part ("email" for "email/harmful").
func (e *Episode) Area() string {
	area, _, _ := strings.Cut(e.Category, "/")
	return area
}

// Agent is the agent's identity and version fingerprint: an episode's
// "agent" object is the one a session records.
type Agent = store.Agent

// Subagent is a child agent the episode's agent launched, with the prompt it
// was given.
type Subagent struct {
	Name   string `json:"name"`
	Intent string `json:"intent"`
}

// Call is one tool call with what the tool returned and the grader's label.
type Call struct {
	Tool string
	// Args is the arguments object as written ("{}" when absent or null).
	Args json.RawMessage
	// Output is the tool's result as JSON, or nil when the episode gives
	// none (or null): then there is nothing to observe.
	Output json.RawMessage
	// Subagent names the sub-agent that made the call; "" is the episode's
	// own agent.
	Subagent string
	Label    Label
	// Why is the grader's one-line reason.
	Why string
}

// Position is a line in a scenario file.
type Position struct {
	File string `json:"file"`
	Line int    `json:"line"`
}

func (p Position) String() string { return fmt.Sprintf("%s:%d", p.File, p.Line) }

// LineError is a scenario line that could not be used.
type LineError struct {
	Position
	Err error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s: %v", e.Position, e.Err) }

func (e *LineError) Unwrap() error { return e.Err }

// The wire shapes. Fields the harness does not know (meta, notes, anything
// a writer adds) are ignored; meta is not even decoded, so nothing of it can
// reach the engine.
type (
	wireEpisode struct {
		ID        *string         `json:"id"`
		Category  *string         `json:"category"`
		Intent    *string         `json:"intent"`
		Mandate   json.RawMessage `json:"mandate"`
		Agent     *Agent          `json:"agent"`
		Tools     []wireTool      `json:"tools"`
		Context   *wireContext    `json:"context"`
		Subagents []Subagent      `json:"subagents"`
		Calls     []wireCall      `json:"calls"`
	}
	wireTool struct {
		Name        string              `json:"name"`
		Title       string              `json:"title"`
		Description string              `json:"description"`
		InputSchema json.RawMessage     `json:"inputSchema"`
		Parameters  json.RawMessage     `json:"parameters"`
		Annotations *action.Annotations `json:"annotations"`
	}
	wireContext struct {
		WorkingDirectory string `json:"working_directory"`
	}
	wireCall struct {
		Tool     *string         `json:"tool"`
		Args     json.RawMessage `json:"args"`
		Output   json.RawMessage `json:"output"`
		Subagent string          `json:"subagent"`
		Label    json.RawMessage `json:"label"`
		Why      string          `json:"why"`
	}
)

// MaxLine is the longest scenario line accepted.
const MaxLine = 8 << 20

// Decode parses one scenario line into an episode and checks it is usable:
// every field the replay needs is present and well-formed, every call is
// labelled allow, block or null, and every sub-agent a call names is
// declared. Unknown fields are ignored.
func Decode(line []byte) (*Episode, error) {
	var w wireEpisode
	if err := decodeLine(line, &w, "episode"); err != nil {
		return nil, err
	}
	return w.episode()
}

// decodeLine decodes one corpus line, a single JSON object (an "episode",
// a "case"), into w.
func decodeLine(line []byte, w any, what string) error {
	if len(line) > MaxLine {
		return fmt.Errorf("line is %d bytes, over the %d-byte limit", len(line), MaxLine)
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(w); err != nil {
		return describeJSONError(err)
	}
	switch _, err := dec.Token(); {
	case err == nil:
		return fmt.Errorf("text after the %s object; one %s a line", what, what)
	case !errors.Is(err, io.EOF):
		return describeJSONError(err)
	}
	return nil
}

func describeJSONError(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("invalid JSON at byte %d: %v", se.Offset, se)
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			return fmt.Errorf("an episode is a JSON object, not %s", te.Value)
		}
		return fmt.Errorf("%s: want %s, got %s", field, jsonType(te.Type.Kind().String()), te.Value)
	case errors.Is(err, io.EOF):
		return errors.New("empty line")
	}
	return fmt.Errorf("invalid JSON: %v", err)
}

func jsonType(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "slice":
		return "an array"
	case "struct", "map", "ptr":
		return "an object"
	case "bool":
		return "true or false"
	}
	return goKind
}

func (w *wireEpisode) episode() (*Episode, error) {
	e := &Episode{}
	switch {
	case w.ID == nil || strings.TrimSpace(*w.ID) == "":
		return nil, errors.New("id is required")
	case w.Category == nil:
		return nil, errors.New("category is required")
	case w.Agent == nil || strings.TrimSpace(w.Agent.ID) == "":
		return nil, errors.New("agent.id is required")
	case len(w.Calls) == 0:
		return nil, errors.New("calls: an episode needs at least one call")
	}
	e.ID, e.Category, e.Agent = *w.ID, *w.Category, *w.Agent
	if err := checkCategory(e.Category); err != nil {
		return nil, err
	}
	if w.Intent != nil {
		e.Intent = *w.Intent
	}
	if len(w.Mandate) > 0 && !isNull(w.Mandate) {
		m, err := mandate.Parse(w.Mandate)
		if err != nil {
			return nil, err
		}
		e.Mandate = m
	}
	if strings.TrimSpace(e.Intent) == "" && e.Mandate == nil {
		return nil, errors.New("intent is required (the user's words), unless a mandate is given")
	}
	if w.Context != nil && w.Context.WorkingDirectory != "" {
		if !filepath.IsAbs(w.Context.WorkingDirectory) {
			return nil, fmt.Errorf("context.working_directory %q must be an absolute path", w.Context.WorkingDirectory)
		}
		e.WorkingDir = w.Context.WorkingDirectory
	}
	for i, t := range w.Tools {
		if strings.TrimSpace(t.Name) == "" {
			return nil, fmt.Errorf("tools[%d]: name is required", i)
		}
		schema := t.InputSchema
		if len(schema) == 0 || isNull(schema) {
			schema = t.Parameters
		}
		td := action.ToolDef{Name: t.Name, Title: t.Title, Description: t.Description, Annotations: t.Annotations}
		if len(schema) > 0 && !isNull(schema) {
			var s any
			if err := json.Unmarshal(schema, &s); err != nil {
				return nil, fmt.Errorf("tools[%d] (%s): inputSchema: %v", i, t.Name, err)
			}
			td.InputSchema = s
		}
		e.Tools = append(e.Tools, td)
	}
	names := map[string]bool{}
	for i, s := range w.Subagents {
		switch {
		case strings.TrimSpace(s.Name) == "":
			return nil, fmt.Errorf("subagents[%d]: name is required", i)
		case names[s.Name]:
			return nil, fmt.Errorf("subagents[%d]: %q is declared twice", i, s.Name)
		case strings.TrimSpace(s.Intent) == "":
			return nil, fmt.Errorf("subagents[%d] (%s): intent is required (the prompt it was given)", i, s.Name)
		}
		names[s.Name] = true
	}
	e.Subagents = w.Subagents
	for i, c := range w.Calls {
		call, err := c.call(names)
		if err != nil {
			return nil, fmt.Errorf("calls[%d]: %w", i, err)
		}
		e.Calls = append(e.Calls, call)
	}
	return e, nil
}

func checkCategory(c string) error {
	area, kind, ok := strings.Cut(c, "/")
	if !ok || strings.TrimSpace(area) == "" || (kind != "benign" && kind != "harmful") {
		return fmt.Errorf("category %q: want <area>/benign or <area>/harmful", c)
	}
	return nil
}

func (c *wireCall) call(subagents map[string]bool) (Call, error) {
	var out Call
	if c.Tool == nil || strings.TrimSpace(*c.Tool) == "" {
		return out, errors.New("tool is required")
	}
	out.Tool = *c.Tool
	switch {
	case len(c.Args) == 0 || isNull(c.Args):
		out.Args = json.RawMessage("{}")
	case c.Args[0] != '{':
		return out, errors.New("args must be a JSON object")
	default:
		out.Args = c.Args
	}
	if len(c.Output) > 0 && !isNull(c.Output) {
		out.Output = c.Output
	}
	if c.Subagent != "" && !subagents[c.Subagent] {
		return out, fmt.Errorf("subagent %q is not declared in subagents", c.Subagent)
	}
	out.Subagent = c.Subagent
	if len(c.Label) == 0 {
		return out, errors.New(`label is required: "allow", "block" or null`)
	}
	if !isNull(c.Label) {
		var s string
		if err := json.Unmarshal(c.Label, &s); err != nil || (s != "allow" && s != "block") {
			return out, fmt.Errorf(`label %s: want "allow", "block" or null`, c.Label)
		}
		out.Label = Label(s)
	}
	out.Why = c.Why
	return out, nil
}

// isNull reports whether raw (as the decoder left it: no surrounding
// space) is JSON null.
func isNull(raw json.RawMessage) bool { return string(raw) == "null" }
