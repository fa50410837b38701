// Package mcpgw is Mandate's MCP gateway: an MCP server that an agent's MCP
// client talks to instead of its upstream servers. It starts or dials the
// upstreams (stdio commands, Streamable HTTP endpoints), lists their tools,
// prompts and resources as its own, and puts Mandate in the tool path:
//
//   - every tools/list result is pinned with the session before the client
//     sees it, so a tool whose description or schema changes mid-session is
//     refused (and the change recorded);
//   - every tools/call is decided before it reaches an upstream: allow runs
//     it, deny returns an isError result naming the reason and decision id,
//     ask waits for a person's answer to its approval (asks.go) and runs it
//     only if it was approved;
//   - every result of a call that ran is observed with its content;
//   - Mandate unreachable or failing means the call does not run.
//
// Prompts and resources are passed through without decisions: in MCP they
// are chosen by the user and the host application, not by the model.
package mcpgw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mandate-dev/mandate/api"
	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/baseline"
	"github.com/mandate-dev/mandate/internal/engine"
)

// Separator joins an upstream's name and a tool or prompt name when the
// gateway aggregates upstreams: "filesystem.read_text_file". Upstream names
// cannot contain it, so the first one in a name always ends the upstream's.
const Separator = "."

// MetaDecision is the _meta key under which every tools/call result the
// gateway returns names its decision: {"id": …, "effect": …}.
const MetaDecision = "mandate.dev/decision"

// Defaults.
const (
	DefaultCallTimeout     = 2 * time.Minute
	DefaultMaxObserveBytes = 512 << 10
)

// SessionResolver maps an MCP request to the Mandate session it belongs to,
// creating the session when needed.
type SessionResolver interface {
	Session(ctx context.Context, req mcp.Request) (string, error)
}

// StaticSession is one Mandate session for every request: the stdio
// gateway, which serves exactly one MCP client.
type StaticSession string

// Session implements SessionResolver.
func (s StaticSession) Session(context.Context, mcp.Request) (string, error) { return string(s), nil }

// Options configure a Gateway. Upstreams, Backend and Sessions are required.
type Options struct {
	Upstreams []Upstream
	// Namespace exposes names as "upstream.name" (Separator). It is
	// required with more than one upstream; without it the gateway is
	// transparent: the client sees the upstream's own names.
	Namespace bool
	Backend   Backend
	Sessions  SessionResolver
	// Approver, if set, decides asks in place of the approval queue
	// (tests, embedders); nil: the queue (asks.go).
	Approver Approver
	// ApprovalWait is how long an ask is kept open for a person's answer
	// (0: not at all; the refusal names the approval). Elicit asks the
	// person through the client when it supports MCP elicitation.
	ApprovalWait time.Duration
	Elicit       bool
	// CallTimeout bounds a tools/call to an upstream (DefaultCallTimeout).
	CallTimeout time.Duration
	// MaxObserveBytes bounds a recorded result; larger ones are summarised
	// (DefaultMaxObserveBytes). Keep it under the engine's MaxArgsBytes.
	MaxObserveBytes int
	// ForwardClientFeatures passes the upstream's requests to the client
	// (sampling, elicitation) and its log messages, and the client's log
	// level to the upstream. Only for a gateway with a single client (stdio).
	ForwardClientFeatures bool
	// Reconnect dials an upstream again when its connection ended (serve).
	// Without it (stdio), a lost upstream ends Run, as the server itself
	// exiting would.
	Reconnect bool
	// Stderr receives stdio upstreams' stderr; nil sends it to Logger.
	Stderr  io.Writer
	Logger  *slog.Logger
	Version string
}

// Gateway is an MCP server in front of upstream MCP servers.
type Gateway struct {
	opts     Options
	log      *slog.Logger
	approver Approver
	server   *mcp.Server
	ready    atomic.Bool // server is set
	ups      []*upstream
	lost     chan error // a non-reconnecting upstream's connection ended
	// calls counts tools/call requests being handled, so that a gateway
	// ending because its upstream went away answers them first.
	calls atomic.Int64

	mu        sync.Mutex
	tools     map[string]*exposedTool
	prompts   map[string]*exposedName
	resources map[string]*upstream // uri → owner
	templates map[string]*upstream // uri template → owner
	listed    map[string]listedSession
	progress  map[string]progressRoute
	nextToken uint64
}

