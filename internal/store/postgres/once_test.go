package postgres

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/postgres/pgtest"
	"github.com/mandate-dev/mandate/internal/store/storetest"
)

// toLegacyDecisions turns the schema back to version 8, when every field
// of a decision had its own column, filled as that version's writer filled
// it from each of submitted (the decisions the table holds).
func toLegacyDecisions(ctx context.Context, t *testing.T, c *pgx.Conn, submitted []*store.Decision) {
	t.Helper()
	for _, q := range []string{
		`ALTER TABLE decisions ADD COLUMN surface TEXT NOT NULL DEFAULT '', ADD COLUMN tool TEXT NOT NULL DEFAULT '',
			ADD COLUMN action BYTEA, ADD COLUMN mandate_version INTEGER NOT NULL DEFAULT 0, ADD COLUMN policy_hash TEXT NOT NULL DEFAULT '',
			ADD COLUMN rules BYTEA, ADD COLUMN reasons BYTEA, ADD COLUMN latency_us BIGINT NOT NULL DEFAULT 0, ADD COLUMN created_at BIGINT NOT NULL DEFAULT 0,
			ADD COLUMN approval_id TEXT NOT NULL DEFAULT '', ADD COLUMN judge BYTEA, ADD COLUMN signals BYTEA, ADD COLUMN provenance BYTEA`,
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, d := range submitted {
		args := append(storetest.LegacyDecisionColumns(d), d.ID)
		tag, err := c.Exec(ctx, `UPDATE decisions SET surface = $1, tool = $2, args = $3, action = $4, mandate_version = $5, policy_hash = $6, rules = $7, reasons = $8,
			latency_us = $9, created_at = $10, approval_id = $11, judge = $12, signals = $13, provenance = $14 WHERE id = $15`, args...)
		if err != nil || tag.RowsAffected() != 1 {
			t.Fatalf("decision %s back to its columns: %v", d.ID, err)
		}
	}
	for _, q := range []string{
		`ALTER TABLE decisions ALTER COLUMN args SET NOT NULL, ALTER COLUMN action SET NOT NULL, ALTER COLUMN rules SET NOT NULL, ALTER COLUMN reasons SET NOT NULL`,
		`UPDATE mandate_schema SET version = 8`,
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestDecisionStoredOnce: a decision's row keeps only what finds it (args
// only when the caller's bytes are not the record's), every read gives the
// decision back as when each field had its column, and a store written so
// (schema version 8) upgrades to it and reads exactly as before.
func TestDecisionStoredOnce(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	s := openTest(t, dsn, Options{})
	rs := storetest.Recording(s)
	submitted := storetest.OnceDecisions()
	changes := []*store.Change{storetest.NewSession("s1")}
	for _, d := range submitted {
		changes = append(changes, &store.Change{Decision: d})
	}
	for _, c := range changes {
		if err := store.Apply(ctx, rs, c); err != nil {
			t.Fatal(err)
		}
	}
	storetest.Sync(ctx, t, s)
	check := func(when string) {
		t.Helper()
		got, err := s.ListDecisions(ctx, store.DecisionFilter{SessionID: "s1"})
		if err != nil || len(got) != len(submitted) {
			t.Fatalf("%s: list: %d %v", when, len(got), err)
		}
		for i, d := range submitted {
			want := storetest.AsReadBefore(d)
			if !reflect.DeepEqual(got[i], want) {
				t.Errorf("%s: decision %s:\n got %+v\nwant %+v", when, d.ID, got[i], want)
			}
			if one, err := s.GetDecision(ctx, d.ID); err != nil || !reflect.DeepEqual(one, want) {
				t.Errorf("%s: get %s: %v %+v", when, d.ID, err, one)
			}
		}
		if d, err := s.DecisionByCall(ctx, "s1", "toolu_1"); err != nil || d.ID != "s1-d1" {
			t.Errorf("%s: by call: %+v %v", when, d, err)
		}
		if all, err := s.ListDecisions(ctx, store.DecisionFilter{}); err != nil || len(all) != 3 || all[0].ID != "s1-d3" {
			t.Errorf("%s: newest first: %v %v", when, all, err)
		}
	}
	check("stored once")
	c := pgtest.Conn(t, dsn)
	var args []string
	rows, err := c.Query(ctx, `SELECT id || '=' || COALESCE(convert_from(args, 'UTF8'), 'NULL') FROM decisions ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var a string
		rows.Scan(&a)
		args = append(args, a)
	}
	rows.Close()
	if want := `s1-d1=` + string(submitted[0].Args) + `,s1-d2=NULL,s1-d3={}`; strings.Join(args, ",") != want {
		t.Errorf("args kept: %v, want %s", args, want)
	}
	s.Close()
	toLegacyDecisions(ctx, t, c, submitted)
	s = openTest(t, dsn, Options{})
	check("after the upgrade")
	storetest.Upgraded(t, s, "s1", 0, 0)
	for _, q := range []string{`UPDATE decisions SET effect = 'allow' WHERE id = 's1-d3'`} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	var te *store.TamperError
	if _, err := s.GetDecision(ctx, "s1-d3"); !errors.As(err, &te) || te.Row != "s1-d3" || te.Column != "effect" {
		t.Fatalf("edited decision after the upgrade: %v", err)
	}
	if _, err := c.Exec(ctx, `UPDATE decisions SET effect = 'deny' WHERE id = 's1-d3'`); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, `UPDATE evidence SET body = convert_to(replace(convert_from(body, 'UTF8'), '"policy_hash":"ph"', '"policy_hash":"pX"'), 'UTF8') WHERE type = 'decision' AND position('"s1-d2"' in convert_from(body, 'UTF8')) > 0`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetDecision(ctx, "s1-d2"); !errors.As(err, &te) || te.Row != "s1-d2" || te.Column != "leaf" {
		t.Fatalf("a decision whose record was edited: %v", err)
	}
}
