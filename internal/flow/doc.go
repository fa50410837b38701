// Package flow keeps a session's memory of what it has seen: every value
// (e-mail address, phone number, URL and host, IBAN and account id, amount
// with currency, file path, schema-named person or organisation name,
// product or order id, secret — the last only as its salted redaction
// marker) that appeared in the user's words, in a structured mandate, in a
// tool's output or in an agent's own arguments, each with the first place it
// appeared and the trust of that place; and the spans of outputs that
// address the model instead of the user (injected instructions).
//
// The work is split so that the decision path stays cheap:
//
//   - Scanner.Output scans one observed output once, at observe time, in
//     bounded time and memory: a JSON walk capped in depth, nodes and bytes,
//     text extraction by anchored patterns, and the injection Detector, whose
//     phrasing lives in data tables per language (lang/*.yaml: English,
//     German, French, Spanish, Italian) that operators can extend. What is
//     past a cap is not examined and the scan says so (Scan.Truncated).
//   - Table is a session's value table: first source of every value, where
//     else it was seen, which outputs were injected, fingerprints of
//     sensitive outputs. It is bounded (see Limits) and says what it
//     evicted.
//   - Table.Facts builds, for one call, the facts policy sees as `flow`:
//     a map lookup per consequential value, plus session-wide facts.
//
// The package does no I/O. The store is the source of truth: an engine
// rebuilds a session's table by replaying its stored mandate, decisions and
// observations (Table.Replay… methods take them in order).
package flow