type exposedTool struct {
	up   *upstream
	name string // the upstream's own name
	def  *mcp.Tool
	hash string
}

type exposedName struct {
	up   *upstream
	name string
}

// listedSession is a Mandate session that was shown tools, with the
// principal it was shown them as, so a later upstream change can be pinned
// for it before any client sees it.
type listedSession struct {
	principal auth.Principal
	has       bool
}

type progressRoute struct {
	ss    *mcp.ServerSession
	token any
}

// progressGrace is how long a call's progress route outlives the call.
const progressGrace = 2 * time.Second

// maxListedSessions bounds the sessions remembered for re-pinning.
const maxListedSessions = 10000

// New connects to every upstream and builds the gateway's MCP server. It
// fails if any upstream cannot be reached: a gateway missing a server the
// user configured would silently show the agent fewer tools.
func New(ctx context.Context, opts Options) (*Gateway, error) {
	switch {
	case len(opts.Upstreams) == 0:
		return nil, errors.New("mcpgw: no upstream servers")
	case len(opts.Upstreams) > 1 && !opts.Namespace:
		return nil, errors.New("mcpgw: several upstreams need namespaced names")
	case opts.Backend == nil || opts.Sessions == nil:
		return nil, errors.New("mcpgw: Backend and Sessions are required")
	}
	for i := range opts.Upstreams {
		if err := opts.Upstreams[i].Validate(); err != nil {
			return nil, fmt.Errorf("mcpgw: %w", err)
		}
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.MaxObserveBytes <= 0 {
		opts.MaxObserveBytes = DefaultMaxObserveBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	g := &Gateway{
		opts: opts, log: opts.Logger, approver: opts.Approver,
		lost:      make(chan error, len(opts.Upstreams)),
		tools:     map[string]*exposedTool{},
		prompts:   map[string]*exposedName{},
		resources: map[string]*upstream{},
		templates: map[string]*upstream{},
		listed:    map[string]listedSession{},
		progress:  map[string]progressRoute{},
	}
	for _, cfg := range opts.Upstreams {
		u := newUpstream(g, cfg)
		g.ups = append(g.ups, u)
		if err := u.connect(ctx); err != nil {
			g.Close()
			return nil, fmt.Errorf("mcpgw: upstream %q: %w", cfg.Name, err)
		}
	}
	g.server = mcp.NewServer(&mcp.Implementation{Name: "mandate", Title: "Mandate MCP gateway", Version: opts.Version}, g.serverOptions())
	g.server.AddReceivingMiddleware(g.middleware)
	g.ready.Store(true)
	for _, u := range g.ups {
		if err := u.syncAll(ctx); err != nil {
			g.Close()
			return nil, fmt.Errorf("mcpgw: upstream %q: %w", u.cfg.Name, err)
		}
	}
	return g, nil
}

// Server is the gateway's MCP server, to run on any transport.
func (g *Gateway) Server() *mcp.Server { return g.server }

// Run serves one client on t (stdio) until the client goes away, ctx ends,
// or — without Options.Reconnect — an upstream's connection ends.
func (g *Gateway) Run(ctx context.Context, t mcp.Transport) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- g.server.Run(ctx, t) }()
	select {
	case err := <-errc:
		return err
	case err := <-g.lost:
		// Calls in flight to the lost upstream fail at once; let their
		// error results reach the client before the connection closes
		// (closing it drops responses not yet written).
		g.drainCalls(g.opts.CallTimeout)
		cancel()
		<-errc
		return err
	}
}

// flushGrace is how long a call's response is given to be written after its
// handler returned, before a gateway that is ending closes the connection.
const flushGrace = 100 * time.Millisecond

// drainCalls waits until no tools/call is being handled (at most max), and a
// moment more for the last responses to be written.
func (g *Gateway) drainCalls(max time.Duration) {
	deadline := time.Now().Add(max)
	for g.calls.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(flushGrace)
}

