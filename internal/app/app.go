// Package app opens a Mandate instance: its data directory, store, policy,
// classifier and engine, wired together the same way for `mandate serve`,
// the embedded MCP gateway, offline commands and the eval harness.
package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/evidence"
	"github.com/mandate-dev/mandate/internal/policy"
	"github.com/mandate-dev/mandate/internal/redact"
	"github.com/mandate-dev/mandate/internal/store"
)

// Config says where state lives and which policy and catalog to use.
type Config struct {
	// DataDir holds the database and keys. Empty means an in-memory store
	// with nothing on disk (eval, tests).
	DataDir string
	// Store is a shared store's address (postgres://…); empty means the
	// embedded SQLite store in DataDir. With a shared store DataDir holds
	// only the keys, which every replica must have copies of, and is not
	// locked: several replicas share the database.
	Store string
	// PolicyDirs are operator policy directories, loaded after the
	// built-in pack.
	PolicyDirs []string
	// CatalogFiles are operator tool catalogs, loaded after the built-in one.
	CatalogFiles []string
	// MaxArgsBytes caps call arguments (default 1 MiB).
	MaxArgsBytes int
	// Synchronous overrides the SQLite synchronous level ("FULL" default).
	Synchronous string
	Logger      *slog.Logger
	// Metrics registers Prometheus metrics when true.
	Metrics bool
	Now     func() time.Time
	// CheckpointInterval is how often an evidence checkpoint is signed
	// while records arrive (default one second).
	CheckpointInterval time.Duration
	// Listen is the address the API is served at, if any, and Protect
	// more paths that are Mandate's own: with the data and policy
	// directories they are what the built-in self-protection rules keep
	// agents away from (see SelfFacts).
	Listen  string
	Protect []string
	// Approvals configure the approval queue, the judge and the event
	// stream (engine.ApprovalOptions).
	Approvals engine.ApprovalOptions
	// NoBaselineLearning keeps every agent's baseline as it is (the
	// per-call eval: its episodes are independent, and what one taught a
	// baseline must not change another's verdict).
	NoBaselineLearning bool
}

// App is an opened instance.
type App struct {
	Config   Config
	Store    store.Store
	Engine   *engine.Engine
	Registry *prometheus.Registry
	Logger   *slog.Logger
	// Evidence is the evidence log; Redactor keeps secrets out of the
	// store and the log.
	Evidence *evidence.Log
	Redactor *redact.Redactor
	// unlock releases the data directory's lock.
	unlock func()
}

// DatabaseFile is the SQLite file inside the data directory.
const DatabaseFile = "mandate.db"

// AdminTokenFile holds the first admin token, created on first start.
const AdminTokenFile = "admin.token"

