package cli

import (
	"context"
	"log/slog"
	"strings"
	"sync"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/config"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/events"
	"github.com/mandate-dev/mandate/internal/judge"
	"github.com/mandate-dev/mandate/internal/notify"
)

// readConfig reads `mandate serve --config`; no file is an empty one.
func readConfig(path string, getenv func(string) string) (*config.File, error) {
	if path == "" {
		return config.Parse(nil, getenv)
	}
	return config.Read(path, getenv)
}

// approvalOptions are the engine's approval options from the config: the
// default deadline, the judge, and the event bus that feeds /v1/events and
// the webhooks.
func approvalOptions(f *config.File, bus *events.Bus) (engine.ApprovalOptions, error) {
	opts := engine.ApprovalOptions{Timeout: f.Approvals.Timeout, Events: bus}
	if j := f.Judge; j != nil {
		jd, err := judge.New(judge.Config{
			URL: j.URL, Model: j.Model, APIKey: j.APIKey.Reveal(), Mode: j.Mode,
			EligibleAll: j.Eligible.All, EligibleRules: j.Eligible.Rules, Timeout: j.Timeout, MaxTokens: j.MaxTokens,
		})
		if err != nil {
			return opts, err
		}
		opts.Judge, opts.RecentCalls = jd, j.RecentCalls
	}
	return opts, nil
}

// approvalLink makes the address notifications point to for an approval.
func approvalLink(f *config.File, listen string) func(string) string {
	tmpl := f.Approvals.Link
	if tmpl == "" {
		tmpl = "http://" + listen + "/v1/approvals/{id}"
	}
	return func(id string) string { return strings.ReplaceAll(tmpl, "{id}", id) }
}

// newNotifier builds the webhooks of the config's notify section.
func newNotifier(f *config.File, bus *events.Bus, a *app.App, listen string, log *slog.Logger) (*notify.Notifier, error) {
	var targets []notify.Target
	for _, n := range f.Notify {
		t := notify.Target{URL: n.URL, Events: n.Events, Format: n.Format, Headers: n.Headers, Timeout: n.Timeout, Attempts: n.Attempts}
		if n.Secret.Set() {
			t.Secret = []byte(n.Secret.Reveal())
		}
		targets = append(targets, t)
	}
	opts := notify.Options{Targets: targets, Bus: bus, Link: approvalLink(f, listen), Logger: log, Version: Version()}
	if a.Registry != nil {
		opts.Registerer = a.Registry
	}
	return notify.New(opts)
}

// runApprovals runs the approval queue's background work — deadlines and
// webhooks — until ctx ends; the returned function waits for it to stop.
func runApprovals(ctx context.Context, a *app.App, n *notify.Notifier, log *slog.Logger) func() {
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := a.Engine.RunApprovals(ctx); err != nil {
			log.Error("approval deadlines stopped", "err", err)
		}
	})
	if n != nil {
		wg.Go(func() { n.Run(ctx) })
	}
	return wg.Wait
}
