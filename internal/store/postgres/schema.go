package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// migrations are applied in order, once each, each in its own transaction;
// mandate_schema records how many ran. Append, never edit: a shipped
// migration is history. Every table the SQLite backend has is here with the
// same columns; JSON is kept as the bytes the engine wrote (bytea, not
// jsonb, which would reorder keys), times as Unix nanoseconds, as there.
var migrations = []string{
	// 1: the tables of SQLite's migrations 1-4, and what sharing needs:
	// sessions.head (the last change to a session's state, compared and
	// set by store.Guard), ord columns for listing in insertion order
	// (SQLite's rowid), and evidence records that are durable before they
	// have an index: the integrator assigns idx in order.
	`CREATE TABLE sessions (
		ord BIGSERIAL NOT NULL UNIQUE,
		id TEXT PRIMARY KEY,
		agent_id TEXT NOT NULL DEFAULT '',
		agent BYTEA NOT NULL,
		tools BYTEA,
		working_dir TEXT NOT NULL DEFAULT '',
		home_dir TEXT NOT NULL DEFAULT '',
		parent_id TEXT NOT NULL DEFAULT '',
		status TEXT NOT NULL,
		mandate_version INTEGER NOT NULL,
		state BYTEA NOT NULL,
		created_by TEXT NOT NULL,
		created_at BIGINT NOT NULL,
		updated_at BIGINT NOT NULL,
		head TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX sessions_parent ON sessions(parent_id) WHERE parent_id <> '';
	CREATE INDEX sessions_agent ON sessions(agent_id, ord);
	CREATE TABLE mandates (
		session_id TEXT NOT NULL REFERENCES sessions(id),
		version INTEGER NOT NULL,
		body BYTEA NOT NULL,
		source TEXT NOT NULL,
		created_by TEXT NOT NULL,
		created_at BIGINT NOT NULL,
		PRIMARY KEY (session_id, version)
	);
	CREATE TABLE decisions (
		ord BIGSERIAL NOT NULL UNIQUE,
		id TEXT PRIMARY KEY,
		session_id TEXT NOT NULL REFERENCES sessions(id),
		seq INTEGER NOT NULL,
		surface TEXT NOT NULL,
		tool TEXT NOT NULL,
		args BYTEA NOT NULL,
		action BYTEA NOT NULL,
		mandate_version INTEGER NOT NULL,
		policy_hash TEXT NOT NULL,
		effect TEXT NOT NULL,
		rules BYTEA NOT NULL,
		reasons BYTEA NOT NULL,
		latency_us BIGINT NOT NULL,
		created_at BIGINT NOT NULL,
		call_id TEXT NOT NULL DEFAULT '',
		UNIQUE (session_id, seq)
	);
	CREATE INDEX decisions_call ON decisions(session_id, call_id) WHERE call_id <> '';
	CREATE TABLE observations (
		ord BIGSERIAL NOT NULL UNIQUE,
		id TEXT PRIMARY KEY,
		decision_id TEXT NOT NULL DEFAULT '',
		session_id TEXT NOT NULL REFERENCES sessions(id),
		output BYTEA NOT NULL,
		origin TEXT NOT NULL,
		call_id TEXT NOT NULL DEFAULT '',
		gap BOOLEAN NOT NULL DEFAULT false,
		gap_reason TEXT NOT NULL DEFAULT '',
		tool TEXT NOT NULL DEFAULT '',
		args BYTEA,
		created_at BIGINT NOT NULL
	);
	CREATE INDEX observations_decision ON observations(decision_id);
	CREATE INDEX observations_gap ON observations(session_id, ord) WHERE gap;
	CREATE TABLE tokens (
		id TEXT PRIMARY KEY,
		hash BYTEA NOT NULL UNIQUE,
		role TEXT NOT NULL,
		agent_id TEXT NOT NULL DEFAULT '',
		name TEXT NOT NULL DEFAULT '',
		created_at BIGINT NOT NULL,
		revoked_at BIGINT
	);
	CREATE TABLE tool_pins (
		ord BIGSERIAL NOT NULL UNIQUE,
		session_id TEXT NOT NULL REFERENCES sessions(id),
		tool TEXT NOT NULL,
		hash TEXT NOT NULL,
		definition BYTEA NOT NULL,
		created_at BIGINT NOT NULL,
		PRIMARY KEY (session_id, tool)
	);
	CREATE TABLE tool_changes (
		ord BIGSERIAL NOT NULL UNIQUE,
		id TEXT PRIMARY KEY,
		session_id TEXT NOT NULL REFERENCES sessions(id),
		tool TEXT NOT NULL,
		pinned_hash TEXT NOT NULL,
		hash TEXT NOT NULL,
		definition BYTEA NOT NULL,
		created_at BIGINT NOT NULL
	);
	CREATE INDEX tool_changes_session ON tool_changes(session_id, ord);
	-- Evidence records: id orders them as they were committed by each
	-- replica; idx is their place in the log, set once by the integrator.
	CREATE TABLE evidence (
		id BIGSERIAL PRIMARY KEY,
		idx BIGINT UNIQUE,
		type TEXT NOT NULL,
		session_id TEXT NOT NULL DEFAULT '',
		origin TEXT NOT NULL,
		body BYTEA NOT NULL,
		leaf_hash BYTEA NOT NULL,
		created_at BIGINT NOT NULL
	);
	CREATE INDEX evidence_pending ON evidence(id) WHERE idx IS NULL;
	CREATE INDEX evidence_session ON evidence(session_id, idx) WHERE session_id <> '';
	-- The integrated size of the log: one row, moved only by the integrator.
	CREATE TABLE evidence_head (
		one BOOLEAN PRIMARY KEY DEFAULT true CHECK (one),
		size BIGINT NOT NULL
	);
	INSERT INTO evidence_head (size) VALUES (0);
	CREATE TABLE checkpoints (
		id BIGSERIAL PRIMARY KEY,
		size BIGINT NOT NULL,
		root_hash BYTEA NOT NULL,
		note BYTEA NOT NULL,
		created_at BIGINT NOT NULL
	);
	-- Replicas announce themselves here (replica count, integrator role).
	CREATE TABLE replicas (
		id TEXT PRIMARY KEY,
		started_at BIGINT NOT NULL,
		seen_at BIGINT NOT NULL,
		integrator BOOLEAN NOT NULL DEFAULT false
	);
	-- Guards (store.Guard) raise SQLSTATE MD001 when the state a change was
	-- decided on has moved, MD002 when the session does not exist; a
	-- failed statement aborts its whole batch, so nothing is written.
	CREATE FUNCTION mandate_guard(p_id TEXT, p_head TEXT, p_new TEXT) RETURNS void
	LANGUAGE plpgsql AS $$
	BEGIN
		UPDATE sessions SET head = p_new WHERE id = p_id AND head = p_head;
		IF NOT FOUND THEN
			IF EXISTS (SELECT 1 FROM sessions WHERE id = p_id) THEN
				RAISE EXCEPTION 'session % changed since this was decided', p_id USING ERRCODE = 'MD001';
			END IF;
			RAISE EXCEPTION 'session % not found', p_id USING ERRCODE = 'MD002';
		END IF;
	END $$;
	CREATE FUNCTION mandate_expect(p_id TEXT, p_status TEXT, p_version INTEGER) RETURNS void
	LANGUAGE plpgsql AS $$
	BEGIN
		IF NOT EXISTS (SELECT 1 FROM sessions WHERE id = p_id AND status = p_status AND mandate_version = p_version) THEN
			IF EXISTS (SELECT 1 FROM sessions WHERE id = p_id) THEN
				RAISE EXCEPTION 'session % changed since this was decided', p_id USING ERRCODE = 'MD001';
			END IF;
			RAISE EXCEPTION 'session % not found', p_id USING ERRCODE = 'MD002';
		END IF;
	END $$;
	CREATE FUNCTION mandate_update_session(p_id TEXT, p_status TEXT, p_version INTEGER, p_state BYTEA, p_updated BIGINT) RETURNS void
	LANGUAGE plpgsql AS $$
	BEGIN
		UPDATE sessions SET status = p_status, mandate_version = p_version, state = p_state, updated_at = p_updated WHERE id = p_id;
		IF NOT FOUND THEN
			RAISE EXCEPTION 'session % not found', p_id USING ERRCODE = 'MD002';
		END IF;
	END $$;`,
	// Baselines (baseline.go).
	baselineSchema,
	// 3: approvals (as in the SQLite store): every ask put to a person, bound
	// to its call (tool and args hash), with its state and deadline; the
	// whole row is kept as JSON in body, the columns are for finding rows.
	// An answer names the revision it replaces: mandate_update_approval
	// raises MD003 when the row moved on (someone else answered, or it
	// expired), so of two answers exactly one commits. Decisions name the
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
		deadline BIGINT NOT NULL,
		rev INTEGER NOT NULL,
		created_at BIGINT NOT NULL,
		body BYTEA NOT NULL
	);
	CREATE INDEX approvals_call ON approvals(session_id, tool, args_hash);
	CREATE INDEX approvals_session ON approvals(session_id, state);
	CREATE INDEX approvals_pending ON approvals(deadline) WHERE state = 'pending';
	ALTER TABLE decisions ADD COLUMN approval_id TEXT NOT NULL DEFAULT '';
	ALTER TABLE decisions ADD COLUMN judge BYTEA;
	ALTER TABLE sessions ADD COLUMN approval_timeout TEXT NOT NULL DEFAULT '';
	CREATE FUNCTION mandate_update_approval(p_id TEXT, p_state TEXT, p_scope TEXT, p_deadline BIGINT, p_rev INTEGER, p_body BYTEA) RETURNS void
	LANGUAGE plpgsql AS $$
	BEGIN
		UPDATE approvals SET state = p_state, scope = p_scope, deadline = p_deadline, rev = p_rev, body = p_body WHERE id = p_id AND rev = p_rev - 1;
		IF NOT FOUND THEN
			IF EXISTS (SELECT 1 FROM approvals WHERE id = p_id) THEN
				RAISE EXCEPTION 'approval % changed since it was read (someone else answered it, or it expired)', p_id USING ERRCODE = 'MD003';
			END IF;
			RAISE EXCEPTION 'approval % not found', p_id USING ERRCODE = 'MD002';
		END IF;
	END $$;`,
	// 4: every operational row keeps the leaf hash of the evidence record
	// that describes it (store.Binding), checked whenever it is loaded, as
	// in the SQLite store; evidence is found by leaf hash and by session
	// and type. Rows made before are bound to their records here. An
	// approval's answer sets its row's leaf with the rest.
	`ALTER TABLE sessions ADD COLUMN leaf BYTEA;
	ALTER TABLE mandates ADD COLUMN leaf BYTEA;
	ALTER TABLE decisions ADD COLUMN leaf BYTEA;
	ALTER TABLE observations ADD COLUMN leaf BYTEA;
	ALTER TABLE approvals ADD COLUMN leaf BYTEA;
	CREATE INDEX evidence_leaf ON evidence(leaf_hash);
	CREATE INDEX evidence_session_type ON evidence(session_id, type, id) WHERE session_id <> '';
	CREATE INDEX observations_session ON observations(session_id);
	UPDATE sessions s SET leaf = e.leaf_hash FROM evidence e WHERE e.type = 'session' AND e.session_id = s.id AND e.session_id <> '';
	UPDATE mandates m SET leaf = e.leaf_hash FROM evidence e
		WHERE e.type = 'mandate' AND e.session_id = m.session_id AND e.session_id <> '' AND (convert_from(e.body, 'UTF8')::jsonb #>> '{content,version}')::int = m.version;
	UPDATE decisions d SET leaf = e.leaf_hash FROM evidence e
		WHERE e.type = 'decision' AND e.session_id = d.session_id AND e.session_id <> '' AND convert_from(e.body, 'UTF8')::jsonb #>> '{content,decision_id}' = d.id;
	UPDATE observations o SET leaf = e.leaf_hash FROM evidence e
		WHERE e.type = 'observation' AND e.session_id = o.session_id AND e.session_id <> '' AND convert_from(e.body, 'UTF8')::jsonb #>> '{content,observation_id}' = o.id;
	UPDATE approvals a SET leaf = x.leaf_hash FROM (
		SELECT DISTINCT ON (aid) aid, leaf_hash FROM (
			SELECT COALESCE(j #>> '{content,approval,approval_id}', j #>> '{content,approval_id}') AS aid, leaf_hash, id
			FROM (SELECT convert_from(body, 'UTF8')::jsonb AS j, leaf_hash, id FROM evidence WHERE type IN ('approval', 'approval_state')) r) q
		ORDER BY aid, id DESC) x
		WHERE x.aid = a.id;
	CREATE FUNCTION mandate_update_approval(p_id TEXT, p_state TEXT, p_scope TEXT, p_deadline BIGINT, p_rev INTEGER, p_body BYTEA, p_leaf BYTEA) RETURNS void
	LANGUAGE plpgsql AS $$
	BEGIN
		UPDATE approvals SET state = p_state, scope = p_scope, deadline = p_deadline, rev = p_rev, body = p_body, leaf = p_leaf WHERE id = p_id AND rev = p_rev - 1;
		IF NOT FOUND THEN
			IF EXISTS (SELECT 1 FROM approvals WHERE id = p_id) THEN
				RAISE EXCEPTION 'approval % changed since it was read (someone else answered it, or it expired)', p_id USING ERRCODE = 'MD003';
			END IF;
			RAISE EXCEPTION 'approval % not found', p_id USING ERRCODE = 'MD002';
		END IF;
	END $$;`,
	// 5: budgets a delegation tree shares (store/budget.go). A first
	// version drew outside the decision's transaction and was withdrawn;
	// the table is used again, with its leaf, from the migration below.
	`CREATE TABLE budgets (
		session_id TEXT NOT NULL,
		dim TEXT NOT NULL,
		used DOUBLE PRECISION NOT NULL,
		PRIMARY KEY (session_id, dim)
	);`,
	// Each decision keeps the provenance of its values (JSON, as
	// store.Provenance; NULL for decisions made before).
	`ALTER TABLE decisions ADD COLUMN provenance BYTEA;`,
	// Tool pins and tool changes are bound to their records too (the
	// gateway acts on them: a pin is what later listings are held against,
	// a change what refuses the tool), as in the SQLite store. Rows made
	// before are bound here.
	`ALTER TABLE tool_pins ADD COLUMN leaf BYTEA;
	ALTER TABLE tool_changes ADD COLUMN leaf BYTEA;
	UPDATE tool_pins p SET leaf = e.leaf_hash FROM evidence e
		WHERE e.type = 'tool_pin' AND e.session_id = p.session_id AND e.session_id <> '' AND convert_from(e.body, 'UTF8')::jsonb #>> '{content,tool}' = p.tool;
	UPDATE tool_changes c SET leaf = e.leaf_hash FROM evidence e
		WHERE e.type = 'tool_change' AND e.session_id = c.session_id AND e.session_id <> '' AND convert_from(e.body, 'UTF8')::jsonb #>> '{content,change_id}' = c.id;`,
	// Each budget row keeps the leaf hash of the latest draw record on it
	// (store.CheckBudget); rows the withdrawn version left were drawn
	// outside their decisions' transactions and have no record: they go.
	// mandate_draw applies one draw of a change, under the budget row's
	// lock, only if the budget still stands at p_from (no row: 0) and
	// p_to is within p_cap; otherwise it raises MD004 (store.ErrBudget)
	// and the batch's change fails whole.
	`DELETE FROM budgets;
	ALTER TABLE budgets ADD COLUMN leaf BYTEA;
	CREATE FUNCTION mandate_draw(p_session TEXT, p_dim TEXT, p_from DOUBLE PRECISION, p_to DOUBLE PRECISION, p_cap DOUBLE PRECISION, p_leaf BYTEA) RETURNS void
	LANGUAGE plpgsql AS $$
	DECLARE have DOUBLE PRECISION;
	BEGIN
		IF p_cap IS NOT NULL AND p_to > p_cap THEN
			RAISE EXCEPTION 'budget % of session % would reach %, past its cap of %', p_dim, p_session, p_to, p_cap USING ERRCODE = 'MD004';
		END IF;
		IF p_from = 0 THEN
			INSERT INTO budgets (session_id, dim, used, leaf) VALUES (p_session, p_dim, p_to, p_leaf) ON CONFLICT (session_id, dim) DO NOTHING;
		ELSE
			UPDATE budgets SET used = p_to, leaf = p_leaf WHERE session_id = p_session AND dim = p_dim AND used = p_from;
		END IF;
		IF NOT FOUND THEN
			SELECT used INTO have FROM budgets WHERE session_id = p_session AND dim = p_dim;
			RAISE EXCEPTION 'budget % of session % stands at %, not % as decided', p_dim, p_session, COALESCE(have, 0), p_from USING ERRCODE = 'MD004';
		END IF;
	END $$;`,
	// A decision is stored once, in its evidence record: its row keeps
	// only what finds it (id, session and sequence, effect, call id) and
	// the record's leaf, and args only where the caller's bytes are not
	// the record's canonical form (store.LoadDecision). Rows made before
	// keep their args; the dropped columns' space in them is reclaimed by
	// a later VACUUM FULL decisions.
	`ALTER TABLE decisions ALTER COLUMN args DROP NOT NULL;
	ALTER TABLE decisions DROP COLUMN surface, DROP COLUMN tool, DROP COLUMN action, DROP COLUMN mandate_version,
		DROP COLUMN policy_hash, DROP COLUMN rules, DROP COLUMN reasons, DROP COLUMN latency_us, DROP COLUMN created_at,
		DROP COLUMN approval_id, DROP COLUMN judge, DROP COLUMN signals, DROP COLUMN provenance;`,
}

// SchemaVersion is the schema version this binary writes.
func SchemaVersion() int { return len(migrations) }

// migrationLock is the advisory lock key replicas take while migrating, so
// that several starting at once apply each migration once.
const migrationLock = "mandate.migrate"

// migrate applies the migrations the database lacks and returns the schema
// version found before and after. It refuses a newer schema.
func migrate(ctx context.Context, conn *pgx.Conn) (from, to int, err error) {
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtext($1 || current_schema()))`, migrationLock); err != nil {
		return 0, 0, describe("take the migration lock", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtext($1 || current_schema()))`, migrationLock)
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS mandate_schema (version INTEGER NOT NULL)`); err != nil {
		return 0, 0, describe("create the schema version table", err)
	}
	have, err := schemaVersion(ctx, conn)
	if err != nil {
		return 0, 0, err
	}
	if have > len(migrations) {
		return have, have, fmt.Errorf("%w: the database's schema version is %d, newer than this binary knows (%d): upgrade mandate", ErrNewerSchema, have, len(migrations))
	}
	for i := have; i < len(migrations); i++ {
		if err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, migrations[i]); err != nil {
				return err
			}
			if i == 0 {
				_, err = tx.Exec(ctx, `INSERT INTO mandate_schema (version) VALUES (1)`)
			} else {
				_, err = tx.Exec(ctx, `UPDATE mandate_schema SET version = $1`, i+1)
			}
			return err
		}); err != nil {
			return have, i, describe(fmt.Sprintf("migration %d", i+1), err)
		}
	}
	return have, len(migrations), nil
}

// schemaVersion reads mandate_schema; a database without it has version 0.
func schemaVersion(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (int, error) {
	var have int
	err := q.QueryRow(ctx, `SELECT COALESCE((SELECT version FROM mandate_schema), 0)`).Scan(&have)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42P01" { // undefined_table
		return 0, nil
	}
	if err != nil {
		return 0, describe("read the schema version", err)
	}
	return have, nil
}
