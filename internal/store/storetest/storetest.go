// Package storetest is the store conformance suite: every behaviour of
// store.Store the engine, the API and the evidence log rely on, failure
// cases included, run against each backend (SQLite and PostgreSQL) by that
// backend's tests:
//
//	func TestConformance(t *testing.T) { storetest.Run(t, backend) }
//
// A backend passes by behaving the same observable way, not by sharing
// code. Where backends legitimately differ — evidence records are readable
// at once in the embedded store, after integration in a shared one — the
// suite waits the way callers do (SyncEvidence).
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/evidence"
	"github.com/mandate-dev/mandate/internal/mandate"
	"github.com/mandate-dev/mandate/internal/store"
)

// Backend opens stores for the suite.
type Backend struct {
	// New returns the location of a fresh, empty store.
	New func(t *testing.T) string
	// Open opens the store at loc; onEvidence is the store's evidence
	// callback (the integrated records' leaf hashes, in index order).
	Open func(t *testing.T, loc string, onEvidence func(first uint64, hashes [][]byte)) (store.Store, error)
	// Shared says two stores may be open on one location at once
	// (replicas); the cross-replica cases run only then.
	Shared bool
}

// Syncer is implemented by stores whose evidence records are readable some
// time after their change is acknowledged (shared stores, once integrated).
type Syncer interface {
	SyncEvidence(ctx context.Context) error
}

// kept is s's T, an optional part of a store (store.Approvals, say); a
// store without it fails t, saying why the suite asks for it.
func kept[T any](t *testing.T, s store.Store, why string) T {
	t.Helper()
	v, ok := Unwrap(s).(T)
	if !ok {
		t.Fatalf("%T keeps no %v: %s", s, reflect.TypeFor[T](), why)
	}
	return v
}

// Sync waits until s's evidence reads see every record committed so far.
func Sync(ctx context.Context, t testing.TB, s store.Store) {
	t.Helper()
	if sy, ok := Unwrap(s).(Syncer); ok {
		ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if err := sy.SyncEvidence(ctx); err != nil {
			t.Fatalf("sync evidence: %v", err)
		}
	}
}

// Run runs the suite.
func Run(t *testing.T, b Backend) {
	cases := []struct {
		name string
		fn   func(*testing.T, Backend)
	}{
		{"RoundTripAndReopen", testRoundTrip},
		{"ChangeIsAtomic", testAtomic},
		{"BatchIsolatesFailures", testIsolation},
		{"UpdateMissingSession", testMissingSession},
		{"SubmitAfterClose", testClosed},
		{"Tokens", testTokens},
		{"Listing", testListing},
		{"ListingByTreeAndAgent", testTreeListing},
		{"CallsAndGaps", testGaps},
		{"ToolPins", testToolPins},
		{"Evidence", testEvidence},
		{"Checkpoints", testCheckpoints},
		{"Guard", testGuard},
		{"GuardPipelined", testGuardPipelined},
		{"GuardAcrossReplicas", testGuardReplicas},
		{"EvidenceAcrossReplicas", testEvidenceAcrossReplicas},
		// budgets.go
		{"Budgets", testBudgets},
		{"BudgetsAcrossReplicas", testBudgetReplicas},
		// approvals.go
		{"Approvals", testApprovals},
		{"ApprovalRace", testApprovalRace},
		{"ApprovalWatch", testApprovalWatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each case has a store of its own
			c.fn(t, b)
		})
	}
}

type recorder struct {
	mu     sync.Mutex
	next   uint64
	hashes [][]byte
	err    error
}

func (r *recorder) on(first uint64, hashes [][]byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if first != r.next && r.err == nil {
		r.err = fmt.Errorf("OnEvidence at %d, want %d (not in order, or a gap)", first, r.next)
	}
	r.next = first + uint64(len(hashes))
	r.hashes = append(r.hashes, hashes...)
}

func open(t *testing.T, b Backend, loc string, rec *recorder) store.Store {
	t.Helper()
	on := func(uint64, [][]byte) {}
	if rec != nil {
		on = rec.on
	}
	s, err := b.Open(t, loc, on)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return Recording(s)
}

// Recording returns s with every submitted change described by evidence
// records first, as the engine does: the store binds each row to its
// record and refuses rows without one when it loads them.
func Recording(s store.Store) store.Store {
	return &recording{Store: s, r: evidence.NewRecorder(func() time.Time { return epoch })}
}

// Unwrap returns the store under Recording, for its other interfaces
// (approvals, baselines, evidence sync). Writes must still go through the
// recording store.
func Unwrap(s store.Store) store.Store {
	if r, ok := s.(*recording); ok {
		return r.Store
	}
	return s
}

type recording struct {
	store.Store
	r *evidence.Recorder
}

