package judge_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mandate-dev/mandate/internal/engine"
)

// TestDecisionRecordShape checks what other tools read (issue 13's
// interface): an ask the judge answered shows, on the wire and in the
// stored decision record, judge: {"model", "decision", "reason",
// "latency_ms"}; and the question is asked with a strict JSON schema
// response_format.
func TestDecisionRecordShape(t *testing.T) {
	r := newRig(t, engine.JudgeAuto)
	d := r.send(t, "auditor@example.com", nil)
	wire, err := json.Marshal(d.Wire())
	if err != nil {
		t.Fatal(err)
	}
	stored, err := r.a.Store.GetDecision(context.Background(), d.ID)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := json.Marshal(stored)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"wire": wire, "record": rec} {
		var got struct {
			Judge map[string]any `json:"judge"`
		}
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		j := got.Judge
		if j["model"] != "test-model" || j["decision"] != "allow" || j["reason"] != "the user named this report" {
			t.Errorf("%s: judge %v", name, j)
		}
		if _, ok := j["latency_ms"].(float64); !ok {
			t.Errorf("%s: judge.latency_ms missing or not a number: %v", name, j)
		}
	}
	reqs := r.srv.Requests(t)
	last := reqs[len(reqs)-1]
	rf, _ := last["response_format"].(map[string]any)
	js, _ := rf["json_schema"].(map[string]any)
	schema, _ := js["schema"].(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	dec, _ := props["decision"].(map[string]any)
	enum, _ := dec["enum"].([]any)
	if rf["type"] != "json_schema" || js["strict"] != true || len(enum) != 3 || props["reason"] == nil || schema["additionalProperties"] != false {
		t.Errorf("response_format %v", rf)
	}
}