// Close ends every upstream connection (stopping stdio upstreams).
func (g *Gateway) Close() error {
	var errs []error
	for _, u := range g.ups {
		errs = append(errs, u.close())
	}
	return errors.Join(errs...)
}

func (g *Gateway) serverOptions() *mcp.ServerOptions {
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}
	var instructions []string
	var subscribe, complete bool
	for _, u := range g.ups {
		c := u.caps()
		if c.Prompts != nil {
			caps.Prompts = &mcp.PromptCapabilities{ListChanged: true}
		}
		if c.Resources != nil {
			if caps.Resources == nil {
				caps.Resources = &mcp.ResourceCapabilities{ListChanged: true}
			}
			if c.Resources.Subscribe {
				caps.Resources.Subscribe, subscribe = true, true
			}
		}
		if c.Completions != nil {
			caps.Completions, complete = &mcp.CompletionCapabilities{}, true
		}
		g.legacyCaps(c, caps)
		if in := strings.TrimSpace(u.instructions()); in != "" {
			if g.opts.Namespace {
				in = u.cfg.Name + ": " + in
			}
			instructions = append(instructions, in)
		}
	}
	so := &mcp.ServerOptions{
		Capabilities: caps,
		Instructions: strings.Join(instructions, "\n\n"),
	}
	if subscribe {
		so.SubscribeHandler = g.subscribe
		so.UnsubscribeHandler = g.unsubscribe
	}
	if complete {
		so.CompletionHandler = g.complete
	}
	return so
}

// expose is the name the client sees for an upstream's tool or prompt.
func (g *Gateway) expose(u *upstream, name string) string {
	if g.opts.Namespace {
		return u.cfg.Name + Separator + name
	}
	return name
}

// middleware pins every tools/list result before the client sees it, and
// passes the client's log level on when the gateway forwards logs.
func (g *Gateway) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list":
			res, err := next(ctx, method, req)
			if err != nil {
				return nil, err
			}
			lr, ok := res.(*mcp.ListToolsResult)
			if !ok {
				return nil, fmt.Errorf("mandate: tools/list returned %T", res)
			}
			return g.pinListing(ctx, req, lr)
		case "logging/setLevel":
			g.passLogLevel(ctx, req)
		case "tools/call":
			g.calls.Add(1)
			defer g.calls.Add(-1)
		}
		return next(ctx, method, req)
	}
}

// requestContext carries the request's authenticated principal (set by the
// HTTP endpoint) to the backend.
func requestContext(ctx context.Context, req mcp.Request) context.Context {
	if ex := req.GetExtra(); ex != nil && ex.TokenInfo != nil {
		if p, ok := ex.TokenInfo.Extra[tokenPrincipal].(auth.Principal); ok {
			return WithPrincipal(ctx, p)
		}
	}
	return ctx
}

func (g *Gateway) pinListing(ctx context.Context, req mcp.Request, lr *mcp.ListToolsResult) (mcp.Result, error) {
	ctx = requestContext(ctx, req)
	sid, err := g.opts.Sessions.Session(ctx, req)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "mandate: " + err.Error()}
	}
	defs := make([]action.ToolDef, len(lr.Tools))
	for i, t := range lr.Tools {
		defs[i] = toolDef(t)
	}
	rep, err := g.opts.Backend.PinTools(ctx, sid, defs)
	if err != nil {
		return nil, fmt.Errorf("mandate could not pin this tool list, so it is not shown: %w", err)
	}
	g.remember(ctx, sid)
	if len(rep.Changed) == 0 {
		return lr, nil
	}
	// Show the definition the session pinned, marked refused — never the
	// changed text, which may carry the very instructions a rug pull is for.
	changed := map[string]engine.ToolChangeInfo{}
	for _, c := range rep.Changed {
		changed[c.Tool] = c
	}
	out := *lr
	out.Tools = make([]*mcp.Tool, len(lr.Tools))
	for i, t := range lr.Tools {
		if c, ok := changed[t.Name]; ok {
			out.Tools[i] = refusedTool(c)
		} else {
			out.Tools[i] = t
		}
	}
	return &out, nil
}