func (r *recording) Submit(c *store.Change) <-chan error {
	recs, err := r.r.Record(c)
	if err != nil {
		ch := make(chan error, 1)
		ch <- err
		return ch
	}
	c.Evidence = append(recs, c.Evidence...)
	return r.Store.Submit(c)
}

var epoch = time.Unix(1700000000, 123456789).UTC()

func rec(typ, sess, body string) *store.EvidenceRecord {
	b := []byte(body)
	return &store.EvidenceRecord{Type: typ, SessionID: sess, Origin: "observed", Body: b, LeafHash: evidence.LeafHash(b), CreatedAt: epoch}
}

// NewSession is a change creating session id with mandate version 1. Its
// evidence records are added when it is submitted through Recording.
func NewSession(id string) *store.Change {
	return &store.Change{
		NewSession: true,
		Session: &store.Session{ID: id, Agent: store.Agent{ID: "a1", Model: "m"}, Status: store.StatusActive,
			MandateVersion: 1, CreatedBy: "tok", CreatedAt: epoch, UpdatedAt: epoch,
			WorkingDir: "/w", HomeDir: "/h",
			Tools: []action.ToolDef{{Name: "send_email", Description: "Send"}},
			State: store.Counters{Counts: map[string]int{}, Spend: map[string]float64{}}},
		Mandate: &store.MandateVersion{SessionID: id, Version: 1, Source: "user", CreatedBy: "tok", CreatedAt: epoch,
			Mandate: &mandate.Mandate{Version: 1, Allow: []action.Kind{action.Read}}},
	}
}

// Decision is a change adding decision seq of session sess (recorded when
// submitted through Recording).
func Decision(sess string, seq int) *store.Change {
	id := fmt.Sprintf("%s-d%d", sess, seq)
	return &store.Change{
		Decision: &store.Decision{ID: id, SessionID: sess, Seq: seq, Surface: "api", Tool: "Read",
			Args: json.RawMessage(`{"file_path":"/x"}`), Action: &action.Action{Tool: "Read", Kind: action.Read},
			MandateVersion: 1, PolicyHash: "h", Effect: "allow", Rules: []string{"r"}, Reasons: []string{"why"}, CreatedAt: epoch.Add(time.Duration(seq)), CallID: fmt.Sprintf("call-%d", seq)},
	}
}

func apply(t *testing.T, s store.Store, c *store.Change) {
	t.Helper()
	if err := store.Apply(context.Background(), s, c); err != nil {
		t.Fatalf("apply: %v", err)
	}
}

func testRoundTrip(t *testing.T, b Backend) {
	ctx := context.Background()
	loc := b.New(t)
	s0, err := b.Open(t, loc, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := Recording(s0)
	apply(t, s, NewSession("s1"))
	apply(t, s, Decision("s1", 1))
	upd := &store.Session{ID: "s1", Status: store.StatusSuspended, MandateVersion: 2, UpdatedAt: epoch.Add(time.Second),
		State: store.Counters{Counts: map[string]int{"read": 1}, Spend: map[string]float64{"EUR": 12.5}, Calls: 1}}
	apply(t, s, &store.Change{Session: upd, Mandate: &store.MandateVersion{SessionID: "s1", Version: 2, Source: "admin", CreatedBy: "tok2", CreatedAt: epoch,
		Mandate: &mandate.Mandate{Version: 2, Allow: []action.Kind{action.Read, action.Send}}}})
	apply(t, s, &store.Change{Observation: &store.Observation{ID: "o1", DecisionID: "s1-d1", SessionID: "s1", Output: json.RawMessage(`{"ok":true}`), Origin: "observed", CreatedAt: epoch}})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, b, loc, nil)
	got, err := s.GetSession(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Agent.Model != "m" || got.Tools[0].Name != "send_email" || got.CreatedAt.UnixNano() != epoch.UnixNano() ||
		got.WorkingDir != "/w" || got.HomeDir != "/h" || got.Status != store.StatusSuspended || got.MandateVersion != 2 ||
		got.State.Spend["EUR"] != 12.5 || got.State.Counts["read"] != 1 || got.State.Calls != 1 || !got.UpdatedAt.Equal(epoch.Add(time.Second)) {
		t.Errorf("session round trip: %+v", got)
	}
	mv, err := s.GetMandate(ctx, "s1", 0)
	if err != nil || mv.Version != 2 || len(mv.Mandate.Allow) != 2 || mv.Source != "admin" {
		t.Fatalf("latest mandate: %+v %v", mv, err)
	}
	mv, err = s.GetMandate(ctx, "s1", 1)
	if err != nil || mv.Version != 1 || mv.Mandate.Allow[0] != action.Read || !mv.CreatedAt.Equal(epoch) {
		t.Fatalf("mandate v1: %+v %v", mv, err)
	}
	if _, err := s.GetMandate(ctx, "s1", 3); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing mandate version: %v", err)
	}
	all, err := s.ListMandates(ctx, "s1")
	if err != nil || len(all) != 2 || all[0].Version != 1 || all[1].Version != 2 {
		t.Errorf("list mandates: %v %v", all, err)
	}
	d, err := s.GetDecision(ctx, "s1-d1")
	if err != nil {
		t.Fatal(err)
	}
	if d.Seq != 1 || d.Action.Kind != action.Read || string(d.Args) != `{"file_path":"/x"}` || d.Rules[0] != "r" || d.Reasons[0] != "why" || d.CallID != "call-1" || d.CreatedAt.UnixNano() != epoch.Add(1).UnixNano() {
		t.Errorf("decision round trip: %+v", d)
	}
	obs, err := s.ListObservations(ctx, "s1-d1")
	if err != nil || len(obs) != 1 || string(obs[0].Output) != `{"ok":true}` || obs[0].Origin != "observed" {
		t.Errorf("observations: %+v %v", obs, err)
	}
	if _, err := s.GetSession(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing session: %v", err)
	}
	if _, err := s.GetDecision(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing decision: %v", err)
	}
}

