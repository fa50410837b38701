package mcpgw

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// redialInterval bounds how often a lost upstream is dialled again.
const redialInterval = time.Second

// upstream is one MCP server behind the gateway and the gateway's client
// connection to it.
type upstream struct {
	cfg    Upstream
	g      *Gateway
	client *mcp.Client

	mu       sync.Mutex
	cs       *mcp.ClientSession
	init     *mcp.InitializeResult
	lastErr  error
	lastDial time.Time

	syncMu sync.Mutex // serialises list syncs
}

func newUpstream(g *Gateway, cfg Upstream) *upstream {
	u := &upstream{cfg: cfg, g: g}
	opts := &mcp.ClientOptions{
		// No roots: the gateway has none of its own, and an upstream
		// that sees the roots capability may replace the directories
		// it was configured with by the (empty) roots list.
		Capabilities:                &mcp.ClientCapabilities{},
		ToolListChangedHandler:      func(context.Context, *mcp.ToolListChangedRequest) { go u.resync("tools") },
		PromptListChangedHandler:    func(context.Context, *mcp.PromptListChangedRequest) { go u.resync("prompts") },
		ResourceListChangedHandler:  func(context.Context, *mcp.ResourceListChangedRequest) { go u.resync("resources") },
		ResourceUpdatedHandler:      g.onResourceUpdated,
		ProgressNotificationHandler: g.onProgress,
	}
	u.legacyClientOptions(opts)
	if g.opts.ForwardClientFeatures {
		opts.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			ss, err := g.downstream()
			if err != nil {
				return nil, err
			}
			return ss.Elicit(ctx, req.Params)
		}
	}
	u.client = mcp.NewClient(&mcp.Implementation{Name: "mandate-gateway", Version: g.opts.Version}, opts)
	return u
}

// connect dials the upstream (starting its process for a command) and
// completes the MCP handshake.
func (u *upstream) connect(ctx context.Context) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.dialLocked(ctx)
}

func (u *upstream) dialLocked(ctx context.Context) error {
	u.lastDial = time.Now()
	t, err := u.transport()
	if err != nil {
		u.lastErr = err
		return err
	}
	cs, err := u.client.Connect(ctx, t, nil)
	if err != nil {
		u.lastErr = err
		return err
	}
	u.cs, u.init, u.lastErr = cs, cs.InitializeResult(), nil
	go u.watch(cs)
	return nil
}

// watch notices the end of a connection: a stdio upstream that exited, an
// HTTP session the server dropped.
func (u *upstream) watch(cs *mcp.ClientSession) {
	err := cs.Wait()
	if err == nil {
		err = errors.New("connection closed")
	}
	u.mu.Lock()
	current := u.cs == cs
	if current {
		u.cs, u.lastErr = nil, err
	}
	u.mu.Unlock()
	if !current {
		return
	}
	u.g.log.Warn("upstream connection ended", "upstream", u.cfg.Name, "err", err)
	if !u.g.opts.Reconnect {
		u.g.lost <- fmt.Errorf("upstream %q ended: %w", u.cfg.Name, err)
	}
}

// session returns a live connection, dialling again if it was lost and the
// gateway reconnects.
func (u *upstream) session(ctx context.Context) (*mcp.ClientSession, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.cs != nil {
		return u.cs, nil
	}
	if u.lastErr == nil {
		u.lastErr = errors.New("not connected")
	}
	if !u.g.opts.Reconnect || time.Since(u.lastDial) < redialInterval {
		return nil, u.lastErr
	}
	if err := u.dialLocked(ctx); err != nil {
		return nil, err
	}
	go func() {
		if err := u.syncAll(context.Background()); err != nil {
			u.g.log.Error("upstream lists after reconnecting failed", "upstream", u.cfg.Name, "err", err)
		}
	}()
	return u.cs, nil
}

func (u *upstream) close() error {
	u.mu.Lock()
	cs := u.cs
	u.cs = nil
	u.lastErr = errors.New("gateway closed")
	u.mu.Unlock()
	if cs == nil {
		return nil
	}
	return cs.Close()
}

func (u *upstream) caps() *mcp.ServerCapabilities {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.init == nil || u.init.Capabilities == nil {
		return &mcp.ServerCapabilities{}
	}
	return u.init.Capabilities
}

func (u *upstream) instructions() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.init == nil {
		return ""
	}
	return u.init.Instructions
}

