package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/mandate-dev/mandate/client"
)

// `mandate approvals watch` is a live list for a person at a terminal: it
// follows the event stream, shows what is pending with what each call is and
// why it was asked, and answers with one key press. It draws with plain ANSI
// (clear, reverse video) in raw mode, so it works in any terminal, tmux and
// screen included; when stdin is not a terminal it reads line commands
// ("a 1", "s 2", "d 3", "q") instead.

func newApprovalsWatchCmd(env Env, f *approvalFlags) *cobra.Command {
	var session string
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "A live list of pending approvals; answer with a key press",
		Long: `A live list of pending approvals, newest first, updated as they arrive and are answered.

Keys:  ↑/↓ or k/j  select         1-9  select by number
       a           approve once (this exact call)
       s           approve for the session (calls like it; amends the mandate)
       d           deny
       r           refresh        q or Ctrl-C  quit

Without a terminal on stdin, it prints the list whenever it changes and reads commands
one per line: "a N", "s N", "d N" (N as listed), "r", "q".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client(env)
			if err != nil {
				return err
			}
			w := &watcher{c: c, env: env, session: session}
			return w.run(cmd.Context())
		},
	}
	cmd.Flags().StringVar(&session, "session", "", "only this session's approvals")
	return cmd
}

type watcher struct {
	c       *client.Client
	env     Env
	session string

	tty    bool
	list   []*client.Approval
	sel    int
	status string
	err    string
}

// key is one key press (or, without a terminal, one command line).
type key struct {
	r   rune   // a, s, d, j, k, r, q, 1-9; 'U'/'D' for the arrows
	arg string // a line command's number
}

func (w *watcher) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	in := w.env.Stdin
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		old, err := term.MakeRaw(int(f.Fd()))
		if err != nil {
			return fmt.Errorf("terminal: %w", err)
		}
		defer term.Restore(int(f.Fd()), old)
		w.tty = true
		defer fmt.Fprint(w.env.Stdout, "\x1b[?25h\r\n")
		fmt.Fprint(w.env.Stdout, "\x1b[?25l") // hide the cursor
	}
	keys := make(chan key, 16)
	go w.readKeys(in, keys)
	changed := make(chan struct{}, 1)
	var wg sync.WaitGroup
	wg.Go(func() { w.follow(ctx, changed) })
	defer wg.Wait()
	defer cancel()

	if err := w.refresh(ctx); err != nil {
		return err
	}
	w.draw()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
			if err := w.refresh(ctx); err != nil {
				w.err = err.Error()
			}
		case <-tick.C:
			if !w.tty {
				continue // a line-mode list is printed on change only
			}
		case k, ok := <-keys:
			if !ok || k.r == 'q' {
				return nil
			}
			w.handle(ctx, k)
		}
		w.draw()
	}
}

// follow reads the event stream and signals changed on each approval
// event, reconnecting (with the last id seen) when the stream breaks.
func (w *watcher) follow(ctx context.Context, changed chan<- struct{}) {
	last := ""
	backoff := 500 * time.Millisecond
	for ctx.Err() == nil {
		s, err := w.c.Events(ctx, client.EventsRequest{Types: []string{"approval", "approval.answered"}, SessionID: w.session, LastEventID: last})
		if err == nil {
			backoff = 500 * time.Millisecond
			for {
				if _, err := s.Next(); err != nil {
					break
				}
				last = s.LastID
				select {
				case changed <- struct{}{}:
				default:
				}
			}
			s.Close()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 10*time.Second)
		// Whatever was missed while reconnecting, the list is read again.
		select {
		case changed <- struct{}{}:
		default:
		}
	}
}

func (w *watcher) refresh(ctx context.Context) error {
	list, err := w.c.Approvals(ctx, client.ApprovalFilter{State: client.Pending, SessionID: w.session, Limit: 200})
	if err != nil {
		return err
	}
	selected := ""
	if w.sel < len(w.list) {
		selected = w.list[w.sel].ID
	}
	w.list, w.sel, w.err = list, 0, ""
	for i, a := range list {
		if a.ID == selected {
			w.sel = i
		}
	}
	return nil
}

func (w *watcher) handle(ctx context.Context, k key) {
	if k.arg != "" {
		n, err := strconv.Atoi(k.arg)
		if err != nil || n < 1 || n > len(w.list) {
			w.err = fmt.Sprintf("no approval number %q", k.arg)
			return
		}
		w.sel = n - 1
	}
	switch k.r {
	case 'j', 'D':
		w.sel = min(w.sel+1, max(0, len(w.list)-1))
	case 'k', 'U':
		w.sel = max(w.sel-1, 0)
	case 'r':
		if err := w.refresh(ctx); err != nil {
			w.err = err.Error()
		}
	case 'a', 's', 'd':
		if len(w.list) == 0 {
			w.err = "nothing is pending"
			return
		}
		a := w.list[w.sel]
		ans := client.Answer{Decision: "approve", Scope: "once", Via: "cli"}
		switch k.r {
		case 's':
			ans.Scope = "session"
		case 'd':
			ans = client.Answer{Decision: "deny", Via: "cli"}
		}
		got, err := w.c.AnswerApproval(ctx, a.ID, ans)
		if err != nil {
			w.err = err.Error()
		} else {
			w.status = fmt.Sprintf("%s %s (%s)", got.State, short(got.ID), got.Tool)
			if got.Scope == "session" && got.State == client.Approved {
				w.status += ": calls like it are allowed for the rest of the session"
			}
		}
		if err := w.refresh(ctx); err != nil {
			w.err = err.Error()
		}
	default:
		if k.r >= '1' && k.r <= '9' {
			if n := int(k.r - '0'); n <= len(w.list) {
				w.sel = n - 1
			}
		}
	}
}

func short(id string) string {
	if len(id) > 8 {
		return "…" + id[len(id)-8:]
	}
	return id
}

// readKeys turns stdin into keys: single bytes (and arrow escapes) on a
// terminal, whole lines otherwise. It closes keys at EOF.
func (w *watcher) readKeys(in io.Reader, keys chan<- key) {
	defer close(keys)
	br := bufio.NewReader(in)
	if !w.tty {
		for {
			line, err := br.ReadString('\n')
			if f := strings.Fields(line); len(f) > 0 && f[0] != "" {
				k := key{r: []rune(f[0])[0]}
				if len(f) > 1 {
					k.arg = f[1]
				}
				keys <- k
			}
			if err != nil {
				return
			}
		}
	}
	for {
		b, err := br.ReadByte()
		if err != nil {
			return
		}
		switch b {
		case 3, 4: // Ctrl-C, Ctrl-D
			keys <- key{r: 'q'}
			return
		case 0x1b:
			if n, _ := br.Peek(2); len(n) == 2 && n[0] == '[' {
				br.Discard(2)
				switch n[1] {
				case 'A':
					keys <- key{r: 'U'}
				case 'B':
					keys <- key{r: 'D'}
				}
			}
		default:
			keys <- key{r: rune(b)}
		}
	}
}

// draw shows the list: the whole screen on a terminal, plain text
// otherwise.
func (w *watcher) draw() {
	out := w.env.Stdout
	nl := "\n"
	if w.tty {
		nl = "\r\n"
	}
	var b strings.Builder
	if w.tty {
		b.WriteString("\x1b[H\x1b[2J")
	}
	now := time.Now()
	fmt.Fprintf(&b, "Mandate approvals: %d pending%s", len(w.list), nl)
	if w.tty {
		fmt.Fprintf(&b, "[a] approve once  [s] approve for the session  [d] deny  [↑↓ jk 1-9] select  [r] refresh  [q] quit%s", nl)
	}
	b.WriteString(nl)
	if len(w.list) == 0 {
		b.WriteString("  nothing is waiting for you" + nl)
	}
	for i, a := range w.list {
		mark, on, off := " ", "", ""
		if i == w.sel && w.tty {
			mark, on, off = ">", "\x1b[7m", "\x1b[0m"
		}
		fmt.Fprintf(&b, "%s%s %d  %s  %s  session %s  %s%s%s", on, mark, i+1, a.Tool, kindOf(a), a.SessionID, deadlineText(a, now), off, nl)
		fmt.Fprintf(&b, "      why:  %s%s", clip(strings.Join(a.Reasons, "; "), 110), nl)
		if args := string(a.Args); args != "" {
			fmt.Fprintf(&b, "      call: %s%s", clip(args, 110), nl)
		}
		if a.Judge != nil {
			if a.Judge.Error != "" {
				fmt.Fprintf(&b, "      judge (%s): no opinion: %s%s", a.Judge.Model, clip(a.Judge.Error, 80), nl)
			} else {
				fmt.Fprintf(&b, "      judge (%s): %s — %s%s", a.Judge.Model, a.Judge.Decision, clip(a.Judge.Reason, 80), nl)
			}
		}
		fmt.Fprintf(&b, "      id:   %s%s", a.ID, nl)
	}
	if w.status != "" {
		fmt.Fprintf(&b, "%s%s%s", nl, w.status, nl)
	}
	if w.err != "" {
		fmt.Fprintf(&b, "%serror: %s%s", nl, w.err, nl)
	}
	if !w.tty {
		b.WriteString("> " + nl)
	}
	io.WriteString(out, b.String())
}

func kindOf(a *client.Approval) string {
	if a.Kind == "" {
		return ""
	}
	return "(" + a.Kind + ")"
}
