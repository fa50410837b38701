package ui

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"time"

	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/evidence"
	"github.com/mandate-dev/mandate/internal/store"
)

// Evidence is the evidence log and the store it is kept in, for the
// evidence page: the latest checkpoint, verifying the store, a session's
// bundle.
type Evidence struct {
	Log   *evidence.Log
	Store store.Store
}

type evidenceData struct {
	Size       uint64
	Checkpoint *evidence.Checkpoint
	RootB64    string
	Note       string
	Key        string
	Report     *evidence.StoreReport
	Problem    string
	Took       time.Duration
	Verified   bool
}

// evidencePage shows the log's size and its latest signed checkpoint (one
// is signed now if none covers every record), with the key to check it.
func (d *Dashboard) evidencePage(w http.ResponseWriter, r *http.Request, v *viewer) {
	data, ok := d.evidenceData(w, r, v)
	if !ok {
		return
	}
	d.render(w, r, v, http.StatusOK, "evidence", data)
}

func (d *Dashboard) evidenceData(w http.ResponseWriter, r *http.Request, v *viewer) (*evidenceData, bool) {
	if !v.CanRead() {
		d.errorPage(w, r, v, http.StatusForbidden, "Your token may not read the evidence log (an approver token reads approvals only).")
		return nil, false
	}
	if d.evidence == nil || d.evidence.Log == nil {
		d.errorPage(w, r, v, http.StatusServiceUnavailable, "This server has no evidence log.")
		return nil, false
	}
	lg := d.evidence.Log
	data := &evidenceData{Size: lg.Size(), Key: lg.Key().VerifierKey()}
	cp, err := lg.Checkpoint(r.Context(), lg.Size())
	if err != nil {
		d.fail(w, r, v, "checkpoint", err)
		return nil, false
	}
	data.Checkpoint, data.Note, data.RootB64 = cp, string(cp.Note), base64.StdEncoding.EncodeToString(cp.Root)
	return data, true
}

// verifyStore recomputes the whole log from the stored records and holds
// it against every stored checkpoint, as `mandate evidence verify --data`
// does, and shows the result.
func (d *Dashboard) verifyStore(w http.ResponseWriter, r *http.Request, v *viewer) {
	data, ok := d.evidenceData(w, r, v)
	if !ok {
		return
	}
	start := time.Now()
	rep, err := evidence.VerifyStore(r.Context(), d.evidence.Store, d.evidence.Log.Key().Verifier(), nil)
	data.Took, data.Report, data.Verified = time.Since(start).Round(time.Millisecond), rep, true
	status := http.StatusOK
	if err != nil {
		data.Problem = err.Error()
		d.log.Warn("dashboard: evidence verification found problems", "err", err)
	}
	d.render(w, r, v, status, "evidence", data)
}

// bundle downloads a session's evidence bundle, as `mandate evidence
// export` writes it; `mandate evidence verify FILE --key KEY` checks it.
func (d *Dashboard) bundle(w http.ResponseWriter, r *http.Request, v *viewer) {
	id := r.PathValue("id")
	if d.evidence == nil || d.evidence.Log == nil {
		d.errorPage(w, r, v, http.StatusServiceUnavailable, "This server has no evidence log.")
		return
	}
	// Reading the session first applies the engine's read check.
	if _, err := d.eng.GetSession(r.Context(), v.P, id); err != nil {
		d.fail(w, r, v, "session "+trunc(80, strconv.Quote(id)), err)
		return
	}
	if !v.P.Can(auth.Read) {
		d.fail(w, r, v, "session", engine.ErrForbidden)
		return
	}
	b, err := d.evidence.Log.Export(r.Context(), id)
	if err != nil {
		d.fail(w, r, v, "bundle", err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Disposition", `attachment; filename="mandate-bundle.json"`)
	h.Set("Cache-Control", "no-store")
	if _, err := b.WriteTo(w); err != nil {
		d.log.Warn("dashboard: writing an evidence bundle", "session", id, "err", err)
	}
}