func size(t *testing.T, s store.Store) uint64 {
	t.Helper()
	Sync(context.Background(), t, s)
	n, err := s.EvidenceSize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// testAtomic: a change that fails part-way writes nothing of itself: not its
// rows, not its session update, not its evidence.
func testAtomic(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b, b.New(t), nil)
	apply(t, s, NewSession("s1"))
	apply(t, s, Decision("s1", 1))
	before := size(t, s)
	bad := Decision("s1", 1) // same id and seq: a conflict
	bad.Decision.ID = "s1-other"
	bad.Session = &store.Session{ID: "s1", Status: store.StatusTerminated, MandateVersion: 1, UpdatedAt: epoch}
	bad.Evidence = append(bad.Evidence, rec("decision", "s1", `{"x":1}`))
	err := store.Apply(ctx, s, bad)
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("duplicate seq: got %v, want ErrConflict", err)
	}
	if got, _ := s.GetSession(ctx, "s1"); got.Status != store.StatusActive {
		t.Errorf("the failed change's session update was written: %s", got.Status)
	}
	if _, err := s.GetDecision(ctx, "s1-other"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the failed change's decision was written: %v", err)
	}
	if n := size(t, s); n != before {
		t.Errorf("the failed change's evidence was written: %d records, want %d", n, before)
	}
	dup := NewSession("s1")
	if err := store.Apply(ctx, s, dup); !errors.Is(err, store.ErrConflict) {
		t.Errorf("duplicate session: %v", err)
	}
	orphan := Decision("ghost", 1)
	if err := store.Apply(ctx, s, orphan); !errors.Is(err, store.ErrConflict) {
		t.Errorf("decision of a missing session: %v, want ErrConflict (a foreign key)", err)
	}
}

// testIsolation: in a batch of concurrent changes, a bad one fails alone and
// the rest commit, in submission order.
func testIsolation(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b, b.New(t), nil)
	apply(t, s, NewSession("s1"))
	var chans []<-chan error
	for i := 1; i <= 50; i++ {
		c := Decision("s1", i)
		if i == 20 {
			c = Decision("s1", 19) // duplicate of the one before
			c.Decision.ID = "dup"
		}
		chans = append(chans, s.Submit(c))
	}
	for i, ch := range chans {
		err := <-ch
		if i == 19 {
			if !errors.Is(err, store.ErrConflict) {
				t.Errorf("change 20: %v, want ErrConflict", err)
			}
			continue
		}
		if err != nil {
			t.Errorf("change %d: %v", i+1, err)
		}
	}
	ds, err := s.ListDecisions(ctx, store.DecisionFilter{SessionID: "s1", Limit: 100})
	if err != nil || len(ds) != 49 {
		t.Fatalf("decisions: %d %v", len(ds), err)
	}
	if n := size(t, s); n != 51 {
		t.Errorf("evidence: %d records, want 51 (the session's two and the decisions')", n)
	}
}

func testMissingSession(t *testing.T, b Backend) {
	s := open(t, b, b.New(t), nil)
	err := store.Apply(context.Background(), s, &store.Change{Session: &store.Session{ID: "nope", Status: store.StatusActive, UpdatedAt: epoch}})
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("update of a missing session: %v", err)
	}
}

