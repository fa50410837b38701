package eval

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/baseline"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/store"
)

// The behaviour part of the eval: episodes of one agent replayed in file
// order on one engine, so the agent's baseline learns from the earlier
// ones, graded on episode-level expectations the engine never sees:
//
//	"expect": {"drift": true|false, "unlike_self": true|false}
//
// drift: after the episode, its version's drift verdict against the
// version before it is "drift" (insufficient counts as no drift).
// unlike_self: one of the episode's decisions was unlike itself — its
// signals carry baseline.unlike_self (monitoring, or learning with
// signals.unlike_self_min_sessions sessions), or, on decisions recorded
// before that signal, it was made in monitoring with a score at or above
// the configured threshold.

// Expect is a behaviour episode's expectation; nil fields are not graded.
type Expect struct {
	Drift      *bool `json:"drift"`
	UnlikeSelf *bool `json:"unlike_self"`
}

// BehaviourEpisode is an episode with its expectation.
type BehaviourEpisode struct {
	*Episode
	Expect Expect
}

// BehaviourFile is one file's episodes, in file order.
type BehaviourFile struct {
	Path     string
	Episodes []*BehaviourEpisode
}

// BehaviourCorpus is a set of behaviour files.
type BehaviourCorpus struct {
	Files []*BehaviourFile
	Hash  string
}

// DecodeBehaviour parses one behaviour episode. It is an ordinary scenario
// line, except that a call's label may be left out (behaviour episodes are
// graded as a whole, not call by call) and the category defaults to
// "behaviour/benign".
func DecodeBehaviour(line []byte) (*BehaviourEpisode, error) {
	if len(line) > MaxLine {
		return nil, fmt.Errorf("line is %d bytes, over the %d-byte limit", len(line), MaxLine)
	}
	var w wireEpisode
	if err := json.Unmarshal(line, &w); err != nil {
		return nil, describeJSONError(err)
	}
	var ex struct {
		Expect *json.RawMessage `json:"expect"`
	}
	if err := json.Unmarshal(line, &ex); err != nil {
		return nil, describeJSONError(err)
	}
	be := &BehaviourEpisode{}
	if ex.Expect != nil && !isNull(*ex.Expect) {
		dec := json.NewDecoder(bytes.NewReader(*ex.Expect))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&be.Expect); err != nil {
			return nil, fmt.Errorf("expect: %v (want {\"drift\": true|false, \"unlike_self\": true|false})", err)
		}
	}
	if w.Category == nil {
		c := "behaviour/benign"
		w.Category = &c
	}
	for i := range w.Calls {
		if len(w.Calls[i].Label) == 0 {
			w.Calls[i].Label = json.RawMessage("null")
		}
	}
	ep, err := w.episode()
	if err != nil {
		return nil, err
	}
	be.Episode = ep
	return be, nil
}

// LoadBehaviour reads behaviour files (a directory means its *.jsonl
// files). A line that cannot be used is an error naming it.
func LoadBehaviour(paths []string) (*BehaviourCorpus, error) {
	files, contents, err := readAll(paths, "behaviour episodes")
	if err != nil {
		return nil, err
	}
	c := &BehaviourCorpus{}
	h := sha256.New()
	var bad []*LineError
	for i, f := range files {
		h.Write(contents[i])
		bf := &BehaviourFile{Path: f}
		for n, line := range lines(contents[i]) {
			ep, err := DecodeBehaviour(line)
			if err != nil {
				bad = append(bad, &LineError{Position: Position{File: f, Line: n}, Err: err})
				continue
			}
			ep.Source = Position{File: f, Line: n}
			bf.Episodes = append(bf.Episodes, ep)
		}
		if len(bf.Episodes) > 0 {
			c.Files = append(c.Files, bf)
		}
	}
	if len(bad) > 0 {
		return nil, &BadLinesError{Lines: bad}
	}
	if len(c.Files) == 0 {
		return nil, errors.New("no behaviour episodes")
	}
	c.Hash = "sha256:" + hex.EncodeToString(h.Sum(nil))
	return c, nil
}