func (g *Gateway) remember(ctx context.Context, sid string) {
	p, has := principalFrom(ctx)
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.listed[sid]; !ok && len(g.listed) >= maxListedSessions {
		for k := range g.listed { // forget an arbitrary one
			delete(g.listed, k)
			break
		}
	}
	g.listed[sid] = listedSession{principal: p, has: has}
}

// ensurePinned pins the gateway's current tool list for a session that
// calls a tool without having listed tools through this gateway (a client
// that cached the list), so its calls are classified with the definitions
// and later changes are caught.
func (g *Gateway) ensurePinned(ctx context.Context, sid string) error {
	g.mu.Lock()
	_, ok := g.listed[sid]
	var defs []action.ToolDef
	if !ok {
		for _, et := range g.tools {
			defs = append(defs, toolDef(et.def))
		}
	}
	g.mu.Unlock()
	if ok {
		return nil
	}
	slices.SortFunc(defs, func(a, b action.ToolDef) int { return strings.Compare(a.Name, b.Name) })
	if _, err := g.opts.Backend.PinTools(ctx, sid, defs); err != nil {
		return err
	}
	g.remember(ctx, sid)
	return nil
}

// ToolsetHash is the fingerprint of the tools the gateway shows now
// (baseline.ToolsetHash of their exposed names): part of the agent version
// of the sessions it creates.
func (g *Gateway) ToolsetHash() string {
	g.mu.Lock()
	names := make([]string, 0, len(g.tools))
	for name := range g.tools {
		names = append(names, name)
	}
	g.mu.Unlock()
	return baseline.ToolsetHash(names)
}

// Forget drops what the gateway remembers of a session (its MCP session
// ended); it will pin again if the session is used again.
func (g *Gateway) Forget(sid string) {
	g.mu.Lock()
	delete(g.listed, sid)
	g.mu.Unlock()
}

// repin records changed definitions for every session that was shown tools,
// before the changed list is exposed.
func (g *Gateway) repin(ctx context.Context, defs []action.ToolDef) {
	g.mu.Lock()
	listed := maps.Clone(g.listed)
	g.mu.Unlock()
	for sid, ls := range listed {
		pctx := ctx
		if ls.has {
			pctx = WithPrincipal(ctx, ls.principal)
		}
		rep, err := g.opts.Backend.PinTools(pctx, sid, defs)
		if err != nil {
			g.log.Error("pinning changed tools failed", "session", sid, "err", err)
			continue
		}
		for _, c := range rep.Changed {
			if c.Recorded {
				g.log.Warn("upstream changed a tool mid-session; calls to it are refused", "session", sid, "tool", c.Tool)
			}
		}
	}
}

func refusedTool(c engine.ToolChangeInfo) *mcp.Tool {
	p := c.Pinned
	schema := p.InputSchema
	if schema == nil {
		schema = map[string]any{"type": "object"}
	}
	t := &mcp.Tool{
		Name:         c.Tool,
		Title:        p.Title,
		Description:  "[Mandate refuses calls to this tool: " + c.Reason + "]\n\n" + p.Description,
		InputSchema:  schema,
		OutputSchema: p.OutputSchema,
	}
	if a := p.Annotations; a != nil {
		t.Annotations = &mcp.ToolAnnotations{Title: a.Title, DestructiveHint: a.DestructiveHint, OpenWorldHint: a.OpenWorldHint,
			ReadOnlyHint: a.ReadOnlyHint != nil && *a.ReadOnlyHint, IdempotentHint: a.IdempotentHint != nil && *a.IdempotentHint}
	}
	return t
}

// toolDef is the part of an MCP tool definition Mandate pins and classifies.
func toolDef(t *mcp.Tool) action.ToolDef {
	d := action.ToolDef{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema}
	if a := t.Annotations; a != nil {
		ro, idem := a.ReadOnlyHint, a.IdempotentHint
		d.Annotations = &action.Annotations{Title: a.Title, ReadOnlyHint: &ro, DestructiveHint: a.DestructiveHint, IdempotentHint: &idem, OpenWorldHint: a.OpenWorldHint}
	}
	return d
}

