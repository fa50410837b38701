package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations are applied in order, once each; user_version records how many
// ran. Append, never edit: a shipped migration is history.
var migrations = []string{
	`CREATE TABLE sessions (
		id TEXT PRIMARY KEY,
		agent BLOB NOT NULL,
		tools BLOB,
		working_dir TEXT NOT NULL DEFAULT '',
		home_dir TEXT NOT NULL DEFAULT '',
		parent_id TEXT NOT NULL DEFAULT '',
		status TEXT NOT NULL,
		mandate_version INTEGER NOT NULL,
		state BLOB NOT NULL,
		created_by TEXT NOT NULL,
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL
	);
	CREATE INDEX sessions_parent ON sessions(parent_id) WHERE parent_id != '';
	CREATE TABLE mandates (
		session_id TEXT NOT NULL REFERENCES sessions(id),
		version INTEGER NOT NULL,
		body BLOB NOT NULL,
		source TEXT NOT NULL,
		created_by TEXT NOT NULL,
		created_at INTEGER NOT NULL,
		PRIMARY KEY (session_id, version)
	);
	CREATE TABLE decisions (
		id TEXT PRIMARY KEY,
		session_id TEXT NOT NULL REFERENCES sessions(id),
		seq INTEGER NOT NULL,
		surface TEXT NOT NULL,
		tool TEXT NOT NULL,
		args BLOB NOT NULL,
		action BLOB NOT NULL,
		mandate_version INTEGER NOT NULL,
		policy_hash TEXT NOT NULL,
		effect TEXT NOT NULL,
		rules BLOB NOT NULL,
		reasons BLOB NOT NULL,
		latency_us INTEGER NOT NULL,
		created_at INTEGER NOT NULL,
		UNIQUE (session_id, seq)
	);
	CREATE TABLE observations (
		id TEXT PRIMARY KEY,
		decision_id TEXT NOT NULL DEFAULT '',
		session_id TEXT NOT NULL REFERENCES sessions(id),
		output BLOB NOT NULL,
		origin TEXT NOT NULL,
		created_at INTEGER NOT NULL
	);
	CREATE INDEX observations_decision ON observations(decision_id);
	CREATE TABLE tokens (
		id TEXT PRIMARY KEY,
		hash BLOB NOT NULL UNIQUE,
		role TEXT NOT NULL,
		agent_id TEXT NOT NULL DEFAULT '',
		name TEXT NOT NULL DEFAULT '',
		created_at INTEGER NOT NULL,
		revoked_at INTEGER
	);
	CREATE TABLE evidence (
		idx INTEGER PRIMARY KEY,
		type TEXT NOT NULL,
		session_id TEXT NOT NULL DEFAULT '',
		origin TEXT NOT NULL,
		body BLOB NOT NULL,
		leaf_hash BLOB NOT NULL,
		created_at INTEGER NOT NULL
	);
	CREATE INDEX evidence_session ON evidence(session_id) WHERE session_id != '';`,
	// Tool pinning: each tool's definition as first listed to a session,
	// and every later listing that differed from it.
	`CREATE TABLE tool_pins (
		session_id TEXT NOT NULL REFERENCES sessions(id),
		tool TEXT NOT NULL,
		hash TEXT NOT NULL,
		definition BLOB NOT NULL,
		created_at INTEGER NOT NULL,
		PRIMARY KEY (session_id, tool)
	);
	CREATE TABLE tool_changes (
		id TEXT PRIMARY KEY,
		session_id TEXT NOT NULL REFERENCES sessions(id),
		tool TEXT NOT NULL,
		pinned_hash TEXT NOT NULL,
		hash TEXT NOT NULL,
		definition BLOB NOT NULL,
		created_at INTEGER NOT NULL
	);
	CREATE INDEX tool_changes_session ON tool_changes(session_id);`,
	// Signed checkpoints of the evidence log, in the order they were made;
	// several may name the same size.
	`CREATE TABLE checkpoints (
		id INTEGER PRIMARY KEY,
		size INTEGER NOT NULL,
		root_hash BLOB NOT NULL,
		note BLOB NOT NULL,
		created_at INTEGER NOT NULL
	);`,
	// Call ids (a harness's own id for a call, e.g. Claude Code's
	// tool_use_id) on decisions and observations, so a result can be
	// observed by the id from another process; gaps: results of calls that
	// ran without Mandate's allow, with the call as reported.
	`ALTER TABLE decisions ADD COLUMN call_id TEXT NOT NULL DEFAULT '';
	CREATE INDEX decisions_call ON decisions(session_id, call_id) WHERE call_id != '';
	ALTER TABLE observations ADD COLUMN call_id TEXT NOT NULL DEFAULT '';
	ALTER TABLE observations ADD COLUMN gap INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE observations ADD COLUMN gap_reason TEXT NOT NULL DEFAULT '';
	ALTER TABLE observations ADD COLUMN tool TEXT NOT NULL DEFAULT '';
	ALTER TABLE observations ADD COLUMN args BLOB;
	CREATE INDEX observations_gap ON observations(session_id) WHERE gap = 1;`,
	// The head of a session: the last change to its state, which a
	// store.Guard compares and sets (shared stores need it; the embedded
	// one honours the same contract).
	`ALTER TABLE sessions ADD COLUMN head TEXT NOT NULL DEFAULT '';`,
	// Approvals: every ask put to a person, bound to its call (tool and
	// args hash), with its state and deadline; the whole row is kept as
	// JSON in body, the columns are for finding rows. Decisions name the
	// approval they asked for or were decided by, and the judge's opinion;
	// sessions may set their approvals' deadline.
	`CREATE TABLE approvals (
		id TEXT PRIMARY KEY,
		session_id TEXT NOT NULL REFERENCES sessions(id),
		decision_id TEXT NOT NULL,
		tool TEXT NOT NULL,
		args_hash TEXT NOT NULL,
		state TEXT NOT NULL,
		scope TEXT NOT NULL DEFAULT '',
		deadline INTEGER NOT NULL,
		rev INTEGER NOT NULL,
		created_at INTEGER NOT NULL,
		body BLOB NOT NULL
	);
	CREATE INDEX approvals_call ON approvals(session_id, tool, args_hash);
	CREATE INDEX approvals_session ON approvals(session_id, state);
	CREATE INDEX approvals_pending ON approvals(deadline) WHERE state = 'pending';
	ALTER TABLE decisions ADD COLUMN approval_id TEXT NOT NULL DEFAULT '';
	ALTER TABLE decisions ADD COLUMN judge BLOB;
	ALTER TABLE sessions ADD COLUMN approval_timeout TEXT NOT NULL DEFAULT '';`,
	// Baselines (baseline.go).
	baselineSchema,
	// Every operational row keeps the leaf hash of the evidence record
	// that describes it (store.Binding), checked whenever it is loaded;
	// evidence is found by leaf hash and by session and type. Rows made
	// before this migration are bound to their records here.
	`ALTER TABLE sessions ADD COLUMN leaf BLOB;
	ALTER TABLE mandates ADD COLUMN leaf BLOB;
	ALTER TABLE decisions ADD COLUMN leaf BLOB;
	ALTER TABLE observations ADD COLUMN leaf BLOB;
	ALTER TABLE approvals ADD COLUMN leaf BLOB;
	CREATE INDEX evidence_leaf ON evidence(leaf_hash);
	CREATE INDEX evidence_session_type ON evidence(session_id, type, idx) WHERE session_id != '';
	CREATE INDEX observations_session ON observations(session_id);
	UPDATE sessions SET leaf = m.leaf FROM (
		SELECT session_id AS id, leaf_hash AS leaf FROM evidence WHERE type = 'session' AND session_id != '') m
		WHERE m.id = sessions.id;
	UPDATE mandates SET leaf = m.leaf FROM (
		SELECT session_id AS sid, json_extract(CAST(body AS TEXT), '$.content.version') AS v, leaf_hash AS leaf FROM evidence WHERE type = 'mandate' AND session_id != '') m
		WHERE m.sid = mandates.session_id AND m.v = mandates.version;
	UPDATE decisions SET leaf = m.leaf FROM (
		SELECT json_extract(CAST(body AS TEXT), '$.content.decision_id') AS id, leaf_hash AS leaf FROM evidence WHERE type = 'decision') m
		WHERE m.id = decisions.id;
	UPDATE observations SET leaf = m.leaf FROM (
		SELECT json_extract(CAST(body AS TEXT), '$.content.observation_id') AS id, leaf_hash AS leaf FROM evidence WHERE type = 'observation') m
		WHERE m.id = observations.id;
	UPDATE approvals SET leaf = m.leaf FROM (
		SELECT COALESCE(json_extract(CAST(body AS TEXT), '$.content.approval.approval_id'), json_extract(CAST(body AS TEXT), '$.content.approval_id')) AS id, leaf_hash AS leaf, MAX(idx)
		FROM evidence WHERE type IN ('approval', 'approval_state') GROUP BY 1) m
		WHERE m.id = approvals.id;`,
	// Budgets a delegation tree shares: what the calls of a session's
	// subtree drew from its caps (store/budget.go). A first version drew
	// outside the decision's transaction and was withdrawn; the table is
	// used again, with its leaf, from the migration below.
	`CREATE TABLE budgets (
		session_id TEXT NOT NULL,
		dim TEXT NOT NULL,
		used REAL NOT NULL,
		PRIMARY KEY (session_id, dim)
	);`,
	// Each decision keeps the provenance of its values (JSON, as
	// store.Provenance; NULL for decisions made before).
	`ALTER TABLE decisions ADD COLUMN provenance BLOB;`,
	// Tool pins and tool changes are bound to their records too (the
	// gateway acts on them: a pin is what later listings are held against,
	// a change what refuses the tool). Rows made before are bound here.
	`ALTER TABLE tool_pins ADD COLUMN leaf BLOB;
	ALTER TABLE tool_changes ADD COLUMN leaf BLOB;
	UPDATE tool_pins SET leaf = m.leaf FROM (
		SELECT session_id AS sid, json_extract(CAST(body AS TEXT), '$.content.tool') AS tool, leaf_hash AS leaf FROM evidence WHERE type = 'tool_pin' AND session_id != '') m
		WHERE m.sid = tool_pins.session_id AND m.tool = tool_pins.tool;
	UPDATE tool_changes SET leaf = m.leaf FROM (
		SELECT json_extract(CAST(body AS TEXT), '$.content.change_id') AS id, leaf_hash AS leaf FROM evidence WHERE type = 'tool_change') m
		WHERE m.id = tool_changes.id;`,
	// Each budget row keeps the leaf hash of the latest draw record on it
	// (store.CheckBudget). Rows the withdrawn version left were drawn
	// outside their decisions' transactions and have no record: they go.
	`DELETE FROM budgets;
	ALTER TABLE budgets ADD COLUMN leaf BLOB;`,
	// evidence_session_type (session_id, type, idx) serves every lookup
	// evidence_session (session_id) did; keeping both cost every record
	// one more B-tree insert, in the writer's commit.
	`DROP INDEX IF EXISTS evidence_session;`,
	// A decision is stored once, in its evidence record: its row keeps
	// only what finds it (id, session and sequence, effect, call id) and
	// the record's leaf, and args only where the caller's bytes are not
	// the record's canonical form (store.LoadDecision). The table is
	// rebuilt (SQLite cannot relax NOT NULL in place), rowids kept: they
	// are the listing's commit order. Rows made before keep their args.
	`CREATE TABLE decisions_once (
		id TEXT PRIMARY KEY,
		session_id TEXT NOT NULL REFERENCES sessions(id),
		seq INTEGER NOT NULL,
		effect TEXT NOT NULL,
		call_id TEXT NOT NULL DEFAULT '',
		args BLOB,
		leaf BLOB,
		UNIQUE (session_id, seq)
	);
	INSERT INTO decisions_once (rowid, id, session_id, seq, effect, call_id, args, leaf)
		SELECT rowid, id, session_id, seq, effect, call_id, args, leaf FROM decisions ORDER BY rowid;
	DROP TABLE decisions;
	ALTER TABLE decisions_once RENAME TO decisions;
	CREATE INDEX decisions_call ON decisions(session_id, call_id) WHERE call_id != '';`,
}

func migrate(ctx context.Context, db *sql.DB) error {
	var have int
	if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&have); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if have > len(migrations) {
		return fmt.Errorf("database schema version %d is newer than this binary knows (%d): upgrade mandate", have, len(migrations))
	}
	for i := have; i < len(migrations); i++ {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		// PRAGMA takes no bound parameters.
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, i+1)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
	}
	return nil
}

// SchemaVersion is the schema version this binary writes.
func SchemaVersion() int { return len(migrations) }
