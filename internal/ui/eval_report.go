package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/mandate-dev/mandate/internal/eval"
)

// maxEvalReport bounds the eval report file the policy page reads (a
// report lists its findings; a dev corpus's fits in a few MB).
const maxEvalReport = 32 << 20

// evalReportData is the policy page's summary of the configured `mandate
// eval --json` report, or why it could not be read.
type evalReportData struct {
	File     string
	Problem  string
	Modified time.Time
	Report   *eval.Report
	// SamePolicy: the report measured the policy in force.
	SamePolicy bool
	Parts      []evalPart
}

type evalPart struct {
	Name string
	F    *eval.Figures
}

// readEvalReport reads the report at path, written by `mandate eval
// --json` (or --out FILE.json). It is read at every view, so a new run
// shows without a restart.
func readEvalReport(path, policyHash string) *evalReportData {
	out := &evalReportData{File: path}
	rep, mod, err := decodeEvalReport(path)
	if err != nil {
		out.Problem = err.Error()
		return out
	}
	out.Report, out.Modified, out.SamePolicy = rep, mod, rep.PolicyHash == policyHash
	for name, f := range rep.Parts {
		if f != nil {
			out.Parts = append(out.Parts, evalPart{name, f})
		}
	}
	slices.SortFunc(out.Parts, func(a, b evalPart) int {
		// dev before held-out; any other part after, by name.
		rank := func(n string) string {
			switch n {
			case eval.PartDev:
				return "0"
			case eval.PartHeldOut:
				return "1"
			}
			return "2" + n
		}
		if rank(a.Name) < rank(b.Name) {
			return -1
		}
		return 1
	})
	return out
}

func decodeEvalReport(path string) (*eval.Report, time.Time, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, time.Time{}, err
	}
	if st.Size() > maxEvalReport {
		return nil, time.Time{}, fmt.Errorf("%s: %d bytes, over the %d MB read for the page", path, st.Size(), maxEvalReport>>20)
	}
	var rep eval.Report
	dec := json.NewDecoder(io.LimitReader(f, maxEvalReport))
	if err := dec.Decode(&rep); err != nil {
		return nil, time.Time{}, fmt.Errorf("%s: not a JSON report (write one with mandate eval --json --out FILE.json): %w", path, err)
	}
	if rep.Revision == "" || rep.PolicyHash == "" || rep.Parts == nil {
		return nil, time.Time{}, fmt.Errorf("%s: %w", path, errors.New("JSON without revision, policy_hash and parts: not a mandate eval report"))
	}
	return &rep, st.ModTime(), nil
}