// toolHandler decides, forwards and observes calls to one upstream tool.
func (g *Gateway) toolHandler(u *upstream, upstreamName, exposed string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return g.call(requestContext(ctx, req), req, u, upstreamName, exposed), nil
	}
}

func (g *Gateway) call(ctx context.Context, req *mcp.CallToolRequest, u *upstream, upstreamName, exposed string) *mcp.CallToolResult {
	sid, err := g.opts.Sessions.Session(ctx, req)
	if err != nil {
		return refusal("", "", "Mandate has no session for this call, so it was not run: "+err.Error())
	}
	args, err := callArgs(req.Params.Arguments)
	if err != nil {
		return refusal("", "", "This call was not run: "+err.Error())
	}
	if err := g.ensurePinned(ctx, sid); err != nil {
		return refusal("", "", "Mandate could not pin the tool list, so the call was not run: "+err.Error())
	}
	v, err := g.decide(ctx, req, sid, exposed, args)
	if err != nil {
		g.log.Error("evaluate failed; refusing the call", "session", sid, "tool", exposed, "err", err)
		return refusal("", "", "Mandate could not decide this call, so it was not run: "+err.Error())
	}
	switch v.Effect {
	case "allow":
	case "ask":
		nv, refused := g.onAsk(ctx, req, sid, exposed, args, v)
		if refused != nil {
			return refused
		}
		v = nv // allowed after a person's answer: run it under that decision
	case "deny":
		if v.ApprovalID != "" {
			return askRefusal(v) // a person's (or the deadline's) no
		}
		return refusal(v.ID, string(v.Effect), fmt.Sprintf("Mandate refused this call: %s. It was not run. (decision %s; rules: %s)", reasons(v), v.ID, strings.Join(v.Rules, ", ")))
	default:
		return refusal(v.ID, string(v.Effect), fmt.Sprintf("Mandate answered %q, which the gateway does not know, so the call was not run (decision %s)", v.Effect, v.ID))
	}
	res, callErr := g.forward(ctx, req, u, upstreamName, args)
	var obs json.RawMessage
	if callErr != nil {
		res = errorResult(callErr.Error())
		obs, err = json.Marshal(map[string]any{"error": callErr.Error(), "upstream": u.cfg.Name})
	} else {
		obs, err = observation(res, g.opts.MaxObserveBytes)
	}
	if err == nil {
		// Record even when the client has gone: the call ran.
		octx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		err = g.opts.Backend.Observe(octx, v.ID, obs)
		cancel()
	}
	if err != nil {
		g.log.Error("observing a result failed; withholding it", "session", sid, "tool", exposed, "decision", v.ID, "err", err)
		return refusal(v.ID, string(v.Effect), fmt.Sprintf("The tool ran, but Mandate could not record its result, so the result is withheld: %v (decision %s)", err, v.ID))
	}
	out := *res
	out.Meta = maps.Clone(res.Meta)
	if out.Meta == nil {
		out.Meta = mcp.Meta{}
	}
	out.Meta[MetaDecision] = map[string]any{"id": v.ID, "effect": v.Effect}
	return &out
}

// forward runs an allowed call upstream. Every failure is an error: a call
// that did not complete never looks like a success.
func (g *Gateway) forward(ctx context.Context, req *mcp.CallToolRequest, u *upstream, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	cs, err := u.session(ctx)
	if err != nil {
		return nil, fmt.Errorf("upstream %q is not available, so the call was not run: %w", u.cfg.Name, err)
	}
	cctx, cancel := context.WithTimeout(ctx, g.opts.CallTimeout)
	defer cancel()
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	if tok := req.Params.GetProgressToken(); tok != nil {
		gt := g.routeProgress(req.Session, tok)
		// The upstream's progress notifications are handled after its
		// result has been delivered (the SDK queues notifications and
		// answers responses at once), so the route outlives the call a
		// little.
		defer time.AfterFunc(progressGrace, func() { g.unrouteProgress(gt) })
		params.SetProgressToken(gt)
	}
	res, err := cs.CallTool(cctx, params)
	switch {
	case err == nil && res == nil:
		return nil, fmt.Errorf("upstream %q returned no result", u.cfg.Name)
	case err == nil:
		return res, nil
	case errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		return nil, fmt.Errorf("upstream %q did not answer within %s; the call may or may not have taken effect", u.cfg.Name, g.opts.CallTimeout)
	case ctx.Err() != nil:
		return nil, fmt.Errorf("the call to upstream %q was cancelled: %w", u.cfg.Name, ctx.Err())
	}
	return nil, fmt.Errorf("upstream %q failed: %w", u.cfg.Name, err)
}

