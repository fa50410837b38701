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
	Store      store.Store
	Classifier *action.Classifier
	Policy     *policy.Policy
	Logger     *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// MaxArgsBytes caps a call's encoded arguments (default 1 MiB).
	MaxArgsBytes int
	// Recorder and Redactor are optional stages (evidence, secrets).
	Recorder Recorder
	Redactor Redactor
	// Metrics, if set, observes every decision.
	Metrics *Metrics
	// Self is Mandate's own footprint — its API addresses and its files —
	// which the built-in rules keep agents away from (policy.SelfFacts).
	Self policy.SelfFacts
}

// Engine decides calls for sessions and persists what it decided. It is
// safe for concurrent use.
type Engine struct {
	store    store.Store
	cls      *action.Classifier
	policy   atomic.Pointer[policy.Policy]
	log      *slog.Logger
	now      func() time.Time
	maxArgs  int
	recorder Recorder
	redactor Redactor
	metrics  *Metrics
	self     policy.SelfFacts

	mu       sync.Mutex
	sessions map[string]*live
	// decisions maps recent decision ids to their sessions.
	decisions *decisionIndex
	// tools holds sessions' tool pins (tools.go).
	tools toolCache
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
	e.policy.Store(opts.Policy)
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
func (e *Engine) Store() store.Store { return e.store }

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
	return e.store.Submit(c)
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
