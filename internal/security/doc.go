// Package security holds Mandate's security suite: one test file per class
// of attack or misuse that probing found, each a table of cases of its own,
// run against the real engine, store, evidence log and HTTP server (no
// stubs), so that a regression of any class fails CI.
//
// The package has no code of its own beyond this file: everything is in its
// tests. The classes, one file each:
//
//	partial_test.go            what was not examined never allows: walk cut-offs, $(…) values (issue 10.1)
//	bounded_test.go            pathological inputs decided quickly, ask or deny, at every limit (10.2)
//	devcommands_test.go        build and test commands that run code, write outside, deploy; emptying files (10.3)
//	store_edits_test.go        operational rows edited behind the log's back, tool pins and changes included (issue 10.4)
//	store_edits_pg_test.go     the same on the shared PostgreSQL store, a schema per case (10.4)
//	bundle_test.go             bundles that leave records out, tool pins and changes included (10.5)
//	labels_test.go             observed versus reported, gaps, hook tokens (10.6)
//	hook_credentials_test.go   hook tokens: bound to one agent, words only, no reads or answers (10.6)
//	slow_clients_test.go       clients that give up, drip bytes or never send (10.7)
//	secrets_test.go            secrets as keys, encoded, unlabelled AWS keys: none reaches the data directory (10.8)
//
// The evidence log's own tamper classes (a record edited, deleted, inserted
// or reordered, the log truncated, a checkpoint forged, a rollback) are
// tested where the log is, in internal/evidence/tamper_test.go, and every
// store.Change field's record in internal/evidence/record_test.go.
// `go test ./internal/security/ -v -run . | grep -c '^    --- PASS'` counts
// the cases; the README's security notes list them per class.
package security
