package evidence

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
)

// KeyFile is the signing key's file in the data directory (mode 0600).
const KeyFile = "evidence.key"

// Checkpoint is a signed statement that the log had Size records with the
// given root hash. Its text follows the C2SP tlog-checkpoint layout: origin,
// size and base64 root hash lines, then a "time" extension line with when it
// was made (by the signer's clock).
type Checkpoint struct {
	Origin string
	Size   uint64
	Root   []byte
	Time   time.Time
	// Note is the signed note the checkpoint was read from or written as.
	Note []byte
}

// text is the checkpoint's note text (what is signed).
func (c *Checkpoint) text() string {
	return fmt.Sprintf("%s\n%d\n%s\ntime %s\n", c.Origin, c.Size, base64.StdEncoding.EncodeToString(c.Root), c.Time.UTC().Format(time.RFC3339Nano))
}

// Key is the log's signing key.
type Key struct {
	signer   note.Signer
	verifier note.Verifier
	vkey     string
}

// GenerateKey makes a new Ed25519 signing key whose name (the checkpoint
// origin) is "mandate/" and random hex digits, and returns its encoded
// signer key (secret) with the key.
func GenerateKey() (string, *Key, error) {
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return "", nil, err
	}
	skey, _, err := note.GenerateKey(rand.Reader, "mandate/"+hex.EncodeToString(id[:]))
	if err != nil {
		return "", nil, fmt.Errorf("generate evidence key: %w", err)
	}
	k, err := ParseKey(skey)
	return skey, k, err
}