// BehaviourReport is what a behaviour replay found.
type BehaviourReport struct {
	Corpus   string `json:"corpus"`
	Hash     string `json:"hash"`
	Files    int    `json:"files"`
	Sessions int    `json:"sessions"`
	// Drift: episodes expecting drift and how many were detected;
	// episodes expecting none and how many raised it (false alarms).
	Drift DriftCounts `json:"drift"`
	// UnlikeSelf: the confusion counts of the episode-level flag.
	UnlikeSelf UnlikeSelfCounts `json:"unlike_self"`
	// Categories are the same counts per episode category
	// ("mail/benign", "coding/harmful"), which a total can hide.
	Categories map[string]*CategoryCounts `json:"categories,omitempty"`
	// Digest is a hash of every decision replayed (episode, tool, effect
	// and signals, in order): two runs of one corpus give the same one.
	Digest string   `json:"digest"`
	Errors []string `json:"errors,omitempty"`
	// Notes are the episodes graded wrong, with what the engine saw.
	Notes []string `json:"notes,omitempty"`
}

// DriftCounts are the graded drift expectations.
type DriftCounts struct {
	Expected     int `json:"expected"`
	Detected     int `json:"detected"`
	Insufficient int `json:"insufficient"`
	Benign       int `json:"benign"`
	FalseAlarms  int `json:"false_alarms"`
}

// UnlikeSelfCounts are the confusion counts of the unlike-self flag.
type UnlikeSelfCounts struct {
	TP int `json:"tp"`
	FP int `json:"fp"`
	FN int `json:"fn"`
	TN int `json:"tn"`
}

// CategoryCounts are one category's sessions and graded expectations.
type CategoryCounts struct {
	Sessions   int              `json:"sessions"`
	Drift      DriftCounts      `json:"drift"`
	UnlikeSelf UnlikeSelfCounts `json:"unlike_self"`
}

// category returns the counts of an episode's category.
func (r *BehaviourReport) category(name string) *CategoryCounts {
	if r.Categories == nil {
		r.Categories = map[string]*CategoryCounts{}
	}
	c := r.Categories[name]
	if c == nil {
		c = &CategoryCounts{}
		r.Categories[name] = c
	}
	return c
}

// DetectionRate is detected / expected drift episodes.
func (r *BehaviourReport) DetectionRate() float64 { return ratio(r.Drift.Detected, r.Drift.Expected) }

// FalseAlarmsPer1000 is false drift alarms per 1,000 benign episodes.
func (r *BehaviourReport) FalseAlarmsPer1000() float64 {
	return 1000 * ratio(r.Drift.FalseAlarms, r.Drift.Benign)
}

// Precision and Recall of the unlike-self flag.
func (r *BehaviourReport) Precision() float64 {
	return ratio(r.UnlikeSelf.TP, r.UnlikeSelf.TP+r.UnlikeSelf.FP)
}