func testClosed(t *testing.T, b Backend) {
	s, err := b.Open(t, b.New(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	ch := s.Submit(NewSession("s1"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-ch; err != nil {
		t.Errorf("a change submitted before Close: %v (Close commits what is queued)", err)
	}
	if err := <-s.Submit(NewSession("s2")); !errors.Is(err, store.ErrClosed) {
		t.Errorf("after close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
}

func testTokens(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b, b.New(t), nil)
	tok := &store.Token{ID: "t1", Hash: []byte{1, 2, 3}, Role: "agent", AgentID: "a1", Name: "n", CreatedAt: epoch}
	if err := s.CreateToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateToken(ctx, tok); !errors.Is(err, store.ErrConflict) {
		t.Errorf("duplicate token: %v", err)
	}
	other := &store.Token{ID: "t2", Hash: []byte{1, 2, 3}, Role: "admin", CreatedAt: epoch.Add(time.Second)}
	if err := s.CreateToken(ctx, other); !errors.Is(err, store.ErrConflict) {
		t.Errorf("duplicate hash: %v", err)
	}
	got, err := s.TokenByHash(ctx, []byte{1, 2, 3})
	if err != nil || got.ID != "t1" || got.Role != "agent" || got.AgentID != "a1" || got.Name != "n" || got.RevokedAt != nil || !got.CreatedAt.Equal(epoch) {
		t.Fatalf("by hash: %+v %v", got, err)
	}
	if _, err := s.TokenByHash(ctx, []byte{9}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown hash: %v", err)
	}
	if err := s.RevokeToken(ctx, "t1", epoch.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeToken(ctx, "t1", epoch.Add(time.Hour)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second revoke: %v", err)
	}
	got, _ = s.TokenByHash(ctx, []byte{1, 2, 3})
	if got.RevokedAt == nil || !got.RevokedAt.Equal(epoch.Add(time.Minute)) {
		t.Errorf("revoked at: %v", got.RevokedAt)
	}
	all, err := s.ListTokens(ctx)
	if err != nil || len(all) != 1 {
		t.Errorf("list: %v %v", all, err)
	}
}

func testListing(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b, b.New(t), nil)
	for i := range 5 {
		c := NewSession(fmt.Sprintf("s%d", i))
		if i%2 == 1 {
			c.Session.Agent.ID = "a2"
			c.Session.ParentID = "s0"
		}
		apply(t, s, c)
	}
	for i := 1; i <= 5; i++ {
		c := Decision("s0", i)
		if i%2 == 0 {
			c.Decision.Effect = "deny"
		}
		apply(t, s, c)
	}
	apply(t, s, Decision("s1", 1))
	ids := func(ss []*store.Session) (out []string) {
		for _, x := range ss {
			out = append(out, x.ID)
		}
		return out
	}
	all, err := s.ListSessions(ctx, store.SessionFilter{})
	if err != nil || !slices.Equal(ids(all), []string{"s4", "s3", "s2", "s1", "s0"}) {
		t.Errorf("all sessions, newest first: %v %v", ids(all), err)
	}
	got, _ := s.ListSessions(ctx, store.SessionFilter{AgentID: "a2"})
	if !slices.Equal(ids(got), []string{"s3", "s1"}) {
		t.Errorf("by agent: %v", ids(got))
	}
	got, _ = s.ListSessions(ctx, store.SessionFilter{ParentID: "s0", Limit: 1})
	if !slices.Equal(ids(got), []string{"s3"}) {
		t.Errorf("by parent, limit 1: %v", ids(got))
	}
	got, _ = s.ListSessions(ctx, store.SessionFilter{Before: "s2"})
	if !slices.Equal(ids(got), []string{"s1", "s0"}) {
		t.Errorf("before s2: %v", ids(got))
	}
	got, _ = s.ListSessions(ctx, store.SessionFilter{Status: store.StatusSuspended})
	if len(got) != 0 {
		t.Errorf("by status: %v", ids(got))
	}
	seqs := func(ds []*store.Decision) (out []int) {
		for _, d := range ds {
			out = append(out, d.Seq)
		}
		return out
	}
	ds, err := s.ListDecisions(ctx, store.DecisionFilter{SessionID: "s0", AfterSeq: 2})
	if err != nil || !slices.Equal(seqs(ds), []int{3, 4, 5}) {
		t.Errorf("after seq 2, in order: %v %v", seqs(ds), err)
	}
	ds, _ = s.ListDecisions(ctx, store.DecisionFilter{SessionID: "s0", Effect: "deny"})
	if !slices.Equal(seqs(ds), []int{2, 4}) {
		t.Errorf("denies: %v", seqs(ds))
	}
	ds, _ = s.ListDecisions(ctx, store.DecisionFilter{Limit: 2})
	if len(ds) != 2 || ds[0].ID != "s1-d1" || ds[1].ID != "s0-d5" {
		t.Errorf("all decisions, newest first: %v", ds)
	}
}

// testTreeListing: a delegation tree's and an agent's decisions, across
// their sessions, newest first in commit order (the engine rebuilds the
// sequence state of a tree or an agent from them), and only theirs.
func testTreeListing(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b, b.New(t), nil)
	// root ← child ← grandchild (agent a1); stray (a1, its own tree);
	// other (a2, under root).
	for _, x := range []struct{ id, parent, agent string }{
		{"root", "", "a1"}, {"child", "root", "a1"}, {"grandchild", "child", "a1"},
		{"stray", "", "a1"}, {"other", "root", "a2"},
	} {
		c := NewSession(x.id)
		c.Session.ParentID, c.Session.Agent.ID = x.parent, x.agent
		apply(t, s, c)
	}
	seq := map[string]int{}
	for _, sess := range []string{"root", "grandchild", "stray", "child", "other", "root", "grandchild"} {
		seq[sess]++
		apply(t, s, Decision(sess, seq[sess]))
	}
	ids := func(ds []*store.Decision) (out []string) {
		for _, d := range ds {
			out = append(out, d.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		f    store.DecisionFilter
		want []string
	}{
		{"the tree under root", store.DecisionFilter{Tree: "root"},
			[]string{"grandchild-d2", "root-d2", "other-d1", "child-d1", "grandchild-d1", "root-d1"}},
		{"the tree under child, limit 2", store.DecisionFilter{Tree: "child", Limit: 2},
			[]string{"grandchild-d2", "child-d1"}},
		{"a leaf's tree", store.DecisionFilter{Tree: "stray"}, []string{"stray-d1"}},
		{"agent a1", store.DecisionFilter{AgentID: "a1"},
			[]string{"grandchild-d2", "root-d2", "child-d1", "stray-d1", "grandchild-d1", "root-d1"}},
		{"agent a2", store.DecisionFilter{AgentID: "a2"}, []string{"other-d1"}},
		{"agent a1 in the tree under root", store.DecisionFilter{Tree: "root", AgentID: "a1", Limit: 3},
			[]string{"grandchild-d2", "root-d2", "child-d1"}},
		{"an unknown tree", store.DecisionFilter{Tree: "nobody"}, nil},
		{"an unknown agent", store.DecisionFilter{AgentID: "nobody"}, nil},
	} {
		ds, err := s.ListDecisions(ctx, tc.f)
		if err != nil || !slices.Equal(ids(ds), tc.want) {
			t.Errorf("%s: %v %v, want %v", tc.name, ids(ds), err, tc.want)
		}
	}
}

func testGaps(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b, b.New(t), nil)
	apply(t, s, NewSession("s1"))
	apply(t, s, NewSession("s2"))
	apply(t, s, Decision("s1", 1))
	apply(t, s, Decision("s1", 2))
	c := Decision("s1", 3)
	c.Decision.CallID = "call-1" // the same call id again: the latest wins
	apply(t, s, c)
	d, err := s.DecisionByCall(ctx, "s1", "call-1")
	if err != nil || d.Seq != 3 {
		t.Errorf("by call id: %+v %v", d, err)
	}
	if _, err := s.DecisionByCall(ctx, "s2", "call-1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("call id of another session: %v", err)
	}
	if _, err := s.DecisionByCall(ctx, "s1", ""); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("empty call id: %v", err)
	}
	for i, sess := range []string{"s1", "s2", "s1"} {
		apply(t, s, &store.Change{Observation: &store.Observation{ID: fmt.Sprintf("g%d", i), SessionID: sess, Output: json.RawMessage(`"x"`), Origin: "observed",
			Gap: true, GapReason: "never decided", Tool: "Bash", Args: json.RawMessage(`{"command":"ls"}`), CallID: "c", CreatedAt: epoch}})
	}
	apply(t, s, &store.Change{Observation: &store.Observation{ID: "plain", DecisionID: "s1-d1", SessionID: "s1", Output: json.RawMessage(`1`), Origin: "reported", CreatedAt: epoch}})
	gaps, err := s.ListGaps(ctx, store.GapFilter{})
	if err != nil || len(gaps) != 3 || gaps[0].ID != "g2" || gaps[2].ID != "g0" {
		t.Fatalf("gaps, newest first: %v %v", gaps, err)
	}
	g := gaps[0]
	if !g.Gap || g.GapReason != "never decided" || g.Tool != "Bash" || string(g.Args) != `{"command":"ls"}` || g.CallID != "c" || g.DecisionID != "" {
		t.Errorf("gap round trip: %+v", g)
	}
	gaps, _ = s.ListGaps(ctx, store.GapFilter{SessionID: "s2"})
	if len(gaps) != 1 || gaps[0].ID != "g1" {
		t.Errorf("gaps of s2: %v", gaps)
	}
	obs, _ := s.ListObservations(ctx, "s1-d1")
	if len(obs) != 1 || obs[0].Gap || obs[0].Args != nil || obs[0].Origin != "reported" {
		t.Errorf("plain observation: %+v", obs)
	}
}

func testToolPins(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b, b.New(t), nil)
	apply(t, s, NewSession("s1"))
	pins := []*store.ToolPin{
		{SessionID: "s1", Tool: "zeta", Hash: "h1", Definition: json.RawMessage(`{"name":"zeta"}`), CreatedAt: epoch},
		{SessionID: "s1", Tool: "alpha", Hash: "h2", Definition: json.RawMessage(`{"name":"alpha"}`), CreatedAt: epoch},
	}
	apply(t, s, &store.Change{ToolPins: pins})
	if err := store.Apply(ctx, s, &store.Change{ToolPins: pins[:1]}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("pinning a tool twice: %v", err)
	}
	apply(t, s, &store.Change{ToolChanges: []*store.ToolChange{{ID: "c1", SessionID: "s1", Tool: "zeta", PinnedHash: "h1", Hash: "h3", Definition: json.RawMessage(`{"name":"zeta","description":"now evil"}`), CreatedAt: epoch}}})
	got, err := s.ListToolPins(ctx, "s1")
	if err != nil || len(got) != 2 || got[0].Tool != "zeta" || got[1].Tool != "alpha" || string(got[1].Definition) != `{"name":"alpha"}` {
		t.Errorf("pins in pinning order: %v %v", got, err)
	}
	chg, err := s.ListToolChanges(ctx, "s1")
	if err != nil || len(chg) != 1 || chg[0].PinnedHash != "h1" || chg[0].Hash != "h3" {
		t.Errorf("changes: %v %v", chg, err)
	}
}

// testEvidence: records get gapless indices in commit order, reads see them
// (after SyncEvidence), OnEvidence hears them in order.
func testEvidence(t *testing.T, b Backend) {
	ctx := context.Background()
	r := &recorder{}
	s := open(t, b, b.New(t), r)
	apply(t, s, NewSession("s1"))
	apply(t, s, NewSession("s2"))
	var chans []<-chan error
	for i := 1; i <= 40; i++ {
		sess := "s1"
		if i%3 == 0 {
			sess = "s2"
		}
		c := Decision(sess, i)
		c.Evidence = append(c.Evidence, rec("reported", sess, fmt.Sprintf(`{"r":%d}`, i)))
		chans = append(chans, s.Submit(c))
	}
	for _, ch := range chans {
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
	}
	n := size(t, s)
	if n != 84 {
		t.Fatalf("size %d, want 84", n)
	}
	all, err := s.EvidenceRange(ctx, 0, n)
	if err != nil || uint64(len(all)) != n {
		t.Fatalf("range: %d %v", len(all), err)
	}
	for i, x := range all {
		if x.Index != uint64(i) {
			t.Fatalf("record %d has index %d", i, x.Index)
		}
	}
	// A session's records keep their order; each decision's two records
	// are next to each other, as they were committed together.
	s1, err := s.SessionEvidence(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	var last uint64
	for i, x := range s1 {
		if i > 0 && x.Index <= last {
			t.Errorf("session evidence out of order at %d", i)
		}
		last = x.Index
		if x.SessionID != "s1" {
			t.Errorf("session evidence of another session: %+v", x)
		}
	}
	if len(s1) != 2+2*27 {
		t.Errorf("s1 has %d records, want 56", len(s1))
	}
	for i := 0; i+1 < len(all); i++ {
		if all[i].Type == "decision" && all[i+1].Type != "reported" {
			t.Errorf("a change's records are not contiguous at %d", i)
		}
	}
	hashes, err := s.EvidenceLeafHashes(ctx, 10, 20)
	if err != nil || len(hashes) != 10 || string(hashes[0]) != string(all[10].LeafHash) {
		t.Errorf("leaf hashes: %v", err)
	}
	if _, err := s.EvidenceLeafHashes(ctx, n-1, n+1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("leaf hashes past the end: %v", err)
	}
	if _, err := s.EvidenceLeafHashes(ctx, 5, 4); err == nil {
		t.Error("reversed range accepted")
	}
	from, err := s.EvidenceFrom(ctx, 82, 10)
	if err != nil || len(from) != 2 || from[0].Index != 82 {
		t.Errorf("from 82: %v %v", from, err)
	}
	if x := all[3]; x.Origin != "observed" || !x.CreatedAt.Equal(epoch) || string(x.LeafHash) != string(evidence.LeafHash(x.Body)) {
		t.Errorf("record round trip: %+v", x)
	}
	if _, err := s.SessionEvidence(ctx, ""); err == nil {
		t.Error("session evidence without a session accepted")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		t.Error(r.err)
	}
	if uint64(len(r.hashes)) != n {
		t.Fatalf("OnEvidence heard %d records, want %d", len(r.hashes), n)
	}
	for i, h := range r.hashes {
		if string(h) != string(all[i].LeafHash) {
			t.Fatalf("OnEvidence hash %d differs from the stored one", i)
		}
	}
}

func testCheckpoints(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b, b.New(t), nil)
	if _, err := s.LatestCheckpoint(ctx); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("no checkpoint yet: %v", err)
	}
	var ids []int64
	for i := range 3 {
		cp := &store.Checkpoint{Size: uint64(i * 10), RootHash: []byte{byte(i)}, Note: []byte(fmt.Sprintf("note %d", i)), CreatedAt: epoch}
		if err := s.AddCheckpoint(ctx, cp); err != nil {
			t.Fatal(err)
		}
		if len(ids) > 0 && cp.ID <= ids[len(ids)-1] {
			t.Errorf("checkpoint ids not increasing: %d after %v", cp.ID, ids)
		}
		ids = append(ids, cp.ID)
	}
	latest, err := s.LatestCheckpoint(ctx)
	if err != nil || latest.ID != ids[2] || latest.Size != 20 || string(latest.Note) != "note 2" || !latest.CreatedAt.Equal(epoch) {
		t.Errorf("latest: %+v %v", latest, err)
	}
	list, err := s.ListCheckpoints(ctx, ids[0], 10)
	if err != nil || len(list) != 2 || list[0].ID != ids[1] {
		t.Errorf("list after the first: %v %v", list, err)
	}
}

func guarded(c *store.Change, sess, head, next string, states ...store.SessionState) *store.Change {
	c.Guard = &store.Guard{SessionID: sess, Head: head, NewHead: next, Sessions: states}
	return c
}

// testGuard: a change commits only on the state it was decided on.
func testGuard(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b, b.New(t), nil)
	apply(t, s, guarded(NewSession("p"), "p", "", "p0"))
	apply(t, s, guarded(NewSession("s1"), "s1", "", "h0", store.SessionState{ID: "p", Status: store.StatusActive, MandateVersion: 1}))
	if got, _ := s.GetSession(ctx, "s1"); got.Head != "h0" {
		t.Fatalf("head after creation: %q", got.Head)
	}
	apply(t, s, guarded(Decision("s1", 1), "s1", "h0", "h1"))
	before := size(t, s)
	stale := guarded(Decision("s1", 2), "s1", "h0", "h2")
	stale.Session = &store.Session{ID: "s1", Status: store.StatusCompleted, MandateVersion: 1, UpdatedAt: epoch}
	err := store.Apply(ctx, s, stale)
	if !errors.Is(err, store.ErrStale) || !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale head: %v, want ErrStale (an ErrConflict)", err)
	}
	if _, err := s.GetDecision(ctx, "s1-d2"); !errors.Is(err, store.ErrNotFound) {
		t.Error("a stale change's decision was written")
	}
	if got, _ := s.GetSession(ctx, "s1"); got.Head != "h1" || got.Status != store.StatusActive {
		t.Errorf("a stale change moved the session: %+v", got)
	}
	if n := size(t, s); n != before {
		t.Errorf("a stale change's evidence was written")
	}
	// An ancestor's state: the decision stands on the parent being active
	// at mandate version 1.
	apply(t, s, guarded(&store.Change{Session: &store.Session{ID: "p", Status: store.StatusSuspended, MandateVersion: 1, UpdatedAt: epoch}}, "p", "p0", "p1"))
	err = store.Apply(ctx, s, guarded(Decision("s1", 2), "s1", "h1", "h2", store.SessionState{ID: "p", Status: store.StatusActive, MandateVersion: 1}))
	if !errors.Is(err, store.ErrStale) {
		t.Fatalf("a decision on a parent since suspended: %v, want ErrStale", err)
	}
	apply(t, s, guarded(Decision("s1", 2), "s1", "h1", "h2", store.SessionState{ID: "p", Status: store.StatusSuspended, MandateVersion: 1}))
	if err := store.Apply(ctx, s, guarded(Decision("ghost", 1), "ghost", "", "x")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("guard of a missing session: %v, want ErrNotFound", err)
	}
	if err := store.Apply(ctx, s, guarded(Decision("s1", 3), "s1", "h2", "h3", store.SessionState{ID: "ghost", Status: store.StatusActive, MandateVersion: 1})); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("guard naming a missing ancestor: %v, want ErrNotFound", err)
	}
}

