package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/sqlstore"
)

// Approval rows keep their whole content as JSON in body, as in the SQLite
// store; the other columns are copies for finding rows. An update names the
// revision it replaces (mandate_update_approval), so of two answers racing
// for one approval — through one replica or two — exactly one commits, and
// the other fails with store.ErrStale (a store.ErrConflict).
//
// Every committed change to an approval is announced with NOTIFY on this
// schema's approval channel, its id as payload, in the transaction that
// made it: WatchApprovals hands the ids to the engine, which wakes the
// waiters of this process — a POST /v1/evaluate with wait, a long-polling
// GET /v1/approvals/{id}, the MCP gateway — whichever replica the answer
// came through.

var (
	_ store.Approvals       = (*Store)(nil)
	_ store.ApprovalWatcher = (*Store)(nil)
)

const (
	chanApproval = "approval" // an approval changed; payload: its id

	stInsertApproval = `INSERT INTO approvals (id, session_id, decision_id, tool, args_hash, state, scope, deadline, rev, created_at, body, leaf) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)`
	stUpdateApproval = `SELECT mandate_update_approval($1, $2, $3, $4, $5, $6, $7)`
	stNotifyApproval = `SELECT pg_notify($1, $2)`
)

// queueApprovals adds a change's approval rows to the batch.
func queueApprovals(b *pgx.Batch, e *sqlstore.Encoded) {
	for i, a := range e.C.Approvals {
		b.Queue(stInsertApproval, a.ID, a.SessionID, a.DecisionID, a.Tool, a.ArgsHash, a.State, a.Scope,
			a.Deadline.UnixNano(), a.Rev, a.CreatedAt.UnixNano(), e.Approvals[i], store.At(e.Leaves.Approvals, i))
	}
	for i, ac := range e.C.ApprovalChanges {
		a := ac.Approval
		b.Queue(stUpdateApproval, a.ID, a.State, a.Scope, a.Deadline.UnixNano(), a.Rev, e.ApprovalChanges[i], store.At(e.Leaves.ApprovalChanges, i))
	}
}

// approvalCols are an approval row's columns, its binding, and the bodies
// of any later state records of its session naming its id: a row bound to
// an earlier state of its approval than the log's last (an answer or a use
// rolled back) is refused. Records are ordered by id, their commit order:
// a later state of one approval is committed after the earlier one.
const approvalCols = sqlstore.ApprovalCols + `,
	(SELECT json_agg(convert_from(l.body, 'UTF8')::json ORDER BY l.id) FROM evidence l WHERE l.session_id = approvals.session_id AND l.session_id <> '' AND l.type = 'approval_state'
		AND l.id > (SELECT MAX(e.id) FROM evidence e WHERE e.leaf_hash = approvals.leaf) AND position(approvals.id IN convert_from(l.body, 'UTF8')) > 0)`