func (g *Gateway) routeProgress(ss *mcp.ServerSession, token any) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.nextToken++
	gt := fmt.Sprintf("mandate-%d", g.nextToken)
	g.progress[gt] = progressRoute{ss: ss, token: token}
	return gt
}

func (g *Gateway) unrouteProgress(gt string) {
	g.mu.Lock()
	delete(g.progress, gt)
	g.mu.Unlock()
}

func (g *Gateway) onProgress(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
	key, ok := req.Params.ProgressToken.(string)
	if !ok {
		return
	}
	g.mu.Lock()
	r, ok := g.progress[key]
	g.mu.Unlock()
	if !ok || r.ss == nil {
		return
	}
	p := *req.Params
	p.ProgressToken = r.token
	if err := r.ss.NotifyProgress(ctx, &p); err != nil {
		g.log.Debug("forwarding progress failed", "err", err)
	}
}

// callArgs returns a call's arguments as a JSON object; absent means {}.
func callArgs(raw json.RawMessage) (json.RawMessage, error) {
	trimmed := strings.TrimSpace(string(raw))
	if trimmed == "" || trimmed == "null" {
		return json.RawMessage("{}"), nil
	}
	if !strings.HasPrefix(trimmed, "{") || !json.Valid(raw) {
		return nil, errors.New("its arguments are not a JSON object")
	}
	return raw, nil
}

