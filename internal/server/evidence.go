package server

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/evidence"
)

// evidenceRoutes mounts the evidence log's read side: the latest signed
// checkpoint, a record with its inclusion proof, consistency proofs between
// tree sizes, and a session's bundle. Readers (user, admin) only.
func (s *Server) evidenceRoutes(lg *evidence.Log) {
	s.handle("GET /v1/evidence/checkpoint", s.withEvidence(lg, s.evidenceCheckpoint))
	s.handle("GET /v1/evidence/records/{index}", s.withEvidence(lg, s.evidenceRecord))
	s.handle("GET /v1/evidence/consistency", s.withEvidence(lg, s.evidenceConsistency))
	s.handle("GET /v1/evidence/sessions/{id}/bundle", s.withEvidence(lg, s.evidenceBundle))
}

type evidenceHandler func(w http.ResponseWriter, r *http.Request, lg *evidence.Log)

func (s *Server) withEvidence(lg *evidence.Log, h evidenceHandler) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, p auth.Principal) {
		if !p.Can(auth.Read) {
			s.fail(w, r, fmt.Errorf("%w: role %s may not read evidence", engine.ErrForbidden, p.Role))
			return
		}
		if lg == nil {
			writeError(w, http.StatusServiceUnavailable, "unavailable", "this server has no evidence log")
			return
		}
		h(w, r, lg)
	}
}

// failEvidence reports evidence errors; a log that no longer matches its
// store is an internal error with its own code, so monitoring can tell it
// from the rest.
func (s *Server) failEvidence(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, evidence.ErrTampered) {
		s.log.Error("evidence tampered", "path", r.URL.Path, "err", err)
		writeError(w, http.StatusInternalServerError, "evidence_tampered", err.Error())
		return
	}
	s.fail(w, r, err)
}

type checkpointResponse struct {
	Origin      string    `json:"origin"`
	Size        uint64    `json:"size"`
	RootHash    string    `json:"root_hash"`
	Time        time.Time `json:"time"`
	Note        string    `json:"note"`
	VerifierKey string    `json:"verifier_key"`
}

func newCheckpointResponse(lg *evidence.Log, cp *evidence.Checkpoint) checkpointResponse {
	return checkpointResponse{
		Origin: cp.Origin, Size: cp.Size, RootHash: base64.StdEncoding.EncodeToString(cp.Root), Time: cp.Time,
		Note: string(cp.Note), VerifierKey: lg.Key().VerifierKey(),
	}
}

// evidenceCheckpoint answers with a checkpoint covering every record
// committed when the request came in (signed now if the latest does not);
// ?format=note gives the signed note alone, as text, to keep outside the
// server.
func (s *Server) evidenceCheckpoint(w http.ResponseWriter, r *http.Request, lg *evidence.Log) {
	cp, err := lg.Checkpoint(r.Context(), lg.Size())
	if err != nil {
		s.failEvidence(w, r, err)
		return
	}
	switch f := r.URL.Query().Get("format"); f {
	case "note":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write(cp.Note)
	case "", "json":
		writeJSON(w, http.StatusOK, newCheckpointResponse(lg, cp))
	default:
		s.fail(w, r, fmt.Errorf("%w: format %q: want json or note", engine.ErrInvalid, f))
	}
}

func pathIndex(r *http.Request) (uint64, error) {
	v := r.PathValue("index")
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: record index %q: want a non-negative integer", engine.ErrInvalid, v)
	}
	return n, nil
}

func encodeProof(pr [][]byte) []string {
	out := make([]string, len(pr))
	for i, h := range pr {
		out[i] = base64.StdEncoding.EncodeToString(h)
	}
	return out
}

func (s *Server) evidenceRecord(w http.ResponseWriter, r *http.Request, lg *evidence.Log) {
	idx, err := pathIndex(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	e, err := lg.Entry(r.Context(), idx)
	if err != nil {
		s.failEvidence(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"index":           e.Record.Index,
		"type":            e.Record.Type,
		"origin":          e.Record.Origin,
		"session_id":      e.Record.SessionID,
		"leaf_hash":       hex.EncodeToString(e.Record.LeafHash),
		"record":          json.RawMessage(e.Record.Body),
		"inclusion_proof": encodeProof(e.Proof),
		"checkpoint":      newCheckpointResponse(lg, e.Checkpoint),
	})
}

func (s *Server) evidenceConsistency(w http.ResponseWriter, r *http.Request, lg *evidence.Log) {
	q := r.URL.Query()
	parse := func(name string, required bool) (uint64, error) {
		v := q.Get(name)
		if v == "" {
			if required {
				return 0, fmt.Errorf("%w: query parameter %s is required (a tree size)", engine.ErrInvalid, name)
			}
			return 0, nil
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: query parameter %s=%q: want a tree size", engine.ErrInvalid, name, v)
		}
		return n, nil
	}
	from, err := parse("from", true)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	to, err := parse("to", false)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if to != 0 && from > to {
		s.fail(w, r, fmt.Errorf("%w: from=%d is larger than to=%d", engine.ErrInvalid, from, to))
		return
	}
	pr, size, err := lg.Consistency(r.Context(), from, to)
	if err != nil {
		s.failEvidence(w, r, err)
		return
	}
	resp := map[string]any{"from": from, "to": size, "proof": encodeProof(pr)}
	if cp, err := lg.Checkpoint(r.Context(), 0); err == nil && cp.Size == size {
		resp["checkpoint"] = newCheckpointResponse(lg, cp)
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) evidenceBundle(w http.ResponseWriter, r *http.Request, lg *evidence.Log) {
	b, err := lg.Export(r.Context(), r.PathValue("id"))
	if err != nil {
		s.failEvidence(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if _, err := b.WriteTo(w); err != nil {
		s.log.Warn("write evidence bundle", "session", b.SessionID, "err", err)
	}
}
