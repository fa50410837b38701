package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/sqlstore"
)

// The statements a change is made of.
const (
	stExpect        = `SELECT mandate_expect($1, $2, $3)`
	stGuard         = `SELECT mandate_guard($1, $2, $3)`
	stInsertSession = `INSERT INTO sessions (id, agent_id, agent, tools, working_dir, home_dir, parent_id, status, mandate_version, state, created_by, created_at, updated_at, head, approval_timeout, leaf) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16)`
	stUpdateSession = `SELECT mandate_update_session($1, $2, $3, $4, $5)`
	stInsertMandate = `INSERT INTO mandates (session_id, version, body, source, created_by, created_at, leaf) VALUES ($1,$2,$3,$4,$5,$6,$7)`
	stInsertDecide  = `INSERT INTO decisions (` + sqlstore.DecisionCols + `, leaf) VALUES ($1,$2,$3,$4,$5,$6,$7)`
	stInsertObserve = `INSERT INTO observations (id, decision_id, session_id, output, origin, call_id, gap, gap_reason, tool, args, created_at, leaf) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)`
	stInsertPin     = `INSERT INTO tool_pins (` + sqlstore.ToolPinCols + `, leaf) VALUES ($1,$2,$3,$4,$5,$6)`
	stInsertToolChg = `INSERT INTO tool_changes (` + sqlstore.ToolChangeCols + `, leaf) VALUES ($1,$2,$3,$4,$5,$6,$7,$8)`
	stInsertRecord  = `INSERT INTO evidence (type, session_id, origin, body, leaf_hash, created_at) VALUES ($1,$2,$3,$4,$5,$6)`
	stNotify        = `SELECT pg_notify($1, '')`
)

// writer commits queued changes in submission order, as many as are waiting
// (up to MaxBatch) in one implicit transaction.
func (s *Store) writer() {
	defer close(s.done)
	for batch := range s.queue.Batches(s.opts.MaxBatch) {
		s.commit(batch)
	}
}

// commit writes a batch. When one change fails (a stale guard, a duplicate
// id), the batch — which PostgreSQL rolled back whole — is sent again
// without it, so each change fails or commits on its own.
func (s *Store) commit(batch []sqlstore.Job) {
	errs := make([]error, len(batch))
	live := make([]int, len(batch))
	for i := range live {
		live[i] = i
	}
	transient, lost := 0, 0
	for len(live) > 0 {
		failed, err := s.send(batch, live)
		if err == nil {
			s.commits.Add(1)
			s.changes.Add(uint64(len(live)))
			break
		}
		if errors.Is(err, errNotWritten) && lost < maxLostRetries {
			// The connection had died before the batch reached a
			// commit (a backend terminated while the connection sat in
			// the pool): nothing was written, and the pool has dropped
			// the connection. Send it again on another.
			lost++
			continue
		}
		if errors.Is(err, errTransient) && transient < maxTransientRetries {
			// A deadlock with another replica's batch (each locks the
			// session rows of its changes, in its own order) or a
			// serialization failure: PostgreSQL rolled the batch back
			// whole and names no change at fault. Send it again after a
			// moment, at random, so the other transaction goes first.
			transient++
			time.Sleep(time.Duration(rand.Int64N(int64(time.Millisecond) << transient)))
			continue
		}
		if failed < 0 {
			// Not any one change's fault: the database or the
			// connection. Every change of the batch fails.
			for _, i := range live {
				errs[i] = err
			}
			break
		}
		errs[live[failed]] = err
		live = append(live[:failed], live[failed+1:]...)
	}
	for i, j := range batch {
		j.Res <- errs[i]
	}
}

// send commits the changes batch[live...] as one pipeline ended by one Sync
// — PostgreSQL's implicit transaction: all of it or nothing. On failure it
// returns the position in live of the change that failed, or -1.
func (s *Store) send(batch []sqlstore.Job, live []int) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.CommitTimeout)
	defer cancel()
	start := time.Now()
	b := &pgx.Batch{}
	var owner []int // owner[k] is the position in live of statement k's change
	evidence := false
	for pos, i := range live {
		n := b.Len()
		queue(b, batch[i].E)
		for range b.Len() - n {
			owner = append(owner, pos)
		}
		evidence = evidence || len(batch[i].E.C.Evidence) > 0
	}
	if evidence {
		b.Queue(stNotify, s.channel(chanPending))
		owner = append(owner, -1)
	}
	// Approvals that changed wake their waiters on every replica, once
	// the transaction commits (approvals.go).
	for _, i := range live {
		for _, a := range batch[i].E.C.Approvals {
			ev := "approval"
			if a.Final() {
				ev = "approval.answered" // resolved as it was made (a judge)
			}
			b.Queue(stNotifyApproval, s.channel(chanApproval), s.notice(a.ID, ev))
			owner = append(owner, -1)
		}
		for _, ac := range batch[i].E.C.ApprovalChanges {
			b.Queue(stNotifyApproval, s.channel(chanApproval), s.notice(ac.Approval.ID, noticeEvent(ac)))
			owner = append(owner, -1)
		}
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return -1, describe("commit: connect to "+s.where, err)
	}
	defer conn.Release()
	br := conn.SendBatch(ctx, b)
	failedAt := -1
	var stmtErr error
	for k := range owner {
		if _, err := br.Exec(); err != nil {
			failedAt, stmtErr = k, err
			break
		}
	}
	closeErr := br.Close()
	took := time.Since(start)
	s.commitNanos.Add(uint64(took))
	if s.opts.OnCommit != nil {
		s.opts.OnCommit(took, len(live))
	}
	if stmtErr == nil && closeErr == nil {
		return 0, nil
	}
	if stmtErr == nil {
		stmtErr = closeErr
	}
	var pe *pgconn.PgError
	if errors.As(stmtErr, &pe) && (pe.Code == "40P01" || pe.Code == "40001") {
		return -1, fmt.Errorf("%w: %w", errTransient, describe("commit", stmtErr))
	}
	if failedAt >= 0 && (pgconn.SafeToRetry(stmtErr) || (errors.As(stmtErr, &pe) && terminated(pe.Code))) {
		// A statement's result was a terminated backend (or nothing was
		// sent at all): the implicit transaction never reached its
		// commit, so none of the batch was written.
		return -1, fmt.Errorf("%w: %w", errNotWritten, describe("commit", stmtErr))
	}
	if failedAt >= 0 && owner[failedAt] >= 0 && !isUnavailable(stmtErr) {
		c := batch[live[owner[failedAt]]].E.C
		return owner[failedAt], describe("write "+what(c), stmtErr)
	}
	err = describe("commit", stmtErr)
	if errors.Is(err, ErrUnavailable) {
		err = fmt.Errorf("%w; the change may or may not have been written: the call is refused, and the session reloads from the database", err)
	}
	return -1, err
}

