package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/mod/sumdb/note"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/evidence"
	"github.com/mandate-dev/mandate/internal/redact"
	"github.com/mandate-dev/mandate/internal/secret"
	"github.com/mandate-dev/mandate/internal/store"
	"github.com/mandate-dev/mandate/internal/store/postgres"
	"github.com/mandate-dev/mandate/internal/store/sqlite"
)

func newEvidenceCmd(env Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "evidence",
		Short: "Export, verify and prove the evidence log",
		Long: `Mandate records everything it sees and decides in an append-only log: RFC 6962 Merkle
tree, checkpoints signed with the instance's Ed25519 key (signed-note format), inclusion
and consistency proofs. These commands export a session's records as a self-contained
bundle, verify a bundle offline with only the verifier key, verify a whole store against
its checkpoints and an earlier checkpoint kept elsewhere, and print the verifier key.
See docs/evidence.md.`,
	}
	cmd.AddCommand(
		newEvidencePubkeyCmd(env),
		newEvidenceCheckpointCmd(env),
		newEvidenceExportCmd(env),
		newEvidenceVerifyCmd(env),
		newEvidenceProveSecretCmd(env),
	)
	return cmd
}

func newEvidencePubkeyCmd(env Env) *cobra.Command {
	var data string
	cmd := &cobra.Command{
		Use:   "pubkey",
		Short: "Print the verifier key of the instance's checkpoints",
		Long: `Print the signed-note verifier key (name+hash+key) that checks this instance's
checkpoints. Keep a copy somewhere the operator of the data directory cannot change: a
verifier holding it detects checkpoints signed with any other key.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			k, err := evidence.LoadKey(data)
			if err != nil {
				return err
			}
			fmt.Fprintln(env.Stdout, k.VerifierKey())
			return nil
		},
	}
	cmd.Flags().StringVar(&data, "data", DefaultData, "data directory")
	return cmd
}

// source is where export and checkpoint read from: a data directory or a
// running server.
type source struct {
	data, server, token string
}

func (s *source) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&s.data, "data", "", "data directory to read (offline)")
	cmd.Flags().StringVar(&s.server, "server", "", "server URL to read from (needs a user or admin token)")
	cmd.Flags().StringVar(&s.token, "token", "", "token for --server (default $MANDATE_TOKEN)")
}

func (s *source) check(env Env) error {
	switch {
	case s.data == "" && s.server == "":
		return errors.New("give --data DIR or --server URL")
	case s.data != "" && s.server != "":
		return errors.New("give --data or --server, not both")
	case s.server != "" && s.token == "":
		if s.token = env.Getenv("MANDATE_TOKEN"); s.token == "" {
			return errors.New("--server needs --token (or MANDATE_TOKEN)")
		}
	}
	return nil
}

// openData opens an existing data directory's evidence log read-only, so
// it works beside a server that has the directory open. A checkpoint the
// export needs beyond the stored ones is signed (with the directory's key)
// but not stored.
func openData(ctx context.Context, data string) (*evidence.Log, func(), error) {
	st, err := sqlite.OpenReadOnly(ctx, filepath.Join(data, app.DatabaseFile))
	if err != nil {
		return nil, nil, fmt.Errorf("no Mandate database in %s: %w", data, err)
	}
	key, err := evidence.LoadKey(data)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	lg, err := evidence.Open(ctx, evidence.Options{Store: st, Key: key, ReadOnly: true})
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return lg, func() { lg.Close(context.Background()); st.Close() }, nil
}

// get fetches a path from the server into w.
func (s *source) get(ctx context.Context, path string, w io.Writer) error {
	u := strings.TrimRight(s.server, "/") + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(s.token))
	resp, err := (&http.Client{Timeout: 5 * time.Minute}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("GET %s: %s: %s", u, resp.Status, bytes.TrimSpace(b))
	}
	_, err = io.Copy(w, resp.Body)
	return err
}

// output opens --out (or stdout) and returns a function that finishes it:
// a file is written whole or not at all.
func output(env Env, out string) (io.Writer, func(error) error, error) {
	if out == "" || out == "-" {
		return env.Stdout, func(err error) error { return err }, nil
	}
	f, err := os.CreateTemp(filepath.Dir(out), ".mandate-evidence-*")
	if err != nil {
		return nil, nil, err
	}
	// Bundles and checkpoints are for sharing; nothing secret is in them.
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, nil, err
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	return bw, func(err error) error {
		if err == nil {
			err = bw.Flush()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(f.Name(), out)
		}
		if err != nil {
			os.Remove(f.Name())
		}
		return err
	}, nil
}

func newEvidenceCheckpointCmd(env Env) *cobra.Command {
	var (
		src source
		out string
	)
	cmd := &cobra.Command{
		Use:   "checkpoint",
		Short: "Print (or save) the latest signed checkpoint",
		Long: `Print the latest signed checkpoint as a signed note. Save it somewhere the operator
cannot rewrite (another machine, a ticket, a transparency witness): 'mandate evidence
verify --data DIR --since-checkpoint FILE' later proves the log still extends it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := src.check(env); err != nil {
				return err
			}
			w, finish, err := output(env, out)
			if err != nil {
				return err
			}
			if src.server != "" {
				return finish(src.get(cmd.Context(), "/v1/evidence/checkpoint?format=note", w))
			}
			lg, done, err := openData(cmd.Context(), src.data)
			if err != nil {
				return finish(err)
			}
			defer done()
			cp, err := lg.Checkpoint(cmd.Context(), lg.Size())
			if err == nil {
				_, err = w.Write(cp.Note)
			}
			return finish(err)
		},
	}
	src.register(cmd)
	cmd.Flags().StringVar(&out, "out", "", "file to write (default stdout)")
	return cmd
}