// Recall of the unlike-self flag.
func (r *BehaviourReport) Recall() float64 {
	return ratio(r.UnlikeSelf.TP, r.UnlikeSelf.TP+r.UnlikeSelf.FN)
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// OpenEngine opens a fresh engine for one behaviour file.
type OpenEngine func(ctx context.Context) (eng *engine.Engine, closeFn func() error, err error)

// RunBehaviour replays each file on an engine of its own, episode by
// episode in file order, and grades the expectations.
func RunBehaviour(ctx context.Context, open OpenEngine, c *BehaviourCorpus, name string) (*BehaviourReport, error) {
	rep := &BehaviourReport{Corpus: name, Hash: c.Hash, Files: len(c.Files)}
	digest := sha256.New()
	for _, f := range c.Files {
		eng, closeFn, err := open(ctx)
		if err != nil {
			return nil, err
		}
		err = runBehaviourFile(ctx, eng, f, rep, digest)
		if cerr := closeFn(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
	}
	rep.Digest = "sha256:" + hex.EncodeToString(digest.Sum(nil))
	return rep, nil
}

func runBehaviourFile(ctx context.Context, eng *engine.Engine, f *BehaviourFile, rep *BehaviourReport, digest io.Writer) error {
	cfg := eng.BaselineConfig()
	admin := auth.Principal{Role: auth.RoleAdmin, Name: "eval"}
	for _, ep := range f.Episodes {
		out, decisions, err := replayBehaviour(ctx, eng, ep.Episode)
		if err != nil {
			return err
		}
		for i, o := range out {
			if o.err != "" {
				rep.Errors = append(rep.Errors, fmt.Sprintf("%s call %d: %s", ep.Source, i, o.err))
			}
		}
		if err := eng.FlushBaselines(ctx); err != nil {
			return err
		}
		for _, d := range decisions {
			sig, _ := json.Marshal(d.Signals)
			fmt.Fprintf(digest, "%s\x00%s\x00%s\x00%s\n", ep.ID, d.Tool, d.Effect, sig)
		}
		rep.Sessions++
		cat := rep.category(ep.Category)
		cat.Sessions++
		if e := ep.Expect.UnlikeSelf; e != nil {
			flagged := false
			for _, d := range decisions {
				flagged = flagged || unlikeSelf(cfg, d.Signals)
			}
			switch {
			case *e && flagged:
				rep.UnlikeSelf.TP++
				cat.UnlikeSelf.TP++
			case *e:
				rep.UnlikeSelf.FN++
				cat.UnlikeSelf.FN++
				rep.Notes = append(rep.Notes, fmt.Sprintf("%s: unlike-self missed", ep.ID))
			case flagged:
				rep.UnlikeSelf.FP++
				cat.UnlikeSelf.FP++
				rep.Notes = append(rep.Notes, fmt.Sprintf("%s: unlike-self false alarm: %s", ep.ID, scoreReason(cfg, decisions)))
			default:
				rep.UnlikeSelf.TN++
				cat.UnlikeSelf.TN++
			}
		}
		if e := ep.Expect.Drift; e != nil {
			verdict, why := baseline.VerdictStable, ""
			if dr, err := eng.Drift(ctx, admin, ep.Agent.ID); err == nil {
				version := baseline.Version(ep.Agent.Model, ep.Agent.SystemPromptHash, ep.Agent.ToolsetHash, ep.Agent.RetrievalSource)
				for _, p := range dr.Pairs {
					if p.To == version {
						verdict, why = p.Verdict, strings.Join(p.Reasons, "; ")
					}
				}
			}
			if (verdict == baseline.VerdictDrift) != *e {
				rep.Notes = append(rep.Notes, fmt.Sprintf("%s: drift expected %v, verdict %s: %s", ep.ID, *e, verdict, why))
			}
			if *e {
				rep.Drift.Expected++
				cat.Drift.Expected++
				switch verdict {
				case baseline.VerdictDrift:
					rep.Drift.Detected++
					cat.Drift.Detected++
				case baseline.VerdictInsufficient:
					rep.Drift.Insufficient++
					cat.Drift.Insufficient++
				}
			} else {
				rep.Drift.Benign++
				cat.Drift.Benign++
				if verdict == baseline.VerdictDrift {
					rep.Drift.FalseAlarms++
					cat.Drift.FalseAlarms++
				}
			}
		}
	}
	return nil
}

// scoreReason is the reason of the highest score among decisions.
func scoreReason(cfg *baseline.Config, ds []*store.Decision) string {
	best, why := -1.0, ""
	for _, d := range ds {
		if !unlikeSelf(cfg, d.Signals) {
			continue
		}
		for _, s := range d.Signals {
			var v float64
			if s.Name == baseline.SignalScore && json.Unmarshal(s.Value, &v) == nil && v > best {
				best, why = v, d.Tool+": "+s.Reason
			}
		}
	}
	return why
}

// unlikeSelf reads the flag from a decision's recorded signals.
func unlikeSelf(cfg *baseline.Config, sig []baseline.Signal) bool {
	monitoring, score := false, 0.0
	for _, s := range sig {
		switch s.Name {
		case baseline.SignalUnlikeSelf:
			// Said by the engine, in monitoring or while learning once
			// the agent's sample suffices.
			return string(s.Value) == "true"
		case baseline.SignalState:
			monitoring = string(s.Value) == strconv.Quote(baseline.Monitoring)
		case baseline.SignalScore:
			_ = json.Unmarshal(s.Value, &score)
		}
	}
	return monitoring && score >= cfg.Signals.UnlikeSelf
}

// replayBehaviour replays one episode as Run does and returns the
// decisions of the sessions it made, as stored (with their signals).
//
// The replay is deterministic: after each call it waits for the baseline
// fold, so every call is assessed on a profile holding exactly the calls
// before it. (The fold runs in the background; without the wait, whether a
// call saw its session's previous calls depended on scheduling, and the
// unlike-self figures moved by one or two between identical runs.)
func replayBehaviour(ctx context.Context, eng *engine.Engine, ep *Episode) ([]outcome, []*store.Decision, error) {
	var ids []string
	opts := &Options{
		afterCall: eng.FlushBaselines,
		onSession: func(id string) { ids = append(ids, id) },
	}
	if err := opts.checkApprover(); err != nil {
		return nil, nil, err
	}
	out, err := replay(ctx, eng, ep, opts)
	if err != nil {
		return nil, nil, err
	}
	var decisions []*store.Decision
	for _, id := range ids {
		ds, err := eng.Store().ListDecisions(ctx, store.DecisionFilter{SessionID: id, Limit: 1000})
		if err != nil {
			return nil, nil, err
		}
		decisions = append(decisions, ds...)
	}
	return out, decisions, nil
}
