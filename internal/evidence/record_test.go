package evidence

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/mandate"
	"github.com/mandate-dev/mandate/internal/store"
)

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 890, time.UTC)

func sampleSession() *store.Session {
	return &store.Session{ID: "s1", Agent: store.Agent{ID: "mailer", Model: "m-1"}, Status: store.StatusActive, MandateVersion: 1,
		Tools: []action.ToolDef{{Name: "send_email", Description: "Send an e-mail"}}, CreatedBy: "user:tok_1", CreatedAt: t0, UpdatedAt: t0}
}

func sampleDecision() *store.Decision {
	return &store.Decision{ID: "d1", SessionID: "s1", Seq: 1, Surface: "api", Tool: "send_email",
		Args:           json.RawMessage(`{"to": "bob@example.com", "subject":"Q3", "n": 1.50}`),
		Action:         &action.Action{Tool: "send_email", Kind: action.Send, Recipients: []action.Recipient{{Address: "bob@example.com", Field: "to"}}},
		MandateVersion: 1, PolicyHash: "ph", Effect: "ask", Rules: []string{"builtin.recipient-outside"},
		Reasons: []string{"recipient bob@example.com was never named"}, LatencyMicros: 90, CreatedAt: t0}
}

func TestRecordTypesAndOrigins(t *testing.T) {
	r := NewRecorder(func() time.Time { return t0 })
	tests := []struct {
		name    string
		change  *store.Change
		types   []string
		origins []string
	}{
		{"new session", &store.Change{NewSession: true, Session: sampleSession(),
			Mandate: &store.MandateVersion{SessionID: "s1", Version: 1, Mandate: &mandate.Mandate{Version: 1, Allow: []action.Kind{action.Send}}, Source: "user", CreatedAt: t0}},
			[]string{TypeSession, TypeMandate}, []string{Observed, Observed}},
		{"decision with counters", &store.Change{Session: sampleSession(), Decision: sampleDecision()},
			[]string{TypeDecision}, []string{Observed}},
		{"status change", &store.Change{Actor: "user:tok_1", Session: &store.Session{ID: "s1", Status: store.StatusSuspended, MandateVersion: 2, UpdatedAt: t0}},
			[]string{TypeSessionStatus}, []string{Observed}},
		{"amendment", &store.Change{Session: sampleSession(), Mandate: &store.MandateVersion{SessionID: "s1", Version: 2, Mandate: &mandate.Mandate{Version: 2}, CreatedAt: t0}},
			[]string{TypeSessionStatus, TypeMandate}, []string{Observed, Observed}},
		{"observed result", &store.Change{Observation: &store.Observation{ID: "o1", DecisionID: "d1", SessionID: "s1", Output: json.RawMessage(`"sent"`), Origin: "observed", CreatedAt: t0}},
			[]string{TypeObservation}, []string{Observed}},
		{"reported result", &store.Change{Observation: &store.Observation{ID: "o2", DecisionID: "d1", SessionID: "s1", Output: json.RawMessage(`"sent"`), Origin: "reported", CreatedAt: t0}},
			[]string{TypeObservation}, []string{Reported}},
		{"reasoning beside a decision", &store.Change{Decision: sampleDecision(), Reported: []*store.Reported{{SessionID: "s1", DecisionID: "d1", Kind: "reasoning", Content: json.RawMessage(`"the user asked"`), CreatedAt: t0}}},
			[]string{TypeDecision, TypeReported}, []string{Observed, Reported}},
		{"tool pins", &store.Change{ToolPins: []*store.ToolPin{{SessionID: "s1", Tool: "a", Hash: "h", Definition: json.RawMessage(`{"name":"a"}`), CreatedAt: t0}},
			ToolChanges: []*store.ToolChange{{ID: "c1", SessionID: "s1", Tool: "b", PinnedHash: "h1", Hash: "h2", Definition: json.RawMessage(`{}`), CreatedAt: t0}}},
			[]string{TypeToolPin, TypeToolChange}, []string{Observed, Observed}},
		{"nothing", &store.Change{}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, err := r.Record(tt.change)
			if err != nil {
				t.Fatal(err)
			}
			var types, origins []string
			for _, rec := range recs {
				types = append(types, rec.Type)
				origins = append(origins, rec.Origin)
				env, err := ParseBody(rec.Body)
				if err != nil {
					t.Fatalf("%s: %v\n%s", rec.Type, err, rec.Body)
				}
				if env.Type != rec.Type || env.Origin != rec.Origin || env.SessionID != rec.SessionID || !env.Time.Equal(rec.CreatedAt) {
					t.Errorf("envelope %+v differs from record columns %+v", env, rec)
				}
				if !bytes.Equal(rec.LeafHash, LeafHash(rec.Body)) {
					t.Error("leaf hash is not the body's")
				}
			}
			if !reflect.DeepEqual(types, tt.types) || !reflect.DeepEqual(origins, tt.origins) {
				t.Errorf("types %v origins %v, want %v %v", types, origins, tt.types, tt.origins)
			}
		})
	}
}

