package server

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/mandate-dev/mandate/api"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/evidence"
	"github.com/mandate-dev/mandate/internal/openapi"
)

// evidenceRoutes mounts the evidence log's read side: the latest signed
// checkpoint, a record with its inclusion proof, consistency proofs between
// tree sizes, and a session's bundle. Readers (user, admin) only.
func (s *Server) evidenceRoutes(lg *evidence.Log) {
	s.handle(openapi.Operation{
		Method: "GET", Path: "/v1/evidence/checkpoint", Roles: readers,
		Summary:     "A signed checkpoint covering every record committed when the request arrived",
		Description: "Save it outside the server: 'mandate evidence verify --since-checkpoint' proves the log still extends it.",
		Params:      []openapi.Param{{Name: "format", Enum: []string{"json", "note"}, Description: "note: the signed note alone, as text"}},
		Responses: []openapi.Response{
			{Status: 200, Body: api.Checkpoint{}},
			{Status: 200, ContentType: "text/plain", Description: "with format=note: the signed note"},
		},
		Errors: with(commonErrors, 400),
	}, s.withEvidence(lg, s.evidenceCheckpoint))
	s.handle(openapi.Operation{
		Method: "GET", Path: "/v1/evidence/records/{index}", Roles: readers,
		Summary:   "One evidence record with its inclusion proof against the latest checkpoint, which is signed now if it does not cover the record",
		Params:    []openapi.Param{{Name: "index", In: "path", Type: "integer", Description: "the record's index in the log"}},
		Responses: []openapi.Response{{Status: 200, Body: api.EvidenceEntry{}}},
		Errors:    with(commonErrors, 400, 404),
	}, s.withEvidence(lg, s.evidenceRecord))
	s.handle(openapi.Operation{
		Method: "GET", Path: "/v1/evidence/consistency", Roles: readers,
		Summary: "A consistency proof that the log of size from is a prefix of the log of size to (default: the latest checkpoint's size)",
		Params: []openapi.Param{
			{Name: "from", Type: "integer", Required: true, Description: "the earlier tree size"},
			{Name: "to", Type: "integer", Description: "the later tree size (default: the latest checkpoint's)"},
		},
		Responses: []openapi.Response{{Status: 200, Body: api.ConsistencyProof{}}},
		Errors:    with(commonErrors, 400, 404),
	}, s.withEvidence(lg, s.evidenceConsistency))
	s.handle(readOne("/v1/evidence/sessions/{id}/bundle", "A session's evidence bundle: every record, each with its inclusion proof, and the signed checkpoint", api.Bundle{}), s.withEvidence(lg, s.evidenceBundle))
}

type evidenceHandler func(w http.ResponseWriter, r *http.Request, lg *evidence.Log)

func (s *Server) withEvidence(lg *evidence.Log, h evidenceHandler) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, p auth.Principal) {
		if !s.may(w, r, p, auth.Read, "read evidence") {
			return
		}
		if lg == nil {
			writeError(w, http.StatusServiceUnavailable, "unavailable", "this server has no evidence log")
			return
		}
		// A shared store's records are readable once integrated: answer
		// for everything committed before the request.
		if sy, ok := s.st.(interface{ SyncEvidence(context.Context) error }); ok {
			ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
			err := sy.SyncEvidence(ctx)
			cancel()
			if err != nil {
				s.fail(w, r, err)
				return
			}
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

func newCheckpointResponse(lg *evidence.Log, cp *evidence.Checkpoint) api.Checkpoint {
	return api.Checkpoint{
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
	writeJSON(w, http.StatusOK, api.EvidenceEntry{
		Index:          e.Record.Index,
		Type:           e.Record.Type,
		Origin:         e.Record.Origin,
		SessionID:      e.Record.SessionID,
		LeafHash:       hex.EncodeToString(e.Record.LeafHash),
		Record:         json.RawMessage(e.Record.Body),
		InclusionProof: encodeProof(e.Proof),
		Checkpoint:     newCheckpointResponse(lg, e.Checkpoint),
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
	resp := api.ConsistencyProof{From: from, To: size, Proof: encodeProof(pr)}
	if cp, err := lg.Checkpoint(r.Context(), 0); err == nil && cp.Size == size {
		c := newCheckpointResponse(lg, cp)
		resp.Checkpoint = &c
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