// Open creates the data directory if needed and opens everything.
func Open(ctx context.Context, cfg Config) (_ *App, err error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	pol, err := policy.Load(cfg.PolicyDirs...)
	if err != nil {
		return nil, err
	}
	cls, err := action.NewClassifier(action.WithCatalogFiles(cfg.CatalogFiles...))
	if err != nil {
		return nil, err
	}
	dbPath := ":memory:"
	var (
		key    *evidence.Key
		rkey   []byte
		unlock = func() {}
	)
	if cfg.Store != "" && cfg.DataDir == "" {
		return nil, errors.New("a shared store needs a data directory (--data) holding the evidence and redaction keys, the same on every replica")
	}
	if cfg.DataDir != "" {
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("data directory: %w", err)
		}
		if cfg.Store == "" {
			if unlock, err = lockDir(cfg.DataDir); err != nil {
				return nil, err
			}
		}
		defer func() {
			if err != nil {
				unlock()
			}
		}()
		dbPath = filepath.Join(cfg.DataDir, DatabaseFile)
		if key, err = evidence.LoadOrCreateKey(cfg.DataDir); err != nil {
			return nil, err
		}
		if rkey, err = redact.LoadOrCreateKey(cfg.DataDir); err != nil {
			return nil, err
		}
	} else {
		// Nothing on disk: keys for this run only.
		if _, key, err = evidence.GenerateKey(); err != nil {
			return nil, err
		}
		rkey = redact.NewKey()
	}
	// Redaction finds secrets as the classifier does: the built-in
	// detectors and those of the operator's catalog files.
	red, err := redact.New(rkey, redact.WithScanner(cls.Secrets()))
	if err != nil {
		return nil, err
	}
	// The store hands committed records' leaf hashes to the evidence log,
	// which is opened over the store it listens to: the pointer is set
	// before anything is submitted.
	var lg atomic.Pointer[evidence.Log]
	onEvidence := func(first uint64, hashes [][]byte) {
		if l := lg.Load(); l != nil {
			appendLeaves(l, first, hashes)
		}
	}
	var reg *prometheus.Registry
	var onCommit func(time.Duration, int)
	if cfg.Metrics {
		reg = prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		onCommit = commitHistogram(reg)
	}
	st, signs, err := openStore(ctx, cfg, dbPath, onEvidence, onCommit)
	if err != nil {
		return nil, err
	}
	ev, err := evidence.Open(ctx, evidence.Options{Store: st, Key: key, Logger: cfg.Logger, Interval: cfg.CheckpointInterval, Now: cfg.Now, Signs: signs})
	if err != nil {
		st.Close()
		return nil, err
	}
	lg.Store(ev)
	a := &App{Config: cfg, Store: st, Logger: cfg.Logger, Evidence: ev, Redactor: red, unlock: unlock}
	opts := engine.Options{Store: st, Classifier: cls, Policy: pol, Logger: cfg.Logger, MaxArgsBytes: cfg.MaxArgsBytes, Now: cfg.Now,
		Recorder: evidence.NewRecorder(cfg.Now), Redactor: red}
	opts.Self = SelfFacts(cfg)
	opts.Approvals = cfg.Approvals
	opts.NoBaselineLearning = cfg.NoBaselineLearning
	if cfg.Metrics {
		a.Registry = reg
		a.Registry.MustRegister(newStoreCollector(a))
		opts.Metrics = engine.NewMetrics(a.Registry)
	}
	a.Engine, err = engine.New(opts)
	if err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// ReloadPolicy loads the policy again and swaps it in.
func (a *App) ReloadPolicy() (*policy.Policy, error) {
	p, err := policy.Load(a.Config.PolicyDirs...)
	if err != nil {
		return nil, err
	}
	a.Engine.SetPolicy(p)
	return p, nil
}

// EnsureAdminToken creates an admin token on first start and writes it to
// the data directory (mode 0600). It returns the file's path and whether it
// was created now.
func (a *App) EnsureAdminToken(ctx context.Context) (string, bool, error) {
	if a.Config.DataDir == "" {
		return "", false, errors.New("no data directory")
	}
	path := filepath.Join(a.Config.DataDir, AdminTokenFile)
	if _, err := os.Stat(path); err == nil {
		return path, false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", false, fmt.Errorf("admin token file: %w", err)
	}
	tok, rec, err := auth.Issue(string(auth.RoleAdmin), "", "initial admin", time.Now())
	if err != nil {
		return "", false, err
	}
	if err := a.Store.CreateToken(ctx, rec); err != nil {
		return "", false, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		// Another replica sharing this directory wrote it first: keep
		// theirs, and retire the token nobody will ever hold.
		if rerr := a.Store.RevokeToken(ctx, rec.ID, time.Now()); rerr != nil {
			return "", false, fmt.Errorf("revoke the unused admin token: %w", rerr)
		}
		return path, false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("write admin token: %w", err)
	}
	if _, err := f.WriteString(tok + "\n"); err != nil {
		f.Close()
		return "", false, fmt.Errorf("write admin token: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", false, fmt.Errorf("write admin token: %w", err)
	}
	return path, true, nil
}

// Close commits what is queued, signs a last evidence checkpoint covering it,
// and closes the store.
func (a *App) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Changes commit in submission order, so once an empty change is
	// durable everything submitted before it is, and its records are in
	// the evidence log.
	var errs []error
	if a.Engine != nil {
		// The baseline fold commits what it learned (and its records).
		if err := a.Engine.FlushBaselines(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if err := store.Apply(ctx, a.Store, &store.Change{}); err != nil && !errors.Is(err, store.ErrClosed) {
		errs = append(errs, fmt.Errorf("flush the store: %w", err))
	}
	syncEvidence(ctx, a)
	if err := a.Evidence.Close(ctx); err != nil {
		errs = append(errs, fmt.Errorf("last evidence checkpoint: %w", err))
	}
	errs = append(errs, a.Store.Close())
	if a.unlock != nil {
		a.unlock()
	}
	return errors.Join(errs...)
}