// secretEnv are the gateway's own credentials: an upstream never inherits
// them.
var secretEnv = []string{"MANDATE_TOKEN", "MANDATE_URL"}

func (u *upstream) transport() (mcp.Transport, error) {
	if u.cfg.dial != nil {
		return u.cfg.dial(), nil
	}
	if u.cfg.URL != "" {
		rt := http.DefaultTransport
		if len(u.cfg.Headers) > 0 {
			rt = headerTransport{base: rt, headers: u.cfg.Headers}
		}
		return &mcp.StreamableClientTransport{Endpoint: u.cfg.URL, HTTPClient: &http.Client{Transport: rt}}, nil
	}
	cmd := exec.Command(u.cfg.Command, u.cfg.Args...)
	cmd.Dir = u.cfg.Dir
	env := make([]string, 0, len(os.Environ())+len(u.cfg.Env))
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !isSecretEnv(name) {
			env = append(env, kv)
		}
	}
	for k, v := range u.cfg.Env {
		env = append(env, k+"="+v)
	}
	cmd.Env = env
	if u.g.opts.Stderr != nil {
		cmd.Stderr = u.g.opts.Stderr
	} else {
		cmd.Stderr = &logWriter{u: u}
	}
	return &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil
}

func isSecretEnv(name string) bool {
	for _, s := range secretEnv {
		if name == s {
			return true
		}
	}
	return false
}

type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	return t.base.RoundTrip(r)
}

// logWriter turns an upstream's stderr into log lines.
type logWriter struct {
	u   *upstream
	mu  sync.Mutex
	buf []byte
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.u.g.log.Info("upstream stderr", "upstream", w.u.cfg.Name, "line", string(bytes.TrimRight(w.buf[:i], "\r")))
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 64<<10 {
		w.u.g.log.Info("upstream stderr", "upstream", w.u.cfg.Name, "line", string(w.buf))
		w.buf = nil
	}
	return len(p), nil
}

var _ io.Writer = (*logWriter)(nil)

// syncAll lists everything the upstream offers.
func (u *upstream) syncAll(ctx context.Context) error {
	for _, what := range []string{"tools", "prompts", "resources"} {
		if err := u.sync(ctx, what); err != nil {
			return err
		}
	}
	return nil
}

func (u *upstream) resync(what string) {
	ctx, cancel := context.WithTimeout(context.Background(), u.g.opts.CallTimeout)
	defer cancel()
	if err := u.sync(ctx, what); err != nil {
		u.g.log.Error("listing upstream "+what+" failed", "upstream", u.cfg.Name, "err", err)
	}
}

func (u *upstream) sync(ctx context.Context, what string) error {
	u.syncMu.Lock()
	defer u.syncMu.Unlock()
	if !u.g.ready.Load() {
		return nil // New syncs once the server exists
	}
	cs, err := u.session(ctx)
	if err != nil {
		return err
	}
	caps := u.caps()
	switch what {
	case "tools":
		if caps.Tools == nil {
			return nil
		}
		list, err := collect(cs.Tools(ctx, nil), "tools/list")
		if err != nil {
			return err
		}
		u.g.applyTools(ctx, u, list)
	case "prompts":
		if caps.Prompts == nil {
			return nil
		}
		list, err := collect(cs.Prompts(ctx, nil), "prompts/list")
		if err != nil {
			return err
		}
		u.g.applyPrompts(u, list)
	case "resources":
		if caps.Resources == nil {
			return nil
		}
		res, err := collect(cs.Resources(ctx, nil), "resources/list")
		if err != nil {
			return err
		}
		tpl, err := collect(cs.ResourceTemplates(ctx, nil), "resources/templates/list")
		if err != nil {
			return err
		}
		u.g.applyResources(u, res, tpl)
	}
	return nil
}

func (g *Gateway) onResourceUpdated(ctx context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
	if !g.ready.Load() {
		return
	}
	if err := g.server.ResourceUpdated(ctx, req.Params); err != nil {
		g.log.Debug("forwarding a resource update failed", "uri", req.Params.URI, "err", err)
	}
}

// collect gathers every item of an MCP list (what names the method, for
// its error).
func collect[T any](seq iter.Seq2[T, error], what string) ([]T, error) {
	var list []T
	for it, err := range seq {
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		list = append(list, it)
	}
	return list, nil
}