func reasons(v *api.Decision) string {
	if len(v.Reasons) == 0 {
		return "no reason given"
	}
	return strings.Join(v.Reasons, "; ")
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// refusal is the result of a call the gateway did not run.
func refusal(decisionID, effect, text string) *mcp.CallToolResult {
	r := errorResult(text)
	if decisionID != "" {
		r.Meta = mcp.Meta{MetaDecision: map[string]any{"id": decisionID, "effect": effect}}
	}
	return r
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// applyTools makes the gateway's tool list for u match the upstream's. A
// tool whose definition changed is pinned for every session that was shown
// tools before the change is exposed.
func (g *Gateway) applyTools(ctx context.Context, u *upstream, list []*mcp.Tool) {
	type entry struct {
		et      *exposedTool
		changed bool
	}
	fresh := map[string]entry{}
	var changedDefs []action.ToolDef
	g.mu.Lock()
	for _, t := range list {
		if t == nil || t.Name == "" {
			continue
		}
		if err := checkTool(t); err != nil {
			g.log.Warn("skipping an upstream tool the gateway cannot serve", "upstream", u.cfg.Name, "tool", t.Name, "err", err)
			continue
		}
		name := g.expose(u, t.Name)
		if old, ok := g.tools[name]; ok && old.up != u {
			g.log.Warn("two upstreams list the same tool; keeping the first", "tool", name, "kept", old.up.cfg.Name, "skipped", u.cfg.Name)
			continue
		}
		def := *t
		def.Name = name
		hash, _, err := engine.ToolDefHash(toolDef(&def))
		if err != nil {
			g.log.Warn("skipping an upstream tool the gateway cannot hash", "upstream", u.cfg.Name, "tool", t.Name, "err", err)
			continue
		}
		old, had := g.tools[name]
		e := entry{et: &exposedTool{up: u, name: t.Name, def: &def, hash: hash}, changed: !had || old.hash != hash}
		if had && old.hash != hash {
			changedDefs = append(changedDefs, toolDef(&def))
		}
		fresh[name] = e
	}
	var removed []string
	for name, et := range g.tools {
		if _, ok := fresh[name]; !ok && et.up == u {
			removed = append(removed, name)
		}
	}
	g.mu.Unlock()

	if len(changedDefs) > 0 {
		g.repin(ctx, changedDefs)
	}

	g.mu.Lock()
	for _, name := range removed {
		delete(g.tools, name)
	}
	for name, e := range fresh {
		g.tools[name] = e.et
	}
	g.mu.Unlock()
	if len(removed) > 0 {
		g.server.RemoveTools(removed...)
	}
	names := slices.Sorted(maps.Keys(fresh))
	for _, name := range names {
		e := fresh[name]
		if !e.changed {
			continue
		}
		if err := safely(func() { g.server.AddTool(e.et.def, g.toolHandler(u, e.et.name, name)) }); err != nil {
			g.log.Warn("skipping an upstream tool the gateway cannot serve", "upstream", u.cfg.Name, "tool", e.et.name, "err", err)
			g.mu.Lock()
			delete(g.tools, name)
			g.mu.Unlock()
		}
	}
}

// checkTool rejects what the SDK's AddTool would panic on.
func checkTool(t *mcp.Tool) error {
	if t.InputSchema == nil {
		return errors.New("no input schema")
	}
	b, err := json.Marshal(t.InputSchema)
	if err != nil {
		return fmt.Errorf("input schema: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m["type"] != "object" {
		return errors.New(`input schema is not an object schema of type "object"`)
	}
	return nil
}

// safely runs f, turning a panic (the SDK panics on definitions it cannot
// serve) into an error.
func safely(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	f()
	return nil
}

func (g *Gateway) applyPrompts(u *upstream, list []*mcp.Prompt) {
	fresh := map[string]*mcp.Prompt{}
	for _, p := range list {
		if p == nil || p.Name == "" {
			continue
		}
		fresh[g.expose(u, p.Name)] = p
	}
	g.mu.Lock()
	var removed []string
	for name, e := range g.prompts {
		if e.up == u {
			if _, ok := fresh[name]; !ok {
				removed = append(removed, name)
				delete(g.prompts, name)
			}
		}
	}
	for name, p := range fresh {
		if e, ok := g.prompts[name]; ok && e.up != u {
			g.log.Warn("two upstreams list the same prompt; keeping the first", "prompt", name)
			delete(fresh, name)
			continue
		}
		g.prompts[name] = &exposedName{up: u, name: p.Name}
	}
	g.mu.Unlock()
	if len(removed) > 0 {
		g.server.RemovePrompts(removed...)
	}
	for name, p := range fresh {
		def := *p
		def.Name = name
		orig := p.Name
		if err := safely(func() {
			g.server.AddPrompt(&def, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				cs, err := u.session(ctx)
				if err != nil {
					return nil, err
				}
				return cs.GetPrompt(ctx, &mcp.GetPromptParams{Meta: req.Params.Meta, Name: orig, Arguments: req.Params.Arguments})
			})
		}); err != nil {
			g.log.Warn("skipping an upstream prompt", "upstream", u.cfg.Name, "prompt", orig, "err", err)
		}
	}
}

// applyResources passes u's resources and templates through under their own
// URIs; a URI two upstreams both list stays with the first.
func (g *Gateway) applyResources(u *upstream, resources []*mcp.Resource, templates []*mcp.ResourceTemplate) {
	read := func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		cs, err := u.session(ctx)
		if err != nil {
			return nil, err
		}
		return cs.ReadResource(ctx, &mcp.ReadResourceParams{Meta: req.Params.Meta, URI: req.Params.URI})
	}
	g.mu.Lock()
	goneRes, addRes := reown(g.log, g.resources, u, resources, func(r *mcp.Resource) string {
		if r == nil {
			return ""
		}
		return r.URI
	}, "resource", "uri")
	goneTpl, addTpl := reown(g.log, g.templates, u, templates, func(t *mcp.ResourceTemplate) string {
		if t == nil {
			return ""
		}
		return t.URITemplate
	}, "resource template", "template")
	g.mu.Unlock()
	if len(goneRes) > 0 {
		g.server.RemoveResources(goneRes...)
	}
	if len(goneTpl) > 0 {
		g.server.RemoveResourceTemplates(goneTpl...)
	}
	for _, r := range addRes {
		if err := safely(func() { g.server.AddResource(r, read) }); err != nil {
			g.log.Warn("skipping an upstream resource", "upstream", u.cfg.Name, "uri", r.URI, "err", err)
		}
	}
	for _, t := range addTpl {
		if err := safely(func() { g.server.AddResourceTemplate(t, read) }); err != nil {
			g.log.Warn("skipping an upstream resource template", "upstream", u.cfg.Name, "template", t.URITemplate, "err", err)
		}
	}
}

// reown gives u the keys of items (key is "" for one to skip) in owners,
// taking back first every key u held: it returns the keys u no longer
// holds and the items it now does. A key another upstream holds stays with
// it, with a warning naming what and the key under attr. The caller holds
// g.mu.
func reown[T any](lg *slog.Logger, owners map[string]*upstream, u *upstream, items []T, key func(T) string, what, attr string) (gone []string, added []T) {
	for k, owner := range owners {
		if owner == u {
			gone = append(gone, k)
			delete(owners, k)
		}
	}
	for _, it := range items {
		k := key(it)
		if k == "" {
			continue
		}
		if owner, ok := owners[k]; ok && owner != u {
			lg.Warn("two upstreams list the same "+what+"; keeping the first", attr, k)
			continue
		}
		owners[k] = u
		added = append(added, it)
	}
	return gone, added
}

// owner finds the upstream that serves a resource URI.
func (g *Gateway) owner(uri string) (*upstream, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if u, ok := g.resources[uri]; ok {
		return u, nil
	}
	var found []*upstream
	for tpl, u := range g.templates {
		if templateMatches(tpl, uri) && !slices.Contains(found, u) {
			found = append(found, u)
		}
	}
	if len(found) == 1 {
		return found[0], nil
	}
	if len(g.ups) == 1 {
		return g.ups[0], nil
	}
	return nil, fmt.Errorf("no single upstream serves resource %q", uri)
}

// ownerSession is the session of the upstream that serves a resource URI.
func (g *Gateway) ownerSession(ctx context.Context, uri string) (*mcp.ClientSession, error) {
	u, err := g.owner(uri)
	if err != nil {
		return nil, err
	}
	return u.session(ctx)
}

// templateMatches is a prefix test on the template's literal start: enough
// to route, since the upstream validates the URI itself.
func templateMatches(tpl, uri string) bool {
	lit, _, _ := strings.Cut(tpl, "{")
	return lit != "" && strings.HasPrefix(uri, lit)
}

func (g *Gateway) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	cs, err := g.ownerSession(ctx, req.Params.URI)
	if err != nil {
		return err
	}
	return cs.Subscribe(ctx, &mcp.SubscribeParams{URI: req.Params.URI})
}