// exportData exports a session from a data directory. The bundle ends with
// the session's head committed in the log; when the session has records
// after its last head, the directory is opened for writing to commit one
// (refused, naming the holder, while a server has it open: export through
// it with --server then).
func exportData(ctx context.Context, data, session string) (*evidence.Bundle, error) {
	lg, done, err := openData(ctx, data)
	if err != nil {
		return nil, err
	}
	b, err := lg.Export(ctx, session)
	done()
	if !errors.Is(err, evidence.ErrHeadNotCommitted) {
		return b, err
	}
	a, err := app.Open(ctx, app.Config{DataDir: data})
	if err != nil {
		return nil, fmt.Errorf("export session %s: its head must be committed in the log first: %w", session, err)
	}
	defer a.Close()
	return a.Evidence.Export(ctx, session)
}

func newEvidenceExportCmd(env Env) *cobra.Command {
	var (
		src     source
		session string
		out     string
	)
	cmd := &cobra.Command{
		Use:   "export --session ID [--out FILE] (--data DIR | --server URL)",
		Short: "Write a session's evidence bundle",
		Long: `Write a self-contained JSON bundle of a session: every record, each with its
inclusion proof, and the signed checkpoint the proofs lead to. 'mandate evidence verify
FILE --key KEY' checks it with nothing else.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if session == "" {
				return errors.New("--session is required")
			}
			if err := src.check(env); err != nil {
				return err
			}
			w, finish, err := output(env, out)
			if err != nil {
				return err
			}
			if src.server != "" {
				return finish(src.get(cmd.Context(), "/v1/evidence/sessions/"+url.PathEscape(session)+"/bundle", w))
			}
			b, err := exportData(cmd.Context(), src.data, session)
			if err == nil {
				_, err = b.WriteTo(w)
			}
			if err == nil && out != "" {
				fmt.Fprintf(env.Stderr, "wrote %d records of session %s to %s (checkpoint: %d records)\n", len(b.Entries), session, out, b.Checkpoint.Size)
			}
			return finish(err)
		},
	}
	src.register(cmd)
	cmd.Flags().StringVar(&session, "session", "", "session id")
	cmd.Flags().StringVar(&out, "out", "", "file to write (default stdout)")
	return cmd
}

func newEvidenceVerifyCmd(env Env) *cobra.Command {
	var data, key, since, storeAddr string
	cmd := &cobra.Command{
		Use:   "verify (FILE --key KEY | --data DIR [--since-checkpoint FILE] [--key KEY] | --store DSN (--key KEY | --data DIR) [--since-checkpoint FILE])",
		Short: "Verify a bundle offline, or a whole store",
		Long: `With a bundle FILE: check it offline with the verifier key alone — the checkpoint's
signature, every record's hash and inclusion proof, that the records belong to the
session and that none is missing: the bundle ends with the session's head, committed in
the log at export, which lists every record the session had; one left out is named. A record changed
by a single character fails, and the message names it.

With --store DSN: the same for a shared PostgreSQL store, read-only (also one a replica
would refuse), with --key or the key in --data.

With --data: recompute the whole log from the stored records and hold it against every
stored checkpoint (and, with --since-checkpoint, one saved earlier outside the store, to
detect a store rolled back and extended differently). Without --key the key in the data
directory is used, which someone able to rewrite the store could also have replaced.

Exit status 0: verified; 1: not verified (the problems are listed).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case storeAddr != "":
				if len(args) == 1 {
					return errors.New("give a bundle FILE or --store DSN, not both")
				}
				return verifySharedStore(cmd.Context(), env, storeAddr, data, key, since)
			case len(args) == 1 && data != "":
				return errors.New("give a bundle FILE or --data DIR, not both")
			case len(args) == 1:
				if since != "" {
					return errors.New("--since-checkpoint is for --data")
				}
				return verifyBundle(env, args[0], key)
			case data != "":
				return verifyStore(cmd.Context(), env, data, key, since)
			}
			return errors.New("give a bundle FILE (with --key) or --data DIR")
		},
	}
	cmd.Flags().StringVar(&data, "data", "", "data directory whose whole log to verify (with --store: where the key is)")
	cmd.Flags().StringVar(&storeAddr, "store", "", "a shared store (postgres://…) whose whole log to verify")
	cmd.Flags().StringVar(&key, "key", "", "verifier key (name+hash+key, as 'mandate evidence pubkey' prints) or a file holding it")
	cmd.Flags().StringVar(&since, "since-checkpoint", "", "a checkpoint saved earlier ('mandate evidence checkpoint') the log must extend")
	return cmd
}

