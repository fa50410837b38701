package action

import (
	"slices"
	"testing"
	"time"
)

// benchCalls are representative calls: a file write, an e-mail, a shell
// pipeline of three commands, a payment, and an unknown tool with a schema.
func benchCalls() []Call {
	return []Call{
		{Tool: "Write", Args: map[string]any{"file_path": "src/handler.go", "content": "package main\n\nfunc main() {}\n"}, WorkingDir: testWD, HomeDir: testHome},
		{Tool: "mcp__gmail__send_email", Args: map[string]any{"to": []any{"bob@x.org"}, "cc": "carol@y.org", "subject": "Q3 report", "body": "Hi Bob, attached is the report.", "attachments": []any{"reports/q3.pdf"}}, WorkingDir: testWD, HomeDir: testHome},
		{Tool: "Bash", Args: map[string]any{"command": "git log --oneline -20 | grep fix | wc -l"}, WorkingDir: testWD, HomeDir: testHome},
		{Tool: "transfer_money", Args: map[string]any{"iban": "DE89370400440532013000", "amount": 250, "currency": "EUR", "reference": "rent"}},
		{Tool: "mcp__crm__update_lead", Args: map[string]any{"lead_id": "L-1", "status": "won"}, Tools: []ToolDef{{Name: "update_lead", Description: "Updates a lead in the CRM.", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"lead_id": map[string]any{"type": "string"}, "status": map[string]any{"type": "string"}}}}}},
	}
}

func BenchmarkClassify(b *testing.B) {
	c := newTestClassifier(b)
	names := []string{"Write", "send_email", "Bash_pipeline", "transfer", "unknown_with_schema"}
	for i, call := range benchCalls() {
		b.Run(names[i], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.Classify(call)
			}
		})
	}
}

func BenchmarkParseShell(b *testing.B) {
	line := `cd /srv/app && git pull --rebase && sudo -u app env RAILS_ENV=production bundle exec rake db:migrate 2>&1 | tee -a log/deploy.log`
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, err := ParseShell(line, "/home/u", "/home/u"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNewClassifier(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewClassifier(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClassifyLatency reports the per-call latency distribution over
// the representative calls (the machine's jitter included: compare runs
// with benchstat, never one number).
func BenchmarkClassifyLatency(b *testing.B) {
	c := newTestClassifier(b)
	calls := benchCalls()
	lat := make([]time.Duration, 0, 1<<16)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		c.Classify(calls[i%len(calls)])
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
	}
}
