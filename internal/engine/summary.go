package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mandate-dev/mandate/api"
	"github.com/mandate-dev/mandate/internal/evidence"
	"github.com/mandate-dev/mandate/internal/store"
)

// A session's summary is recorded when the session completes: whichever
// surface completes it (POST /v1/sessions/{id}/status, the Claude Code
// SessionEnd and SubagentStop hook events, the client), the status change
// goes through SetStatus, and there the engine computes the same facts
// GET /v1/sessions/{id}/summary returns and commits them as a behaviour
// evidence record of type "summary". The record is in the evidence log, so
// it is tamper-evident, survives a restart and is checked by `mandate
// verify`; the route then returns it, naming the record, for as long as
// the session stays completed.

// summaryType is the BehaviourRecord type of a recorded session summary.
const summaryType = "summary"

// SessionEvidence is what reading a recorded summary needs of the store.
// Every store.Store provides it; a store without it records summaries
// that the route does not read back (it computes them instead).
type SessionEvidence interface {
	SessionEvidence(ctx context.Context, sessionID string) ([]*store.EvidenceRecord, error)
}

var _ SessionEvidence = store.Store(nil)

// recordSummary records session id's summary, once per completion: when
// the summary last recorded for it holds the same facts (the session was
// taken up again and completed with nothing new), nothing is recorded.
// The status change has committed already, so a failure is logged and the
// summary stays computable on demand.
func (e *Engine) recordSummary(ctx context.Context, id string) {
	if _, err := e.summaryOnce(ctx, id); err != nil {
		e.log.Error("session summary not recorded on completion", "session", id, "err", err)
	}
}

// summaryOnce records session id's summary unless the summary recorded
// last for it holds the same facts; it reports whether it recorded one.
func (e *Engine) summaryOnce(ctx context.Context, id string) (bool, error) {
	ctx = context.WithoutCancel(ctx) // the caller's request may end; the record should not
	sum, err := e.summarize(ctx, id)
	if err != nil {
		return false, fmt.Errorf("summary of session %s: %w", id, err)
	}
	facts := mustJSON(sum)
	prev, err := e.recordedSummary(ctx, id)
	if err != nil {
		e.log.Warn("recorded summary unreadable; recording a new one", "session", id, "err", err)
	}
	if prev != nil {
		prev.Recorded = nil
		if bytes.Equal(mustJSON(prev), facts) {
			return false, nil
		}
	}
	r := &store.BehaviourRecord{Type: summaryType, Agent: sum.AgentID, Version: sum.Version, SessionID: id, Detail: facts, CreatedAt: e.now().UTC()}
	if err := e.commit(ctx, &store.Change{Behaviour: []*store.BehaviourRecord{r}}); err != nil {
		return false, fmt.Errorf("summary of session %s: %w", id, err)
	}
	return true, nil
}

// catchUpSummaries bounds the completed sessions RecordMissingSummaries
// looks at: the newest ones, where a crash can have left a gap.
const catchUpSummaries = 500

// RecordMissingSummaries records the summary of each of the newest
// completed sessions (at most 500) whose summary was not recorded, or was
// recorded with other facts: the status change and the summary's record
// are two commits, so a process that stopped between them left a
// completed session without its record. It is idempotent — a session
// whose recorded summary holds its facts is left alone — and returns how
// many it recorded. `mandate serve` runs it at start-up. A session
// completed before summaries were recorded gets one too.
func (e *Engine) RecordMissingSummaries(ctx context.Context) (int, error) {
	sessions, err := e.store.ListSessions(ctx, store.SessionFilter{Status: store.StatusCompleted, Limit: catchUpSummaries})
	if err != nil {
		return 0, fmt.Errorf("completed sessions: %w", err)
	}
	n := 0
	var errs []error
	for _, s := range sessions {
		if ctx.Err() != nil {
			// Stopping: what is left is recorded at the next start.
			break
		}
		ok, err := e.summaryOnce(ctx, s.ID)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			n++
		}
	}
	return n, errors.Join(errs...)
}

// recordedSummary returns the summary recorded last for session id, nil
// if none was (or the store cannot list a session's evidence).
func (e *Engine) recordedSummary(ctx context.Context, id string) (*api.SessionSummary, error) {
	se, ok := e.store.(SessionEvidence)
	if !ok {
		return nil, nil
	}
	recs, err := se.SessionEvidence(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("session %s evidence: %w", id, err)
	}
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		if r.Type != "behaviour" {
			continue
		}
		env, err := evidence.ParseBody(r.Body)
		if err != nil {
			return nil, fmt.Errorf("evidence record %d: %w", r.Index, err)
		}
		var b store.BehaviourRecord
		if err := json.Unmarshal(env.Content, &b); err != nil {
			return nil, fmt.Errorf("evidence record %d: %w", r.Index, err)
		}
		if b.Type != summaryType {
			continue
		}
		var sum api.SessionSummary
		if err := json.Unmarshal(b.Detail, &sum); err != nil {
			return nil, fmt.Errorf("evidence record %d: summary: %w", r.Index, err)
		}
		sum.Recorded = &api.RecordedSummary{EvidenceIndex: r.Index, RecordedAt: env.Time}
		return &sum, nil
	}
	return nil, nil
}