func verifyBundle(env Env, file, key string) error {
	if key == "" {
		return errors.New("--key is required: the verifier key you trust for this instance ('mandate evidence pubkey' prints it)")
	}
	v, err := evidence.NewVerifier(key)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	rep, err := evidence.VerifyBundle(data, v)
	if err != nil {
		fmt.Fprintf(env.Stdout, "NOT VERIFIED  %s\n", file)
		return &ExitError{Code: 1, Err: err}
	}
	fmt.Fprintf(env.Stdout, "VERIFIED  %s: session %s\n", file, rep.SessionID)
	fmt.Fprintf(env.Stdout, "  records:    %d (%s), %d reported, the rest observed\n", rep.Records, countList(rep.Types), rep.Reported)
	fmt.Fprintf(env.Stdout, "  decisions:  1 to %d, none missing\n", rep.Decisions)
	fmt.Fprintf(env.Stdout, "  complete:   every record of the session up to its head (record %d, committed %s) is in the bundle\n", rep.Head, rep.HeadTime.Format(time.RFC3339))
	fmt.Fprintf(env.Stdout, "  checkpoint: %s, %d records, signed %s by %s\n", rep.Origin, rep.TreeSize, rep.CheckpointTime.Format(time.RFC3339), v.Name())
	fmt.Fprintln(env.Stdout, "  every record hashes to its leaf and its inclusion proof leads to the signed root")
	return nil
}

func verifyStore(ctx context.Context, env Env, data, key, since string) error {
	v, keyFrom, saved, err := verifyInputs(data, key, since)
	if err != nil {
		return err
	}
	path := filepath.Join(data, app.DatabaseFile)
	st, err := sqlite.OpenReadOnly(ctx, path)
	if err != nil {
		return err
	}
	defer st.Close()
	return reportVerify(ctx, env, path, st, v, keyFrom, saved)
}

// verifySharedStore verifies a shared store's whole log, read-only.
func verifySharedStore(ctx context.Context, env Env, addr, data, key, since string) error {
	dsn, err := app.StoreAddress(addr, nil)
	if err != nil {
		return err
	}
	if key == "" && data == "" {
		return errors.New("--store needs the verifier key: --key KEY, or --data DIR holding the instance's evidence.key")
	}
	v, keyFrom, saved, err := verifyInputs(data, key, since)
	if err != nil {
		return err
	}
	st, err := postgres.OpenReadOnly(ctx, dsn)
	if err != nil {
		return err
	}
	defer st.Close()
	return reportVerify(ctx, env, "postgres "+st.Where(), st, v, keyFrom, saved)
}

func verifyInputs(data, key, since string) (note.Verifier, string, []byte, error) {
	var (
		v       note.Verifier
		keyFrom string
	)
	if key != "" {
		var err error
		if v, err = evidence.NewVerifier(key); err != nil {
			return nil, "", nil, err
		}
		keyFrom = "--key"
	} else {
		k, err := evidence.LoadKey(data)
		if err != nil {
			return nil, "", nil, err
		}
		v, keyFrom = k.Verifier(), "the data directory's own key; pass --key with a copy kept elsewhere to rule out a replaced key"
	}
	var saved []byte
	if since != "" {
		var err error
		if saved, err = os.ReadFile(since); err != nil {
			return nil, "", nil, fmt.Errorf("--since-checkpoint: %w", err)
		}
	}
	return v, keyFrom, saved, nil
}