// errTransient marks a batch that failed through no change's fault and
// may simply be sent again (deadlock_detected, serialization_failure).
var errTransient = errors.New("transient conflict between transactions")

// errNotWritten marks a batch that failed on a connection found dead
// before its commit: nothing of it was written.
var errNotWritten = errors.New("the connection was lost before the commit")

// maxLostRetries bounds how often one batch is sent again on another
// connection after errNotWritten.
const maxLostRetries = 2

// terminated reports SQLSTATEs of a backend ended under the connection:
// admin_shutdown, crash_shutdown, cannot_connect_now.
func terminated(code string) bool { return code == "57P01" || code == "57P02" || code == "57P03" }

// maxTransientRetries bounds how often one batch is sent again after a
// transient failure; past it its changes fail (and their calls are
// refused).
const maxTransientRetries = 6

func isUnavailable(err error) bool { return errors.Is(describe("", err), ErrUnavailable) }

// what names a change for an error message.
func what(c *store.Change) string {
	switch {
	case c.Decision != nil:
		return "decision " + c.Decision.ID
	case c.Mandate != nil:
		return fmt.Sprintf("mandate %s v%d", c.Mandate.SessionID, c.Mandate.Version)
	case c.Session != nil:
		return "session " + c.Session.ID
	case c.Observation != nil:
		return "observation " + c.Observation.ID
	case len(c.ApprovalChanges) > 0 && c.ApprovalChanges[0].Approval != nil:
		return "approval " + c.ApprovalChanges[0].Approval.ID
	}
	return "change"
}

// queue adds one change's statements to the batch, the guard first.
func queue(b *pgx.Batch, e *sqlstore.Encoded) {
	c := e.C
	newHead := ""
	if g := c.Guard; g != nil {
		for _, st := range g.Sessions {
			b.Queue(stExpect, st.ID, st.Status, st.MandateVersion)
		}
		if !c.NewSession {
			b.Queue(stGuard, g.SessionID, g.Head, g.NewHead)
		}
		newHead = g.NewHead
	}
	if s := c.Session; s != nil {
		if c.NewSession {
			b.Queue(stInsertSession, s.ID, s.Agent.ID, e.Agent, e.Tools, s.WorkingDir, s.HomeDir, s.ParentID, s.Status,
				s.MandateVersion, e.State, s.CreatedBy, s.CreatedAt.UnixNano(), s.UpdatedAt.UnixNano(), newHead, s.ApprovalTimeout, e.Leaves.Session)
		} else {
			b.Queue(stUpdateSession, s.ID, s.Status, s.MandateVersion, e.State, s.UpdatedAt.UnixNano())
		}
	}
	if m := c.Mandate; m != nil {
		b.Queue(stInsertMandate, m.SessionID, m.Version, e.Mandate, m.Source, m.CreatedBy, m.CreatedAt.UnixNano(), e.Leaves.Mandate)
	}
	if d := c.Decision; d != nil {
		b.Queue(stInsertDecide, d.ID, d.SessionID, d.Seq, d.Effect, d.CallID, e.Args, e.Leaves.Decision)
	}
	if o := c.Observation; o != nil {
		b.Queue(stInsertObserve, o.ID, o.DecisionID, o.SessionID, e.Output, o.Origin, o.CallID, o.Gap, o.GapReason, o.Tool, sqlstore.ObservationArgs(o), o.CreatedAt.UnixNano(), e.Leaves.Observation)
	}
	for i, p := range c.ToolPins {
		b.Queue(stInsertPin, p.SessionID, p.Tool, p.Hash, sqlstore.JSONOrNull(p.Definition), p.CreatedAt.UnixNano(), store.At(e.Leaves.ToolPins, i))
	}
	for i, tc := range c.ToolChanges {
		b.Queue(stInsertToolChg, tc.ID, tc.SessionID, tc.Tool, tc.PinnedHash, tc.Hash, sqlstore.JSONOrNull(tc.Definition), tc.CreatedAt.UnixNano(), store.At(e.Leaves.ToolChanges, i))
	}
	queueApprovals(b, e)
	queueDraws(b, c)
	for _, r := range c.Evidence {
		b.Queue(stInsertRecord, r.Type, r.SessionID, r.Origin, r.Body, r.LeafHash, r.CreatedAt.UnixNano())
	}
}
