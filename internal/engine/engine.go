package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/baseline"
	"github.com/mandate-dev/mandate/internal/evidence"
	"github.com/mandate-dev/mandate/internal/flow"
	"github.com/mandate-dev/mandate/internal/mandate"
	"github.com/mandate-dev/mandate/internal/policy"
	"github.com/mandate-dev/mandate/internal/store"
)

// Errors the engine returns; surfaces map them to their own codes.
var (
	// ErrInvalid wraps every complaint about the caller's input.
	ErrInvalid = errors.New("invalid request")
	// ErrForbidden means the principal may not do this.
	ErrForbidden = errors.New("forbidden")
	ErrNotFound  = store.ErrNotFound
	ErrConflict  = store.ErrConflict
)

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

func forbidden(p auth.Principal, perm auth.Permission) error {
	return fmt.Errorf("%w: role %s may not %s", ErrForbidden, p.Role, perm)
}

// notServed refuses a principal acting in a session (what: "session s1",
// "decision d1") of an agent its token does not serve.
func notServed(p auth.Principal, what, agentID string) error {
	return fmt.Errorf("%w: %s belongs to agent %q; this %s token serves %s", ErrForbidden, what, agentID, p.Role, p.Serves())
}

// Recorder turns a change into the evidence records that describe it. It is
// called after redaction and before the change is submitted, so the records
// commit in the same transaction as what they describe.
type Recorder interface {
	Record(c *store.Change) ([]*store.EvidenceRecord, error)
}

// Redactor replaces secret values in a change before anything of it is
// stored or recorded.
type Redactor interface {
	Redact(c *store.Change) error
}

// Options configure an Engine. Store, Classifier and Policy are required.
type Options struct {
	Store      Store
	Classifier *action.Classifier
	Policy     *policy.Policy
	Logger     *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// MaxArgsBytes caps a call's encoded arguments (default 1 MiB).
	MaxArgsBytes int
	// Recorder describes every change as evidence records (nil means
	// evidence.NewRecorder): stores bind each row to its record and
	// refuse rows without one when they load them. Redactor is an
	// optional stage (secrets).
	Recorder Recorder
	Redactor Redactor
	// Metrics, if set, observes every decision.
	Metrics *Metrics
	// Self is Mandate's own footprint — its API addresses and its files —
	// which the built-in rules keep agents away from (policy.SelfFacts).
	Self policy.SelfFacts
	// Approvals configure the approval queue, the judge and the event
	// stream (approvals.go).
	Approvals ApprovalOptions
	// Baseline is the behaviour layer's knowledge (behaviour.go); nil
	// means the built-in one.
	Baseline *baseline.Config
	// NoBaselineLearning stops the fold: baselines stay as stored, and
	// signals compare with them (the per-call eval, whose episodes are
	// independent of one another).
	NoBaselineLearning bool
	// Flow scans outputs and arguments into the sessions' flow tables;
	// nil builds one over the built-in tables, hashing secrets with the
	// Redactor when it can (flow.Hasher).
	Flow *flow.Scanner
}

// Engine decides calls for sessions and persists what it decided. It is
// safe for concurrent use.
type Engine struct {
	store    Store
	cls      *action.Classifier
	policy   atomic.Pointer[policy.Policy]
	log      *slog.Logger
	now      func() time.Time
	maxArgs  int
	recorder Recorder
	redactor Redactor
	metrics  *Metrics
	self     policy.SelfFacts
	scan     *flow.Scanner
	// toolConcepts remembers the concepts a tool's name names (the flow
	// detector's, a pure function of the name), for the tool names seen
	// (bounded by maxToolConcepts).
	toolConcepts  sync.Map // string → []string
	nToolConcepts atomic.Int64

	mu       sync.Mutex
	sessions map[string]*live
	// retired are entries dropped from sessions while commits of theirs
	// were in flight, by session; a reload waits for all of them
	// (commit.go). More than one can be in flight when an entry loaded
	// after a retirement is retired in turn.
	retired map[string][]*live
	// decisions maps recent decision ids to their sessions.
	decisions *decisionIndex
	// inflight counts draws on delegation trees' budgets not yet
	// committed (treecaps.go).
	inflight inflight
	// tools holds sessions' tool pins (tools.go).
	tools toolCache
	// appr is the approval queue (approvals.go).
	appr *approvals
	// beh is the behaviour layer: baselines and signals (behaviour.go).
	beh *behaviour
	// seq holds the sequence state of trees and agents (sequences.go).
	seq seqGroups
}

