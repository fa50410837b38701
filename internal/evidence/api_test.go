package evidence_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"

	"github.com/mandate-dev/mandate/internal/evidence"
)

func decodeProof(t *testing.T, v any) [][]byte {
	t.Helper()
	var out [][]byte
	for _, s := range v.([]any) {
		b, err := base64.StdEncoding.DecodeString(s.(string))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// checkpointFrom opens the signed note in an API checkpoint object with
// the verifier key the test trusts (the instance's), not the one served.
func checkpointFrom(t *testing.T, in *instance, v any) *evidence.Checkpoint {
	t.Helper()
	m := v.(map[string]any)
	if m["verifier_key"] != in.App.Evidence.Key().VerifierKey() {
		t.Errorf("served verifier key %v, want %s", m["verifier_key"], in.App.Evidence.Key().VerifierKey())
	}
	cp, err := evidence.OpenCheckpoint([]byte(m["note"].(string)), in.App.Evidence.Key().Verifier())
	if err != nil {
		t.Fatal(err)
	}
	if uint64(m["size"].(float64)) != cp.Size || m["root_hash"] != base64.StdEncoding.EncodeToString(cp.Root) {
		t.Errorf("checkpoint fields %v differ from its note", m)
	}
	return cp
}

func (in *instance) apiCalls(session string, n int) {
	in.T.Helper()
	for i := range n {
		in.doJSON("POST", "/v1/evaluate", "agent", fmt.Sprintf(`{"session_id":%q,"tool":"send_email","args":{"to":"alice@example.com","subject":"Q3 #%d"}}`, session, i), http.StatusOK)
	}
}

func TestEvidenceAPI(t *testing.T) {
	in := open(t, t.TempDir()).serve()
	s := in.doJSON("POST", "/v1/sessions", "user", `{"agent_id":"mailer","intent":"Send the Q3 summary to alice@example.com"}`, http.StatusCreated)["session_id"].(string)
	in.apiCalls(s, 5)

	// The checkpoint covers everything committed.
	cp1 := checkpointFrom(t, in, in.doJSON("GET", "/v1/evidence/checkpoint", "user", "", http.StatusOK))
	if cp1.Size != in.App.Evidence.Size() || cp1.Size != 7 {
		t.Errorf("checkpoint of %d records, log has %d", cp1.Size, in.App.Evidence.Size())
	}
	code, note := in.do("GET", "/v1/evidence/checkpoint?format=note", "admin", "")
	if code != http.StatusOK {
		t.Fatalf("note: %d %s", code, note)
	}
	if _, err := evidence.OpenCheckpoint(note, in.App.Evidence.Key().Verifier()); err != nil {
		t.Errorf("the note does not open: %v\n%s", err, note)
	}

	// Every record with its inclusion proof.
	for i := range cp1.Size {
		rec := in.doJSON("GET", fmt.Sprintf("/v1/evidence/records/%d", i), "user", "", http.StatusOK)
		body, err := json.Marshal(rec["record"])
		if err != nil {
			t.Fatal(err)
		}
		canon, err := evidence.Canonical(body)
		if err != nil {
			t.Fatal(err)
		}
		cp := checkpointFrom(t, in, rec["checkpoint"])
		if err := proof.VerifyInclusion(rfc6962.DefaultHasher, i, cp.Size, evidence.LeafHash(canon), decodeProof(t, rec["inclusion_proof"]), cp.Root); err != nil {
			t.Errorf("record %d: %v", i, err)
		}
	}

	// The log grows; the two checkpoints are consistent.
	in.apiCalls(s, 9)
	cp2 := checkpointFrom(t, in, in.doJSON("GET", "/v1/evidence/checkpoint", "user", "", http.StatusOK))
	cons := in.doJSON("GET", fmt.Sprintf("/v1/evidence/consistency?from=%d&to=%d", cp1.Size, cp2.Size), "user", "", http.StatusOK)
	if err := proof.VerifyConsistency(rfc6962.DefaultHasher, cp1.Size, cp2.Size, decodeProof(t, cons["proof"]), cp1.Root, cp2.Root); err != nil {
		t.Errorf("consistency %d→%d: %v", cp1.Size, cp2.Size, err)
	}
	if _, ok := cons["checkpoint"]; !ok {
		t.Error("consistency to the latest checkpoint does not include it")
	}
	latest := in.doJSON("GET", fmt.Sprintf("/v1/evidence/consistency?from=%d", cp1.Size), "user", "", http.StatusOK)
	if uint64(latest["to"].(float64)) != cp2.Size {
		t.Errorf("consistency without to ends at %v, want %d", latest["to"], cp2.Size)
	}

	// An agent's stated reasoning is kept beside its decision, as
	// reported content, and does not change the decision.
	d := in.doJSON("POST", "/v1/evaluate", "agent", fmt.Sprintf(`{"session_id":%q,"tool":"send_email","args":{"to":"alice@example.com"},"reported":{"reasoning":"the user asked for the summary"}}`, s), http.StatusOK)
	if d["effect"] == nil {
		t.Fatalf("evaluate with reported: %v", d)
	}
	in.doJSON("POST", "/v1/evaluate", "agent", fmt.Sprintf(`{"session_id":%q,"tool":"send_email","args":{},"reported":{"broken"`, s), http.StatusBadRequest)

	// The session's bundle verifies offline.
	code, bundle := in.do("GET", "/v1/evidence/sessions/"+s+"/bundle", "admin", "")
	if code != http.StatusOK {
		t.Fatalf("bundle: %d %s", code, bundle)
	}
	rep, err := evidence.VerifyBundle(bundle, in.App.Evidence.Key().Verifier())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Decisions != 15 || rep.Reported != 1 || rep.Types["reported"] != 1 {
		t.Errorf("bundle report %+v", rep)
	}
	if !containsAll(string(bundle), `"content":{"reasoning":"the user asked for the summary"}`, `"decision_id":"`+d["decision_id"].(string)+`","kind":"reasoning"`, `"origin":"reported"`) {
		t.Errorf("no reported record for the decision in the bundle")
	}

	// Roles and bad requests.
	for _, tt := range []struct {
		path, who string
		want      int
	}{
		{"/v1/evidence/checkpoint", "agent", http.StatusForbidden},
		{"/v1/evidence/checkpoint", "hook", http.StatusForbidden},
		{"/v1/evidence/checkpoint", "", http.StatusUnauthorized},
		{"/v1/evidence/sessions/" + s + "/bundle", "agent", http.StatusForbidden},
		{"/v1/evidence/records/0", "agent", http.StatusForbidden},
		{"/v1/evidence/checkpoint?format=xml", "user", http.StatusBadRequest},
		{"/v1/evidence/records/x", "user", http.StatusBadRequest},
		{"/v1/evidence/records/-1", "user", http.StatusBadRequest},
		{"/v1/evidence/records/100000", "user", http.StatusNotFound},
		{"/v1/evidence/consistency", "user", http.StatusBadRequest},
		{"/v1/evidence/consistency?from=x", "user", http.StatusBadRequest},
		{"/v1/evidence/consistency?from=9&to=3", "user", http.StatusBadRequest},
		{"/v1/evidence/consistency?from=1&to=100000", "user", http.StatusNotFound},
		{"/v1/evidence/sessions/nope/bundle", "user", http.StatusNotFound},
	} {
		if code, b := in.do("GET", tt.path, tt.who, ""); code != tt.want {
			t.Errorf("GET %s as %q: %d %s, want %d", tt.path, tt.who, code, b, tt.want)
		}
	}
}