func TestRecordIsCanonicalAndStable(t *testing.T) {
	r := NewRecorder(nil)
	a, err := r.Record(&store.Change{Decision: sampleDecision()})
	if err != nil {
		t.Fatal(err)
	}
	d := sampleDecision()
	d.Args = json.RawMessage("{\n  \"subject\": \"Q3\",\"n\":1.5, \"to\":\"bob@example.com\"}")
	b, err := r.Record(&store.Change{Decision: d})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a[0].Body, b[0].Body) {
		t.Errorf("the same decision with differently written args hashes differently:\n%s\n%s", a[0].Body, b[0].Body)
	}
	body := string(a[0].Body)
	for _, want := range []string{`"args":{"n":1.5,"subject":"Q3","to":"bob@example.com"}`, `"effect":"ask"`, `"policy_hash":"ph"`,
		`"mandate_version":1`, `"rules":["builtin.recipient-outside"]`, `"kind":"send"`, `"type":"decision"`, `"origin":"observed"`} {
		if !strings.Contains(body, want) {
			t.Errorf("decision record lacks %s:\n%s", want, body)
		}
	}
}

func TestRecordRejectsBadOrigin(t *testing.T) {
	r := NewRecorder(nil)
	_, err := r.Record(&store.Change{Observation: &store.Observation{ID: "o", SessionID: "s", Output: json.RawMessage(`1`), Origin: "hearsay", CreatedAt: t0}})
	if err == nil {
		t.Error("an observation of origin hearsay was recorded")
	}
	if _, err := NewRecord("x", Observed, "", t0, json.RawMessage(`{"a":`)); err == nil {
		t.Error("broken content was recorded")
	}
}

// TestEveryChangeFieldIsRecorded fills every field of store.Change,
// including any added after this package was written, and expects a
// record for each: nothing committed may escape the log. The Recorder
// names every field it records (there is no run-time fallback), so a
// field added to store.Change fails here until Record handles it.
func TestEveryChangeFieldIsRecorded(t *testing.T) {
	c := &store.Change{}
	v := reflect.ValueOf(c).Elem()
	want := 0
	for i := range v.NumField() {
		f := v.Type().Field(i)
		fv := v.Field(i)
		switch {
		case f.Name == "Evidence":
			continue
		case f.Name == "Guard":
			// The state the change was decided on (concurrency
			// bookkeeping): what was decided is recorded already.
			fv.Set(reflect.New(f.Type.Elem()))
			continue
		case f.Name == "Actor":
			// Who made the change: part of the lifecycle record, not a
			// record of its own.
			fv.SetString("user:tok_test")
			continue
		case fv.Kind() == reflect.Bool:
			fv.SetBool(true)
			continue
		case fv.Kind() == reflect.Pointer:
			fv.Set(reflect.New(f.Type.Elem()))
		case fv.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Pointer:
			s := reflect.MakeSlice(f.Type, 1, 1)
			s.Index(0).Set(reflect.New(f.Type.Elem().Elem()))
			fv.Set(s)
		default:
			t.Fatalf("store.Change.%s is a %s: teach this test (and the Recorder) about it", f.Name, f.Type)
		}
		want++
	}
	recs, err := NewRecorder(nil).Record(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != want {
		var types []string
		for _, r := range recs {
			types = append(types, r.Type)
		}
		t.Errorf("%d records %v for %d filled fields", len(recs), types, want)
	}
}

func BenchmarkRecordDecision(b *testing.B) {
	r := NewRecorder(nil)
	c := &store.Change{Session: sampleSession(), Decision: sampleDecision()}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Record(c); err != nil {
			b.Fatal(err)
		}
	}
}

func TestStatusRecordNamesWhoChangedIt(t *testing.T) {
	recs, err := NewRecorder(nil).Record(&store.Change{Actor: "user:tok_1", Session: &store.Session{ID: "s1", Status: store.StatusSuspended, MandateVersion: 2, UpdatedAt: t0}})
	if err != nil || len(recs) != 1 {
		t.Fatalf("%v %v", recs, err)
	}
	if !strings.Contains(string(recs[0].Body), `"by":"user:tok_1"`) {
		t.Errorf("status record does not name who suspended the session: %s", recs[0].Body)
	}
}