func reportVerify(ctx context.Context, env Env, name string, st store.Store, v note.Verifier, keyFrom string, saved []byte) error {
	prog := startProgress(env.Stderr, "verifying the store", 0, "")
	rep, err := evidence.VerifyStore(ctx, st, v, saved)
	prog.Stop()
	if err != nil {
		fmt.Fprintf(env.Stdout, "NOT VERIFIED  %s\n", name)
		var ve *evidence.VerificationError
		if rep != nil && errors.As(err, &ve) {
			fmt.Fprintf(env.Stdout, "  %d records, %d checkpoints checked with key %s (%s)\n", rep.Records, rep.Checkpoints, v.Name(), keyFrom)
		}
		return &ExitError{Code: 1, Err: err}
	}
	fmt.Fprintf(env.Stdout, "VERIFIED  %s\n", name)
	fmt.Fprintf(env.Stdout, "  records:     %d (%s)\n", rep.Records, countList(rep.Types))
	fmt.Fprintf(env.Stdout, "  checkpoints: %d, every one signed by %s (%s) and matching the records\n", rep.Checkpoints, v.Name(), keyFrom)
	if rep.Rows {
		fmt.Fprintf(env.Stdout, "  rows:        every session, mandate, decision, observation, approval, tool pin and tool change row matches its evidence record, none missing\n")
	}
	if rep.Latest != nil {
		fmt.Fprintf(env.Stdout, "  latest:      %d records, signed %s\n", rep.Latest.Size, rep.Latest.Time.Format(time.RFC3339))
	}
	if rep.Since != nil {
		fmt.Fprintf(env.Stdout, "  since:       the log extends the saved checkpoint of %d records (signed %s); consistency proof of %d hashes verified\n", rep.Since.Size, rep.Since.Time.Format(time.RFC3339), rep.SinceProof)
	}
	for _, w := range rep.Warnings {
		fmt.Fprintf(env.Stdout, "  warning:     %s\n", w)
	}
	return nil
}

func countList(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", m[k], k)
	}
	return strings.Join(parts, ", ")
}

func newEvidenceProveSecretCmd(env Env) *cobra.Command {
	var data string
	cmd := &cobra.Command{
		Use:   "prove-secret --data DIR (VALUE | -)",
		Short: "Show which redaction markers stand for a value you hold",
		Long: `Secrets are stored as [REDACTED:<type>:<hash>], the hash a keyed HMAC of the value
under the data directory's redaction key. Given the original value (as an argument, or
on stdin with "-" to keep it out of shell history), print its hash and the records whose
markers carry it: proof that those records held this value, without it being stored.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			value := args[0]
			if value == "-" {
				b, err := io.ReadAll(io.LimitReader(env.Stdin, 1<<20))
				if err != nil {
					return err
				}
				value = strings.TrimRight(string(b), "\r\n")
			}
			if value == "" {
				return errors.New("no value given")
			}
			key, err := redact.LoadKey(data)
			if err != nil {
				return err
			}
			r, err := redact.New(key)
			if err != nil {
				return err
			}
			h := r.Hash(value)
			fmt.Fprintf(env.Stdout, "hash:    %s\n", h)
			types := []string{redact.KeySensitive}
			for _, m := range secret.Find(value) {
				if m.Start == 0 && m.End == len(value) {
					types = append([]string{m.Type}, types...)
				}
			}
			for _, t := range types {
				fmt.Fprintf(env.Stdout, "marker:  [REDACTED:%s:%s]\n", t, h)
			}
			return searchMarker(cmd.Context(), env, data, h)
		},
	}
	cmd.Flags().StringVar(&data, "data", DefaultData, "data directory (its redaction key and records)")
	return cmd
}

// searchMarker lists the evidence records carrying a marker hash.
func searchMarker(ctx context.Context, env Env, data, h string) error {
	st, err := sqlite.OpenReadOnly(ctx, filepath.Join(data, app.DatabaseFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer st.Close()
	needle := []byte(":" + h + "]")
	found := 0
	for from := uint64(0); ; {
		recs, err := st.EvidenceFrom(ctx, from, 4096)
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			break
		}
		for _, rec := range recs {
			from = rec.Index + 1
			if n := bytes.Count(rec.Body, needle); n > 0 {
				found++
				if found <= 50 {
					fmt.Fprintf(env.Stdout, "record:  %d (%s, session %s, %s): %d marker(s)\n", rec.Index, rec.Type, rec.SessionID, rec.CreatedAt.Format(time.RFC3339), n)
				}
			}
		}
	}
	switch {
	case found == 0:
		fmt.Fprintln(env.Stdout, "no evidence record carries this value")
	case found > 50:
		fmt.Fprintf(env.Stdout, "… %d records in all\n", found)
	}
	return nil
}
