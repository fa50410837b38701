package evidence

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// smallBundle builds a valid bundle of four records without a store: three
// and the session's head committing them.
func smallBundle(t testing.TB) ([]byte, *Key) {
	t.Helper()
	_, key, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	contents := []struct {
		typ     string
		content string
	}{
		{TypeSession, `{"session_id":"s1","status":"active"}`},
		{TypeDecision, `{"decision_id":"d1","seq":1,"tool":"Read","args":{"file_path":"a\nb"},"effect":"allow"}`},
		{TypeObservation, `{"observation_id":"o1","decision_id":"d1","output":"\u001b[31mok"}`},
		{TypeSessionHead, `{"session_id":"s1","records":3,"indices":{"session":[0],"decision":[1],"observation":[2]},"last_decision":{"decision_id":"d1","seq":1},"status":"active","last_observation":"o1"}`},
	}
	m := &memLeaves{}
	tr := newTree(m.read)
	var bodies [][]byte
	for i, c := range contents {
		rec, err := NewRecord(c.typ, Observed, "s1", at, json.RawMessage(c.content))
		if err != nil {
			t.Fatal(err)
		}
		m.leaves = append(m.leaves, rec.LeafHash)
		if err := tr.append(uint64(i), [][]byte{rec.LeafHash}); err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, rec.Body)
	}
	size, root, _ := tr.head()
	cp, err := key.sign(size, root, at)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := tr.prover(size)
	b := &Bundle{SessionID: "s1", Checkpoint: cp}
	for i, body := range bodies {
		pr, err := p.inclusion(context.Background(), uint64(i))
		if err != nil {
			t.Fatal(err)
		}
		b.Entries = append(b.Entries, BundleEntry{Index: uint64(i), LeafHash: m.leaves[i], Proof: pr, Body: body})
	}
	var buf bytes.Buffer
	if _, err := b.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), key
}

func TestSmallBundle(t *testing.T) {
	data, key := smallBundle(t)
	rep, err := VerifyBundle(data, key.Verifier())
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if rep.Records != 4 || rep.Decisions != 1 || rep.Head != 3 {
		t.Errorf("report %+v", rep)
	}
}

// FuzzVerifyBundle feeds damaged bundles to the verifier: it must never
// panic, and whatever it accepts must still be the signed records.
func FuzzVerifyBundle(f *testing.F) {
	data, key := smallBundle(f)
	f.Add(data)
	f.Add(bytes.Replace(data, []byte(`"seq":1`), []byte(`"seq":2`), 1))
	f.Add(data[:len(data)/2])
	f.Add([]byte(`{"format":"` + BundleFormat + `","records":[{}]}`))
	f.Add([]byte(`{"records":[{"index":1e400,"record":"\"}]}`))
	v := key.Verifier()
	f.Fuzz(func(t *testing.T, in []byte) {
		rep, err := VerifyBundle(in, v)
		if err != nil {
			return
		}
		if rep.Records != 4 {
			t.Fatalf("a bundle of %d records verified: %s", rep.Records, in)
		}
	})
}

func FuzzOpenCheckpoint(f *testing.F) {
	_, key, err := GenerateKey()
	if err != nil {
		f.Fatal(err)
	}
	cp, err := key.sign(12, bytes.Repeat([]byte{1}, 32), time.Unix(0, 0))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(cp.Note)
	f.Add([]byte(fmt.Sprintf("%s\n12\nAQ==\n\n— %s x\n", key.Name(), key.Name())))
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := OpenCheckpoint(in, key.Verifier())
		if err != nil {
			return
		}
		if got.Size != 12 || got.Origin != key.Name() {
			t.Fatalf("opened a checkpoint the key never signed: %+v", got)
		}
	})
}