// New builds an engine.
func New(opts Options) (*Engine, error) {
	if opts.Store == nil || opts.Classifier == nil || opts.Policy == nil {
		return nil, errors.New("engine: store, classifier and policy are required")
	}
	e := &Engine{
		store:     opts.Store,
		cls:       opts.Classifier,
		log:       opts.Logger,
		now:       opts.Now,
		maxArgs:   opts.MaxArgsBytes,
		recorder:  opts.Recorder,
		redactor:  opts.Redactor,
		metrics:   opts.Metrics,
		self:      opts.Self,
		sessions:  make(map[string]*live),
		retired:   make(map[string][]*live),
		decisions: newDecisionIndex(1 << 16),
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.now == nil {
		e.now = time.Now
	}
	if e.maxArgs <= 0 {
		e.maxArgs = 1 << 20
	}
	e.scan = opts.Flow
	if e.scan == nil {
		var fopts []flow.ScannerOption
		if h, ok := opts.Redactor.(flow.Hasher); ok {
			fopts = append(fopts, flow.WithHasher(h))
		}
		s, err := flow.NewScanner(fopts...)
		if err != nil {
			return nil, fmt.Errorf("engine: %w", err)
		}
		e.scan = s
	}
	// The count words (mandate.WordCounts, for builtin.quantity-over-words)
	// load once; a table that does not load stops the engine here rather
	// than leaving every later session without the counts its words state.
	if _, err := mandate.WordCounts("1"); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	if e.recorder == nil {
		e.recorder = evidence.NewRecorder(e.now)
	}
	e.policy.Store(opts.Policy)
	e.appr = newApprovals(opts.Store, opts.Approvals)
	beh, err := newBehaviour(e, opts.Baseline, &opts)
	if err != nil {
		return nil, err
	}
	e.beh = beh
	return e, nil
}

// SetPolicy swaps the policy for every call decided after it returns
// (hot reload).
func (e *Engine) SetPolicy(p *policy.Policy) { e.policy.Store(p) }

// Policy returns the policy in force.
func (e *Engine) Policy() *policy.Policy { return e.policy.Load() }

// Classifier returns the engine's classifier.
func (e *Engine) Classifier() *action.Classifier { return e.cls }

// Store returns the engine's store, for read-only surfaces.
func (e *Engine) Store() Store { return e.store }

// commit redacts, records and submits a change, and waits for it to be
// durable.
func (e *Engine) commit(ctx context.Context, c *store.Change) error {
	return e.wait(ctx, e.submit(c))
}

func (e *Engine) submit(c *store.Change) <-chan error {
	if err := e.prepare(c); err != nil {
		ch := make(chan error, 1)
		ch <- err
		return ch
	}
	done := e.appr.changing(c)
	if done == nil {
		return e.store.Submit(c)
	}
	// The approvals cache learns the outcome before the caller does.
	in, out := e.store.Submit(c), make(chan error, 1)
	go func() {
		err := <-in
		done()
		out <- err
	}()
	return out
}

func (e *Engine) prepare(c *store.Change) error {
	if e.redactor != nil {
		if err := e.redactor.Redact(c); err != nil {
			return fmt.Errorf("redact: %w", err)
		}
	}
	if e.recorder != nil {
		recs, err := e.recorder.Record(c)
		if err != nil {
			return fmt.Errorf("record evidence: %w", err)
		}
		c.Evidence = append(c.Evidence, recs...)
	}
	return nil
}

func (e *Engine) wait(ctx context.Context, ch <-chan error) error {
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return fmt.Errorf("waiting for the store: %w", ctx.Err())
	}
}

func newID() string { return uuid.Must(uuid.NewV7()).String() }

// rawArgs encodes args for storage and enforces the size cap.
func (e *Engine) rawArgs(args map[string]any, raw json.RawMessage) (json.RawMessage, error) {
	if raw == nil {
		b, err := json.Marshal(args)
		if err != nil {
			return nil, invalid("args: %v", err)
		}
		raw = b
	}
	if len(raw) > e.maxArgs {
		return nil, invalid("args are %d bytes, over the %d-byte limit", len(raw), e.maxArgs)
	}
	return raw, nil
}
