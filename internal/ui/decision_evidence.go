package ui

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"

	"github.com/mandate-dev/mandate/internal/evidence"
	"github.com/mandate-dev/mandate/internal/store"
)

// decisionEvidence is a decision's record in the evidence log and whether
// the latest signed checkpoint includes it.
type decisionEvidence struct {
	// Problem says why there is nothing else to show (no log, no record
	// for this decision, the log failed).
	Problem  string
	Index    uint64
	LeafHash string
	// Included: the latest checkpoint covers the record and its inclusion
	// proof (ProofLen hashes) checks against that checkpoint's root.
	// Otherwise the record is pending the next checkpoint.
	Included       bool
	CheckpointSize uint64
	ProofLen       int
}

// decisionEvidenceFor finds the decision's record among its session's
// evidence records (the log indexes records, not decisions) and holds it
// against the latest signed checkpoint, without signing a new one: a
// record the latest does not cover yet is shown as pending.
func (d *Dashboard) decisionEvidenceFor(ctx context.Context, dec *store.Decision) *decisionEvidence {
	if d.evidence == nil || d.evidence.Log == nil || d.evidence.Store == nil {
		return &decisionEvidence{Problem: "This server has no evidence log."}
	}
	rec, err := findDecisionRecord(ctx, d.evidence.Store, dec)
	if err != nil {
		d.log.Warn("dashboard: reading a decision's evidence record", "decision", dec.ID, "err", err)
		return &decisionEvidence{Problem: "The evidence record could not be read: " + err.Error()}
	}
	if rec == nil {
		return &decisionEvidence{Problem: "The evidence log holds no record of this decision."}
	}
	out := &decisionEvidence{Index: rec.Index, LeafHash: hex.EncodeToString(rec.LeafHash)}
	lg := d.evidence.Log
	// atLeast 0: the latest checkpoint as it is (one is signed only if
	// there is none at all).
	cp, err := lg.Checkpoint(ctx, 0)
	if err != nil {
		out.Problem = "The latest checkpoint could not be read: " + err.Error()
		return out
	}
	out.CheckpointSize = cp.Size
	if rec.Index >= cp.Size {
		return out
	}
	e, err := lg.Entry(ctx, rec.Index)
	if err != nil {
		out.Problem = "The inclusion proof could not be made: " + err.Error()
		return out
	}
	if err := proof.VerifyInclusion(rfc6962.DefaultHasher, rec.Index, e.Checkpoint.Size, rec.LeafHash, e.Proof, e.Checkpoint.Root); err != nil {
		out.Problem = fmt.Sprintf("The inclusion proof does not check against checkpoint %d: %v; run 'mandate evidence verify'.", e.Checkpoint.Size, err)
		return out
	}
	out.Included, out.CheckpointSize, out.ProofLen = true, e.Checkpoint.Size, len(e.Proof)
	return out
}

// findDecisionRecord returns the decision record whose content is dec, or
// nil if the session's records hold none.
func findDecisionRecord(ctx context.Context, st store.Store, dec *store.Decision) (*store.EvidenceRecord, error) {
	recs, err := st.SessionEvidence(ctx, dec.SessionID)
	if err != nil {
		return nil, err
	}
	id, _ := json.Marshal(dec.ID)
	for _, rec := range recs {
		// The id's bytes first: decoding every record of a long session
		// would be slow.
		if rec.Type != evidence.TypeDecision || !bytes.Contains(rec.Body, id) {
			continue
		}
		env, err := evidence.ParseBody(rec.Body)
		if err != nil {
			return nil, fmt.Errorf("evidence record %d: %w", rec.Index, err)
		}
		var c struct {
			ID string `json:"decision_id"`
		}
		if err := json.Unmarshal(env.Content, &c); err != nil {
			return nil, fmt.Errorf("evidence record %d: %w", rec.Index, err)
		}
		if c.ID == dec.ID {
			return rec, nil
		}
	}
	return nil, nil
}
