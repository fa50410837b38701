package engine

import (
	"context"

	"github.com/mandate-dev/mandate/internal/action"
)

// Classification is pure and per call: it reads the call, the session's
// working and home directories and its tool list, nothing else. A call is
// therefore classified before its session's lock is taken, on the context
// the session's latest decision used, so that one session's concurrent
// calls do not wait on each other's classification; under the lock the
// classification is used only if the context is still that one (the same
// classifyContext: the tool list is replaced, never modified, when pins
// change), and the call is classified again otherwise. A session's first
// call in this process is classified under the lock.

// classifyContext is what a session's calls are classified with. It is
// never modified once published.
type classifyContext struct {
	workDir, homeDir string
	tools            []action.ToolDef
}

func (cc *classifyContext) call(req EvaluateRequest) action.Call {
	return action.Call{Tool: req.Tool, Args: req.Args, WorkingDir: cc.workDir, HomeDir: cc.homeDir, Tools: cc.tools}
}

// classifyContextLocked returns the session's classification context for
// tools (its current tool list), publishing a new one when it changed
// (l.mu held).
func (l *live) classifyContextLocked(tools []action.ToolDef) *classifyContext {
	if len(tools) == 0 {
		tools = nil
	}
	if cc := l.classify.Load(); cc != nil && cc.workDir == l.sess.WorkingDir && cc.homeDir == l.sess.HomeDir && sameTools(cc.tools, tools) {
		return cc
	}
	cc := &classifyContext{workDir: l.sess.WorkingDir, homeDir: l.sess.HomeDir, tools: tools}
	l.classify.Store(cc)
	return cc
}

// sameTools reports whether a and b are one list (not equal lists: the
// same backing array, which the pins never modify in place).
func sameTools(a, b []action.ToolDef) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// preclassified is a call classified before its session's lock was taken.
type preclassified struct {
	cc  *classifyContext
	act action.Action
}

// preclassify classifies req on its session's published classification
// context, if the session is in memory and has one; nil otherwise.
func (e *Engine) preclassify(ctx context.Context, req EvaluateRequest) *preclassified {
	e.mu.Lock()
	l := e.sessions[req.SessionID]
	e.mu.Unlock()
	if l == nil {
		return nil
	}
	cc := l.classify.Load()
	if cc == nil {
		return nil
	}
	return &preclassified{cc: cc, act: e.cls.ClassifyContext(ctx, cc.call(req))}
}
