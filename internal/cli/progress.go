package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// progress shows how far a long command has got — on a terminal only: one
// line on stderr, rewritten in place at most five times a second and erased
// when the command is done. Piped or redirected, it writes nothing, so logs
// and CI output stay clean.
type progress struct {
	w     io.Writer
	label string
	total int64 // 0: unknown; the line shows what is done and the time
	unit  string
	done  atomic.Int64
	start time.Time
	stop  chan struct{}
	wg    sync.WaitGroup
	width int
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// startProgress starts a progress line for label, counting unit up to total
// (0 if unknown). It returns a progress that does nothing when w is not a
// terminal; Stop it when done.
func startProgress(w io.Writer, label string, total int64, unit string) *progress {
	p := &progress{w: w, label: label, total: total, unit: unit, start: time.Now()}
	if !isTerminal(w) {
		return p
	}
	p.stop = make(chan struct{})
	p.wg.Go(func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.width))
				return
			case <-t.C:
				p.draw()
			}
		}
	})
	return p
}

// Add counts n more units done.
func (p *progress) Add(n int64) { p.done.Add(n) }

func (p *progress) draw() {
	done, elapsed := p.done.Load(), time.Since(p.start).Truncate(100*time.Millisecond)
	var line string
	switch {
	case p.total > 0:
		line = fmt.Sprintf("%s: %d of %d %s (%d%%), %s", p.label, done, p.total, p.unit, done*100/p.total, elapsed)
	case p.unit != "":
		line = fmt.Sprintf("%s: %d %s, %s", p.label, done, p.unit, elapsed)
	default:
		line = fmt.Sprintf("%s… %s", p.label, elapsed)
	}
	pad := max(0, p.width-len(line))
	p.width = max(p.width, len(line))
	fmt.Fprintf(p.w, "\r%s%s", line, strings.Repeat(" ", pad))
}

// Stop erases the line.
func (p *progress) Stop() {
	if p.stop == nil {
		return
	}
	close(p.stop)
	p.wg.Wait()
	p.stop = nil
}