// testGuardPipelined: changes submitted one after another, each standing on
// the one before, commit together; when the first fails, so do those that
// stood on it.
func testGuardPipelined(t *testing.T, b Backend) {
	ctx := context.Background()
	s := open(t, b, b.New(t), nil)
	apply(t, s, guarded(NewSession("s1"), "s1", "", "h0"))
	var chans []<-chan error
	for i := 1; i <= 30; i++ {
		chans = append(chans, s.Submit(guarded(Decision("s1", i), "s1", fmt.Sprintf("h%d", i-1), fmt.Sprintf("h%d", i))))
	}
	for i, ch := range chans {
		if err := <-ch; err != nil {
			t.Fatalf("change %d: %v", i+1, err)
		}
	}
	// Now a chain whose first link is stale.
	chans = chans[:0]
	chans = append(chans, s.Submit(guarded(Decision("s1", 31), "s1", "h5", "x31")))
	for i := 32; i <= 35; i++ {
		chans = append(chans, s.Submit(guarded(Decision("s1", i), "s1", fmt.Sprintf("x%d", i-1), fmt.Sprintf("x%d", i))))
	}
	for i, ch := range chans {
		if err := <-ch; !errors.Is(err, store.ErrStale) {
			t.Errorf("link %d of a stale chain: %v, want ErrStale", i+1, err)
		}
	}
	if got, _ := s.GetSession(ctx, "s1"); got.Head != "h30" {
		t.Errorf("head %q, want h30", got.Head)
	}
}