// ParseKey reads an encoded note signer key ("PRIVATE+KEY+name+hash+key").
func ParseKey(skey string) (*Key, error) {
	skey = strings.TrimSpace(skey)
	s, err := note.NewSigner(skey)
	if err != nil {
		return nil, fmt.Errorf("evidence signing key: %w", err)
	}
	// The encoded key is the algorithm byte and the Ed25519 seed; derive the
	// public key from it for the verifier.
	// (Base64 may contain '+'; the name and hash may not.)
	parts := strings.SplitN(skey, "+", 5)
	raw, err := base64.StdEncoding.DecodeString(parts[len(parts)-1])
	if err != nil || len(raw) != 1+ed25519.SeedSize {
		return nil, errors.New("evidence signing key: not an Ed25519 key")
	}
	pub := ed25519.NewKeyFromSeed(raw[1:]).Public().(ed25519.PublicKey)
	vkey, err := note.NewEd25519VerifierKey(s.Name(), pub)
	if err != nil {
		return nil, fmt.Errorf("evidence signing key: %w", err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return nil, fmt.Errorf("evidence signing key: %w", err)
	}
	return &Key{signer: s, verifier: v, vkey: vkey}, nil
}

// LoadOrCreateKey reads the signing key from dir, creating it (mode 0600)
// on first start.
func LoadOrCreateKey(dir string) (*Key, error) {
	path := filepath.Join(dir, KeyFile)
	b, err := os.ReadFile(path)
	if err == nil {
		if err := checkPrivate(path); err != nil {
			return nil, err
		}
		k, err := ParseKey(string(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return k, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("evidence key: %w", err)
	}
	skey, k, err := GenerateKey()
	if err != nil {
		return nil, err
	}
	if err := writePrivate(path, skey+"\n"); err != nil {
		if errors.Is(err, fs.ErrExist) {
			// Another process created it first: use that one.
			return LoadOrCreateKey(dir)
		}
		return nil, fmt.Errorf("evidence key: %w", err)
	}
	return k, nil
}

// LoadKey reads the signing key from dir; it is an error if there is none.
func LoadKey(dir string) (*Key, error) {
	path := filepath.Join(dir, KeyFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("evidence key: %w (the key is created when 'mandate serve' first starts)", err)
	}
	k, err := ParseKey(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// writePrivate creates a file only its owner can read, failing if it exists.
func writePrivate(path, content string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}

// checkPrivate refuses a key file others can read.
func checkPrivate(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s: mode %04o lets others read the key: chmod 600 it", path, fi.Mode().Perm())
	}
	return nil
}

// Name is the key's name, which is also the origin line of its checkpoints.
func (k *Key) Name() string { return k.signer.Name() }

// VerifierKey is the encoded note verifier key ("name+hash+key") that checks
// this key's checkpoints; it is what `mandate evidence pubkey` prints.
func (k *Key) VerifierKey() string { return k.vkey }

// Verifier checks this key's signatures.
func (k *Key) Verifier() note.Verifier { return k.verifier }

// sign makes a signed checkpoint.
func (k *Key) sign(size uint64, root []byte, at time.Time) (*Checkpoint, error) {
	cp := &Checkpoint{Origin: k.Name(), Size: size, Root: root, Time: at.UTC()}
	msg, err := note.Sign(&note.Note{Text: cp.text()}, k.signer)
	if err != nil {
		return nil, fmt.Errorf("sign checkpoint: %w", err)
	}
	cp.Note = msg
	return cp, nil
}

// NewVerifier parses an encoded note verifier key, or the name of a file
// holding one.
func NewVerifier(key string) (note.Verifier, error) {
	key = strings.TrimSpace(key)
	if key == "" {
		return nil, errors.New("no verifier key given (it is what 'mandate evidence pubkey' prints)")
	}
	v, err := note.NewVerifier(key)
	if err == nil {
		return v, nil
	}
	if b, ferr := os.ReadFile(key); ferr == nil {
		content := strings.TrimSpace(string(b))
		if v, err2 := note.NewVerifier(content); err2 == nil {
			return v, nil
		}
		// The data directory's signing key file will do too.
		if k, err2 := ParseKey(content); err2 == nil {
			return k.Verifier(), nil
		}
		return nil, fmt.Errorf("%s does not hold a verifier key (name+hash+key, as 'mandate evidence pubkey' prints)", key)
	}
	return nil, fmt.Errorf("verifier key %q: %v (want name+hash+key, as 'mandate evidence pubkey' prints, or a file holding it)", key, err)
}

// OpenCheckpoint checks a signed checkpoint note against the verifier and
// parses it. Its origin must be the verifier's name.
func OpenCheckpoint(msg []byte, v note.Verifier) (*Checkpoint, error) {
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		var unverified *note.UnverifiedNoteError
		var invalid *note.InvalidSignatureError
		switch {
		case errors.As(err, &unverified):
			var by []string
			for _, s := range unverified.Note.UnverifiedSigs {
				by = append(by, fmt.Sprintf("%s+%08x", s.Name, s.Hash))
			}
			return nil, fmt.Errorf("%w: checkpoint is not signed by key %s+%08x (signed by %s)", ErrTampered, v.Name(), v.KeyHash(), strings.Join(by, ", "))
		case errors.As(err, &invalid):
			return nil, fmt.Errorf("%w: checkpoint signature by %s+%08x does not verify: its text was changed or the signature forged", ErrTampered, invalid.Name, invalid.Hash)
		}
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	cp, err := parseCheckpointText(n.Text)
	if err != nil {
		return nil, err
	}
	if cp.Origin != v.Name() {
		return nil, fmt.Errorf("checkpoint origin %q is not the key's name %q", cp.Origin, v.Name())
	}
	cp.Note = msg
	return cp, nil
}

func parseCheckpointText(text string) (*Checkpoint, error) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) < 3 {
		return nil, fmt.Errorf("checkpoint: %d lines, want origin, size and root hash", len(lines))
	}
	size, err := strconv.ParseUint(lines[1], 10, 64)
	if err != nil {
		return nil, fmt.Errorf("checkpoint size %q: %w", lines[1], err)
	}
	root, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(root) != 32 {
		return nil, fmt.Errorf("checkpoint root hash %q: want 32 bytes in base64", lines[2])
	}
	cp := &Checkpoint{Origin: lines[0], Size: size, Root: root}
	for _, ext := range lines[3:] {
		if v, ok := strings.CutPrefix(ext, "time "); ok {
			if cp.Time, err = time.Parse(time.RFC3339Nano, v); err != nil {
				return nil, fmt.Errorf("checkpoint time %q: %w", v, err)
			}
		}
	}
	return cp, nil
}