// GetApproval implements store.Approvals.
func (s *Store) GetApproval(ctx context.Context, id string) (*store.Approval, error) {
	a, err := sqlstore.ScanApproval(s.pool.QueryRow(ctx, `SELECT `+approvalCols+` FROM approvals WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("approval %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, describe(fmt.Sprintf("approval %q", id), err)
	}
	return a, nil
}

// ListApprovals implements store.Approvals. Ids are time-ordered (UUIDv7),
// so id order is creation order.
func (s *Store) ListApprovals(ctx context.Context, f store.ApprovalFilter) ([]*store.Approval, error) {
	q, args := sqlstore.ApprovalsQuery(dialect, approvalCols, f)
	return collect(ctx, s, "list approvals", q, args, sqlstore.ScanApproval)
}

// CallApprovals implements store.Approvals.
func (s *Store) CallApprovals(ctx context.Context, sessionID, tool, argsHash string) ([]*store.Approval, error) {
	return collect(ctx, s, "approvals for a call", `SELECT `+approvalCols+` FROM approvals WHERE session_id = $1 AND tool = $2 AND args_hash = $3 ORDER BY id DESC LIMIT 64`,
		[]any{sessionID, tool, argsHash}, sqlstore.ScanApproval)
}

// SessionGrants implements store.Approvals.
func (s *Store) SessionGrants(ctx context.Context, sessionID string) ([]*store.Approval, error) {
	return collect(ctx, s, "session approvals", `SELECT `+approvalCols+` FROM approvals WHERE session_id = $1 AND state IN ('approved', 'denied') AND scope = 'session' ORDER BY id LIMIT 1000`,
		[]any{sessionID}, sqlstore.ScanApproval)
}

// DueApprovals implements store.Approvals.
func (s *Store) DueApprovals(ctx context.Context, t time.Time, n int) ([]*store.Approval, error) {
	return collect(ctx, s, "due approvals", `SELECT `+approvalCols+` FROM approvals WHERE state = 'pending' AND deadline <= $1 ORDER BY deadline LIMIT $2`,
		[]any{t.UnixNano(), sqlstore.Limit(n)}, sqlstore.ScanApproval)
}

// NextDeadline implements store.Approvals.
func (s *Store) NextDeadline(ctx context.Context) (time.Time, error) {
	var ns *int64
	if err := s.pool.QueryRow(ctx, `SELECT MIN(deadline) FROM approvals WHERE state = 'pending'`).Scan(&ns); err != nil {
		return time.Time{}, describe("next approval deadline", err)
	}
	if ns == nil {
		return time.Time{}, fmt.Errorf("no pending approval: %w", store.ErrNotFound)
	}
	return time.Unix(0, *ns).UTC(), nil
}

// WatchApprovals implements store.ApprovalWatcher: it LISTENs on the
// approval channel on a connection of its own and calls fn for every
// approval a replica (this one included) created or changed, until ctx
// ends.
// A lost connection is re-established with backoff (Poll, doubling, at
// most 2 s); fn is called with "" at each attempt and once listening
// again, so that waiters read their approvals again rather than miss an
// answer: while the feed is down an answer is seen within 2 s.
func (s *Store) WatchApprovals(ctx context.Context, fn func(store.ApprovalNotice)) error {
	backoff := s.opts.Poll
	for ctx.Err() == nil {
		err := s.listenApprovals(ctx, fn)
		if ctx.Err() != nil {
			break
		}
		s.log.Warn("approval notifications lost; reconnecting", "err", err, "database", s.where)
		fn(store.ApprovalNotice{})
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
	return nil
}

func (s *Store) listenApprovals(ctx context.Context, fn func(store.ApprovalNotice)) error {
	cctx, cancel := context.WithTimeout(ctx, s.opts.CommitTimeout)
	conn, err := pgx.ConnectConfig(cctx, s.cfg.ConnConfig.Copy())
	cancel()
	if err != nil {
		return describe("approvals: connect to "+s.where, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{s.channel(chanApproval)}.Sanitize()); err != nil {
		return describe("approvals: listen", err)
	}
	// Anything answered before LISTEN took effect: waiters read again.
	fn(store.ApprovalNotice{})
	s.followOnce.Do(func() { close(s.following) })
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return describe("approvals: wait for notifications", err)
		}
		if an, ok := s.parseNotice(n.Payload); ok {
			fn(an)
		}
	}
}

// Following is closed once WatchApprovals first listens: from then on
// every approval any replica creates or changes reaches its fn. What was
// committed before is not announced again (waiters are woken to read it,
// but no event is published for it), so a replica that must see the
// events of another's approvals — a test of the event stream across
// replicas — waits for this first.
func (s *Store) Following() <-chan struct{} { return s.following }

// notice is the payload announcing an approval change: "REPLICA EVENT ID"
// (EVENT "-" for none).
func (s *Store) notice(id, event string) string {
	if event == "" {
		event = "-"
	}
	return s.opts.ReplicaID + " " + event + " " + id
}

func (s *Store) parseNotice(p string) (store.ApprovalNotice, bool) {
	replica, rest, ok1 := strings.Cut(p, " ")
	event, id, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || id == "" {
		return store.ApprovalNotice{}, false
	}
	if event == "-" {
		event = ""
	}
	return store.ApprovalNotice{ID: id, Event: event, Mine: replica == s.opts.ReplicaID}, true
}

// noticeEvent is the event an approval change is for a person following
// events (store.ApprovalNotice.Event).
func noticeEvent(ac *store.ApprovalChange) string {
	if ac.From == store.ApprovalPending && ac.Approval.State != store.ApprovalPending {
		return "approval.answered"
	}
	return ""
}