func (g *Gateway) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	cs, err := g.ownerSession(ctx, req.Params.URI)
	if err != nil {
		return err
	}
	return cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: req.Params.URI})
}

func (g *Gateway) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	if req.Params == nil || req.Params.Ref == nil {
		return nil, errors.New("completion/complete: ref is required")
	}
	p := *req.Params
	ref := *p.Ref
	p.Ref = &ref
	var u *upstream
	switch ref.Type {
	case "ref/prompt":
		g.mu.Lock()
		e, ok := g.prompts[ref.Name]
		g.mu.Unlock()
		if !ok {
			return nil, fmt.Errorf("unknown prompt %q", ref.Name)
		}
		u, ref.Name = e.up, e.name
	case "ref/resource":
		var err error
		if u, err = g.owner(ref.URI); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("completion/complete: unknown ref type %q", ref.Type)
	}
	cs, err := u.session(ctx)
	if err != nil {
		return nil, err
	}
	return cs.Complete(ctx, &p)
}

// downstream is the one client session of a gateway that forwards client
// features (stdio).
func (g *Gateway) downstream() (*mcp.ServerSession, error) {
	if !g.ready.Load() {
		return nil, errors.New("the gateway is not serving yet")
	}
	for ss := range g.server.Sessions() {
		return ss, nil
	}
	return nil, errors.New("no client is connected")
}