// testGuardReplicas: two stores on one database (two replicas) race to
// extend one session; every head is taken by exactly one change.
func testGuardReplicas(t *testing.T, b Backend) {
	if !b.Shared {
		t.Skip("the backend is not shared between processes")
	}
	ctx := context.Background()
	loc := b.New(t)
	s1, s2 := open(t, b, loc, nil), open(t, b, loc, nil)
	apply(t, s1, guarded(NewSession("s"), "s", "", "0"))
	var (
		mu   sync.Mutex
		head = "0"
		seq  = 0
		won  = map[string]int{}
	)
	var wg sync.WaitGroup
	for w := range 8 {
		st := s1
		if w%2 == 1 {
			st = s2
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 15 {
				mu.Lock()
				h, n := head, seq+1
				mu.Unlock()
				id := fmt.Sprintf("w%d-%d", w, n)
				c := guarded(Decision("s", n), "s", h, id)
				c.Decision.ID = id
				err := store.Apply(ctx, st, c)
				switch {
				case err == nil:
					mu.Lock()
					won[h]++
					if n > seq {
						head, seq = id, n
					}
					mu.Unlock()
				case errors.Is(err, store.ErrConflict):
					// Lost the race (stale head or the same seq): read the
					// truth and go on from it.
					got, gerr := st.GetSession(ctx, "s")
					if gerr != nil {
						t.Error(gerr)
						return
					}
					ds, _ := st.ListDecisions(ctx, store.DecisionFilter{SessionID: "s", AfterSeq: 0, Limit: 1000})
					mu.Lock()
					if len(ds) >= seq {
						head, seq = got.Head, len(ds)
					}
					mu.Unlock()
				default:
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for h, n := range won {
		if n != 1 {
			t.Errorf("head %s was extended %d times", h, n)
		}
	}
	ds, err := s1.ListDecisions(ctx, store.DecisionFilter{SessionID: "s", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range ds {
		if d.Seq != i+1 {
			t.Fatalf("decisions have a gap or a duplicate at %d: seq %d", i, d.Seq)
		}
	}
	if len(ds) == 0 {
		t.Fatal("no change won")
	}
}

// testEvidenceAcrossReplicas: records appended through two replicas form one
// gapless log that both follow identically.
func testEvidenceAcrossReplicas(t *testing.T, b Backend) {
	if !b.Shared {
		t.Skip("the backend is not shared between processes")
	}
	ctx := context.Background()
	loc := b.New(t)
	r1, r2 := &recorder{}, &recorder{}
	s1 := open(t, b, loc, r1)
	s2 := open(t, b, loc, r2)
	apply(t, s1, NewSession("a"))
	apply(t, s2, NewSession("b"))
	var wg sync.WaitGroup
	for w, st := range []store.Store{s1, s2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sess := []string{"a", "b"}[w]
			for i := 1; i <= 60; i++ {
				if err := store.Apply(ctx, st, Decision(sess, i)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	n1, n2 := size(t, s1), size(t, s2)
	if n1 != 124 || n2 != 124 {
		t.Fatalf("sizes %d and %d, want 124", n1, n2)
	}
	recs, err := s1.EvidenceRange(ctx, 0, n1)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*recorder{r1, r2} {
		r.mu.Lock()
		if r.err != nil {
			t.Error(r.err)
		}
		if len(r.hashes) != len(recs) {
			t.Errorf("a replica followed %d records, want %d", len(r.hashes), len(recs))
		} else {
			for i := range recs {
				if string(r.hashes[i]) != string(recs[i].LeafHash) {
					t.Fatalf("a replica's record %d differs", i)
				}
			}
		}
		r.mu.Unlock()
	}
	// Each session's decisions are in the log in their own order.
	for _, sess := range []string{"a", "b"} {
		se, _ := s2.SessionEvidence(ctx, sess)
		// After the session's two records (session, mandate).
		for i := 2; i < len(se); i++ {
			want := fmt.Sprintf(`"decision_id":"%s-d%d"`, sess, i-1)
			if !strings.Contains(string(se[i].Body), want) {
				t.Fatalf("session %s record %d is %s, want the one with %s", sess, i, se[i].Body, want)
			}
		}
	}
}
