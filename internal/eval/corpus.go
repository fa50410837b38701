package eval

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Corpus is a set of scenario files, decoded.
type Corpus struct {
	// Files are the scenario files read, in the order they were hashed
	// and replayed (sorted by path).
	Files []string
	// Hash is "sha256:" and the hex SHA-256 of the files' bytes,
	// concatenated in Files order.
	Hash     string
	Episodes []*Episode
	// Skipped are the lines left out because they could not be used
	// (only when loading with SkipBad).
	Skipped []*LineError
}

// LoadOptions change how scenario files are read.
type LoadOptions struct {
	// SkipBad leaves unusable lines out (they are listed in
	// Corpus.Skipped) instead of failing the load.
	SkipBad bool
}

// BadLinesError lists every unusable line of a load.
type BadLinesError struct {
	Lines []*LineError
}

func (e *BadLinesError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d unusable scenario line(s)", len(e.Lines))
	for _, l := range e.Lines {
		b.WriteString("\n  ")
		b.WriteString(l.Error())
	}
	return b.String()
}

// ScenarioExt is the extension of scenario files found in a directory.
const ScenarioExt = ".jsonl"

// Load reads scenario files. A directory contributes its *.jsonl files (not
// its subdirectories). Every unusable line is reported with its file and
// line number; unless opts.SkipBad, any such line fails the load.
func Load(paths []string, opts LoadOptions) (*Corpus, error) {
	if len(paths) == 0 {
		return nil, errors.New("no scenario files or directories given")
	}
	files, contents, err := readAll(paths, "scenarios")
	if err != nil {
		return nil, err
	}
	c := &Corpus{Files: files}
	h := sha256.New()
	seen := map[string]Position{}
	var bad []*LineError
	for i, f := range files {
		h.Write(contents[i])
		for n, line := range lines(contents[i]) {
			pos := Position{File: f, Line: n}
			ep, err := Decode(line)
			if err == nil {
				err = alreadyUsed(seen, ep.ID)
			}
			if err != nil {
				bad = append(bad, &LineError{Position: pos, Err: err})
				continue
			}
			ep.Source = pos
			seen[ep.ID] = pos
			c.Episodes = append(c.Episodes, ep)
		}
	}
	c.Hash = "sha256:" + hex.EncodeToString(h.Sum(nil))
	if len(bad) > 0 && !opts.SkipBad {
		return nil, &BadLinesError{Lines: bad}
	}
	c.Skipped = bad
	if len(c.Episodes) == 0 {
		return nil, fmt.Errorf("no episodes in %s", strings.Join(files, ", "))
	}
	return c, nil
}

// alreadyUsed says where id was first used, if seen holds it: ids are
// unique across a corpus's files.
func alreadyUsed(seen map[string]Position, id string) error {
	if first, dup := seen[id]; dup {
		return fmt.Errorf("id %q is already used at %s", id, first)
	}
	return nil
}

// readAll expands the arguments and reads every file; what names the files
// in a read error ("scenarios").
func readAll(paths []string, what string) (files []string, contents [][]byte, err error) {
	if files, err = expand(paths); err != nil {
		return nil, nil, err
	}
	contents = make([][]byte, len(files))
	for i, f := range files {
		if contents[i], err = os.ReadFile(f); err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", what, err)
		}
	}
	return files, contents, nil
}

// expand turns the arguments into a sorted list of distinct files.
func expand(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("scenarios: %w", err)
		}
		if !fi.IsDir() {
			files = append(files, filepath.Clean(p))
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("scenarios: %w", err)
		}
		n := len(files)
		for _, e := range entries {
			if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ScenarioExt) {
				files = append(files, filepath.Join(p, e.Name()))
			}
		}
		if len(files) == n {
			return nil, fmt.Errorf("scenarios: no *%s files in %s", ScenarioExt, p)
		}
	}
	slices.Sort(files)
	return slices.Compact(files), nil
}

// lines yields each non-blank line with its 1-based number. A trailing \r
// (CRLF files) is not part of the line.
func lines(data []byte) func(yield func(int, []byte) bool) {
	return func(yield func(int, []byte) bool) {
		n := 0
		for len(data) > 0 {
			n++
			line, rest, _ := bytes.Cut(data, []byte{'\n'})
			data = rest
			line = bytes.TrimSuffix(line, []byte{'\r'})
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			if !yield(n, line) {
				return
			}
		}
	}
}
